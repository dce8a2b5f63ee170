/** Cursor-on-Target routes: export, export of one track, ingest and status. */
import { Joi } from '../lib/code-points.js';
import { Errors } from '../http/errors.js';
import { objectOf, required } from '../lib/params.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Readable } from 'node:stream';
import type { CotService } from './service.js';
import { cotPaths, statusDocument, TakOutputsBoard } from './status.js';
import { EVENT_XML, EXPORT_XML, INGEST, STATUS } from './cot.responses.js';

export const INGEST_TYPES = ['application/xml', 'text/xml', 'application/cot+xml'] as const;
const UTF8_CHARSETS = new Set(['', 'utf-8', 'utf8', 'us-ascii']);
const XML = 'application/xml; charset=utf-8';

/** `routeTable`: the app's mounted routes, read by the status document. */
export function cotRoutes(cot: CotService, xmlLimitBytes: number, maxUidLen: number, routeTable: () => readonly RouteDef[], outputs: TakOutputsBoard = new TakOutputsBoard()): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/cot/export',
      uses: ['cot'],
      summary: 'CoT 2.0 XML for every track (sample tracks, marked simulated, then ingested events) wrapped in <events>',
      tag: 'cot',
      produces: 'application/xml',
      response: EXPORT_XML,
      handler({ ctx }) {
        ctx.type = XML;
        ctx.set('Cache-Control', 'no-store');
        // streamed piece by piece: the document is never built as one string on the main thread
        return Readable.from(cot.exportChunks(), { objectMode: false, highWaterMark: 64 * 1024 });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/cot/export/:track_id',
      uses: ['cot'],
      summary: 'CoT 2.0 XML <event> for one track: a sample track id (e.g. mar-001) or the uid the export prints for it (svc-track-mar-001), or the uid of an ingested event',
      tag: 'cot',
      params: objectOf({
        track_id: required(Joi.string().min(1).max(maxUidLen)).description('A sample track id (e.g. mar-001), the uid the export prints for it (svc-track-mar-001), or the uid of an ingested event'),
      }),
      produces: 'application/xml',
      response: EVENT_XML,
      errors: [404],
      handler({ params, ctx }) {
        const xml = cot.exportOne(params.track_id);
        if (xml === null) throw Errors.itemNotFound('track', params.track_id);
        ctx.type = XML;
        return xml;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/cot/ingest',
      uses: ['cot', 'worker-pool'],
      mutates: ['cot'],
      write: true,
      summary:
        'Ingest one CoT XML event (application/xml, text/xml or application/cot+xml; UTF-8; at most the XML body limit). No DOCTYPE, ' +
        'one root, depth/element/attribute limits; answers with the parsed event and its schema-shape validation; a valid event becomes a track. ' +
        'Refused (422): an empty uid or one with control, bidi or zero-width characters; time or start more than cot.maxFutureSkewS (60 s) ahead of the clock, ' +
        'stale more than cot.maxStaleAheadS (366 days) ahead; a uid first stored with another write token (cot_uid_owned)',
      tag: 'cot',
      body: 'text',
      bodyTypes: INGEST_TYPES,
      bodyLimitBytes: xmlLimitBytes,
      // the parse runs in a kernel thread, admitted (or shed) like a kernel
      errors: [413, 415, 503, 504],
      response: INGEST,
      handler({ body, ctx }) {
        const charset = (ctx.request.charset ?? '').toLowerCase();
        if (!UTF8_CHARSETS.has(charset)) throw Errors.unsupportedMediaType(ctx.get('content-type'), INGEST_TYPES.map((t) => `${t}; charset=utf-8`));
        ctx.set('Cache-Control', 'no-store');
        // the write guard names the token a write came with; no token (none configured) is null
        const writer: unknown = ctx.state.writer;
        return cot.ingest(body, typeof writer === 'string' ? writer : null);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/cot/status',
      uses: ['cot'],
      summary: 'CoT status document (interface 2.4): counts computed from the real export; each TAK output wired or not, with its live state',
      tag: 'cot',
      response: STATUS,
      handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return statusDocument(cot.tracksTotal(), cot.tracksCotValid(), cotPaths(routeTable()), outputs.read());
      },
    }),
  ];
}
