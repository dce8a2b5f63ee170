/** GET /stream/verdicts (SSE) and GET/POST /edge/3d. */
import Joi from 'joi';
import type { Context } from 'koa';
import { defineRoute, type RouteDef } from '../http/route.js';
import { chargedPerNode } from '../http/write-guard.js';
import { Errors } from '../http/errors.js';
import { objectOf, optional, typed } from '../lib/params.js';
import type { Ledger } from '../ledger/ledger.js';
import { telemetryFrameSchema, type TelemetryFrame } from '../verdicts/telemetry.js';
import type { VerdictService } from '../verdicts/verdict-service.js';
import { DECIDES_VERDICTS } from '../verdicts/verdicts.routes.js';
import { SseHub } from './hub.js';
import type { EdgeScene } from './scene.js';
import { SCENE, SCENE_AFTER_BATCH, SSE } from './stream.responses.js';

export interface StreamDeps {
  hub: SseHub;
  scene: EdgeScene;
  verdicts: VerdictService;
  ledger: Ledger;
  maxFrames: number;
  retryAfterS: number;
  /** Counts a viewer that may start the simulated flight (with write tokens set, only one bearing a token). */
  watchFlight: (ctx: Context) => void;
}

const LAST_EVENT_ID = /^\d{1,15}$/;

export function streamRoutes({ hub, scene, verdicts, ledger, maxFrames, retryAfterS, watchFlight }: StreamDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/stream/verdicts',
      // opening the stream starts the simulated flight, whose verdicts are appended too
      uses: ['sse-hub', ...DECIDES_VERDICTS.uses],
      mutates: DECIDES_VERDICTS.mutates,
      cost: 'stream',
      summary:
        'Server-Sent Events: every signed verdict (event: verdict, id = ledger index) while the simulated flight runs; resumes from Last-Event-ID, ' +
        'or from ?last_event_id= for clients that cannot set the header (a browser re-creating its EventSource after a 503); the header wins',
      tag: 'stream',
      produces: 'text/event-stream',
      response: SSE,
      query: objectOf({
        last_event_id: optional(Joi.string().pattern(LAST_EVENT_ID)).description('resume after this ledger index, for clients that cannot send the Last-Event-ID header (the header wins)'),
      }),
      errors: [503],
      handler({ ctx, query }) {
        if (ctx.method === 'HEAD') {
          // the headers a viewer would get, and nothing else: not a viewer, never starts the flight
          ctx.status = 200;
          ctx.set(SseHub.HEADERS);
          return undefined;
        }
        if (hub.full) throw Errors.capacity('Too many stream viewers', retryAfterS);
        const header = ctx.get('last-event-id').trim();
        const param = query.last_event_id;
        const raw = header !== '' ? header : (param ?? '');
        const lastId = LAST_EVENT_ID.test(raw) ? Number(raw) : null;
        ctx.status = 200; // for the access log and metrics; Koa does not write this response
        ctx.respond = false;
        hub.attach(ctx.res, lastId, { 'Content-Security-Policy': "default-src 'none'" }, raw);
        watchFlight(ctx);
        return undefined;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/edge/3d',
      uses: ['scene-buffer'],
      summary: '3-D edge scene built from the ring buffer of recent verdicts (ENU metres around the sensor site)',
      tag: 'stream',
      response: SCENE,
      handler() {
        return scene.document(ledger.size);
      },
    }),
    // a batch costs the write quota one ledger node per frame
    chargedPerNode(defineRoute({
      method: 'POST',
      path: '/edge/3d',
      ...DECIDES_VERDICTS,
      cost: 'kernel',
      write: true,
      summary: 'Evaluate, sign and append a batch of telemetry frames (all or nothing), then return the scene',
      tag: 'stream',
      body: objectOf({ frames: typed<TelemetryFrame[]>(Joi.array().items(telemetryFrameSchema).min(1).max(maxFrames).required()) }),
      errors: [413, 415, 503],
      response: SCENE_AFTER_BATCH,
      async handler({ body }) {
        const appended = await verdicts.decideAll(body.frames);
        return {
          ...scene.document(ledger.size),
          appended: appended.map((v) => ({ track_id: v.frame.track_id, decision: v.evaluation.decision, lambda: v.evaluation.lambda, ledger_index: v.node.index, node_digest: v.node.nodeDigest.toString('hex') })),
        };
      },
    }), (body) => body.frames.length),
  ];
}
