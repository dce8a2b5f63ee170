/**
 * GET /mesh/state: the mesh wire board, every status and counter read from the running service.
 * Internal component names are shown as display names; signatures are not reproduced.
 */
import { MESH_DOCTRINE } from '../core/doctrine.js';
import { definePlugin, type Built, type NoProvides, type PluginServices } from '../platform/plugin.js';
import { defineRoute } from '../http/route.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';
import { Ring } from '../lib/ring.js';
import type { StreamCore } from '../stream/stream.feature.js';
import { MESH_STATE } from './mesh.responses.js';
import { traceView } from '../observability/traces.js';

const RECENT = 32;

interface CortexEvent {
  type: string;
  at: string;
  index: number;
  decision: string;
  simulated: boolean;
}

declare module '../platform/plugin.js' {
  interface Provides {
    mesh: NoProvides;
  }
}

export const meshPlugin = definePlugin({
  name: 'mesh',
  needs: ['ledger', 'verdicts', 'stream'],
  config: [],
  build: (s: PluginServices<never>, { ledger, verdicts, stream }) => buildMesh(s, ledger, verdicts, stream),
});

function buildMesh(s: PluginServices<never>, core: LedgerCore, { verdicts }: VerdictCore, stream: StreamCore): Built<'mesh'> {
  // wire E: every verdict published on the in-process bus is recorded as a cortex event
  const cortex = new Ring<CortexEvent>(RECENT);
  verdicts.onVerdict((v) => cortex.push({ type: 'verdict', at: v.node.tsUtc, index: v.node.index, decision: v.evaluation.decision, simulated: v.simulated }));

  const document = (): Record<string, unknown> => {
    const ledger = core.ledger;
    const hub = stream.hub.stats();
    const newest = ledger.newest();
    const lastCortex = cortex.toArray().at(-1);
    const wire = (edge: string, status: string, detail: string, counters: Record<string, unknown>) => ({ edge, status, detail, counters });
    return {
      doctrine: MESH_DOCTRINE,
      wires: {
        B: wire('verdict engine -> receipt signer (immune verdict link)', 'LIVE_IN_PROCESS', `${core.signer.signatures} receipts signed in ${core.signer.batches} worker batches`, {
          events: core.signer.signatures,
          batches: core.signer.batches,
        }),
        C: wire('receipt stream -> SSE viewers', hub.viewers > 0 ? 'LIVE' : 'IDLE', `${hub.viewers} viewers, ${hub.events} events sent, ${hub.dropped} slow viewers dropped`, {
          events: hub.events,
          subscribers: hub.viewers,
          dropped: hub.dropped,
          last_at: hub.lastEventAt,
        }),
        D: wire('W3C traceparent propagation', 'LIVE_IN_PROCESS', `${s.traces.total} requests traced in process; no cross-service trace broker`, { events: s.traces.total }),
        E: wire('cortex sync (in-memory event bus, SSE)', 'LIVE_IN_PROCESS', `${cortex.total} bus events`, { events: cortex.total, last_at: lastCortex?.at ?? null }),
        F: wire('receipt ingest -> khipu ledger', 'LIVE_IN_PROCESS', `${ledger.size} nodes appended`, { events: verdicts.appended, nodes: ledger.size, last_at: newest?.tsUtc ?? null }),
      },
      recent_traces: s.traces.toArray().slice(-RECENT).map(traceView),
      cortex_events: cortex.toArray(),
      khipu_root: ledger.size ? ledger.root().toString('hex') : null,
      khipu_nodes: ledger.tail(16).map((n) => ({ index: n.index, digest: n.nodeDigest.toString('hex'), kind: n.kind, ts: n.tsUtc })),
      coexists_with: 'the /api/svc/v1 API and receipt-export doctrine v11',
      honesty: 'Counters and buffers are read from this process now; traces are in-process only; node summaries carry no signatures (see /api/svc/v1/receipt/export for signed receipts).',
    };
  };

  return {
    routes: [
      defineRoute({
        method: 'GET',
        path: '/mesh/state',
        root: true,
        uses: ['cortex-bus', 'ledger', 'sse-hub', 'trace-ring'],
        summary: 'Mesh wire board (interface 2.5) computed from live counters, traces and the ledger',
        tag: 'mesh',
        response: MESH_STATE,
        handler: () => document(),
      }),
    ],
    provides: {},
  };
}
