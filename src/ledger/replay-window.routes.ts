/**
 * GET /ledger/verdicts: the verdicts of the last N minutes as the SSE stream would have sent them,
 * so a page that opens late (or reconnects past the ring) draws the recent picture with the one
 * decoder it uses for live events.
 */
import { defineRoute, type RouteDef } from '../http/route.js';
import { int, objectOf } from '../lib/params.js';
import { nodeVerdictBody, type VerdictLedger } from '../verdicts/verdicts.routes.js';
import { keyUrlFor } from './documents.js';
import { replayWindow } from './replay-window.js';
import { REPLAY_WINDOW } from './replay-window.responses.js';

const windowQuery = objectOf({
  minutes: int(1, 60, 10).description('how far back the window reaches, in minutes (1–60)'),
  limit: int(1, 5000, 2000).description('verdicts at most; when the window holds more, the newest are sent and `truncated` is true'),
});

export function replayWindowRoutes(core: VerdictLedger, publicBaseUrl: string | null): RouteDef[] {
  // the stream's key URL, so an item is byte for byte the event the stream sends for the node
  const keyUrl = publicBaseUrl ? keyUrlFor(publicBaseUrl) : null;
  return [
    defineRoute({
      method: 'GET',
      path: '/ledger/verdicts',
      uses: ['ledger', 'signer'],
      summary: 'The signed verdicts appended in the last `minutes` (newest `limit` of them) in ledger order, each the data of the SSE `verdict` event for its node',
      description:
        'The window starts at the server\u2019s time minus `minutes` and is found by binary search over the nodes\u2019 ts_utc, so a request reads at most `limit` + a few dozen nodes ' +
        'whatever the ledger\u2019s size. Only receipt nodes are included. The stream\u2019s items carry `public_key_url` only when server.publicBaseUrl is set, and so do these.',
      tag: 'ledger',
      query: windowQuery,
      pureQuery: true,
      response: REPLAY_WINDOW,
      handler({ query, ctx }) {
        const w = replayWindow(core.ledger, query.minutes, query.limit, Date.now());
        ctx.set('Cache-Control', 'no-store');
        return {
          schema: 'svc.verdict-window/v1',
          from_ts_utc: new Date(w.fromMs).toISOString(),
          to_ts_utc: new Date(w.toMs).toISOString(),
          minutes: query.minutes,
          limit: query.limit,
          count: w.nodes.length,
          truncated: w.truncated,
          first_index: w.nodes[0]?.index ?? null,
          last_index: w.nodes.at(-1)?.index ?? null,
          ledger_size: w.size,
          items: w.nodes.map((n) => nodeVerdictBody(n, core, keyUrl)),
        };
      },
    }),
  ];
}
