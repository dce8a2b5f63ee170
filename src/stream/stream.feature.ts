/**
 * The live parts built on the ledger: one shared simulated flight that runs only while somebody
 * watches, the SSE hub that fans its verdicts out, and the edge scene of recent verdicts.
 */
import { definePlugin, type Built } from '../platform/plugin.js';
import type { StreamServices, StreamSources } from './sources.js';
import { keyUrlFor } from '../ledger/documents.js';
import type { TrackSource } from '../cot/tracks.js';
import { WriteTokens } from '../http/write-guard.js';
import { FlightRunner } from './flight-runner.js';
import { FlightDemand, FlightLeadership } from './flight-schedule.js';
import type { SseHub } from './hub.js';
import { EdgeScene } from './scene.js';
import { feedVerdicts, flightTracks } from './scene-feed.js';
import { registerStreamMetrics } from './stream-metrics.js';
import { streamRoutes } from './stream.routes.js';
import { createVerdictHub } from './verdict-hub.js';

export { FlightRunner } from './flight-runner.js';
export { FlightLeadership } from './flight-schedule.js';

export interface StreamCore {
  hub: SseHub;
  scene: EdgeScene;
  flight: FlightRunner;
}

declare module '../platform/plugin.js' {
  interface Provides {
    stream: StreamCore;
  }
}

export const streamPlugin = definePlugin({
  name: 'stream',
  needs: ['ledger', 'verdicts', 'cot'],
  config: ['stream', 'ledger', 'guard', 'pool', 'server'],
  build: (s: StreamServices, { ledger, verdicts, cot }) => buildStream(s, { ledger: ledger.ledger, store: ledger.store, checkpoints: ledger.checkpoints, verdicts: verdicts.verdicts }, (name, source) => cot.tracks.register(name, source)),
});

function buildStream(s: StreamServices, core: StreamSources, registerTrackSource: (name: string, source: TrackSource) => void): Built<'stream'> {
  const cfg = s.config.stream;
  const keyUrl = s.config.server.publicBaseUrl ? keyUrlFor(s.config.server.publicBaseUrl) : null;
  const hub = createVerdictHub(s, core, keyUrl);
  const scene = new EdgeScene(cfg.sceneSize, s.config.ledger.noFlyZones, cfg.sensors);
  const flight = new FlightRunner(core, cfg.tickMs, s);
  const leadership = new FlightLeadership(core.store, flight);
  const demand = new FlightDemand(leadership, cfg.flight, new WriteTokens(s.config.guard.writeTokens));
  const onPause: FlightRunner['onPause'] = (paused, detail) =>
    hub.notice(paused ? 'paused' : 'resumed', {
      reason: paused ? 'the simulated flight is paused: the ledger is near its cap, the rest is kept for real verdicts' : 'the simulated flight resumed',
      ...detail,
    });
  flight.onPause = onPause;
  if (cfg.flight === 'always') leadership.want();
  // the drones are CoT sample tracks too
  if (cfg.flight !== 'off') registerTrackSource('flight', flightTracks(flight, cfg.tickMs));
  registerStreamMetrics(s, hub);
  feedVerdicts(core, scene, hub, keyUrl);
  return {
    routes: streamRoutes({
      hub,
      scene,
      verdicts: core.verdicts,
      ledger: core.ledger,
      maxFrames: cfg.maxFramesPerRequest,
      retryAfterS: s.config.pool.retryAfterS,
      watchFlight: (ctx) => demand.watch(ctx),
    }),
    drain() {
      // the flight first, so nothing is appended while the streams end with `event: shutdown`
      leadership.unwant();
      hub.close();
    },
    close() {
      leadership.close();
      hub.close();
    },
    provides: { hub, scene, flight },
  };
}
