/**
 * The SSE hub of verdicts, set up from the stream config: per-client replay budgets, the kernel
 * send-queue probe, and resumes older than the ring rebuilt from the ledger mirror.
 */
import { ClientAddresses } from '../http/client-address.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import type { StreamServices, StreamSources } from './sources.js';
import { nodeVerdictBody } from '../verdicts/verdicts.routes.js';
import { SseHub } from './hub.js';
import { procSendQueueProbe } from './tcp-queue.js';

/** One verdict as an SSE event. */
function wire(id: number, data: unknown): string {
  return `id: ${id}\nevent: verdict\ndata: ${JSON.stringify(data)}\n\n`;
}

export function createVerdictHub(s: StreamServices, core: StreamSources, keyUrl: string | null): SseHub {
  const cfg = s.config.stream;
  // replay budgets count per client as the other per-address limits do (trusted proxies, IPv6 /64)
  const clients = new ClientAddresses(s.config.guard.trustProxy);
  return new SseHub({
    maxViewers: cfg.maxViewers,
    ringSize: cfg.ringSize,
    heartbeatMs: cfg.heartbeatMs,
    sendBufferBytes: cfg.sendBufferBytes,
    retryMs: 2000,
    replayMaxBytes: cfg.replayMaxBytes,
    replayBytesPerAddressPerS: cfg.replayBytesPerAddressPerS,
    clientOf: (res) => clients.of(res.req.socket.remoteAddress, res.req.headers['x-forwarded-for'] as string | undefined),
    sendQueue: procSendQueueProbe(),
    lagCheckMs: cfg.lagCheckMs,
    newestIndex: () => (core.ledger.size ? core.ledger.size - 1 : null),
    // replicas apply each other's nodes within the catch-up poll (a second) after a NOTIFY is missed
    aheadGraceMs: core.store.mode === 'postgres' ? 3000 : 0,
    // older than the ring: rebuilt from the ledger mirror, which every replica holds whole
    backfill: (from, to) => {
      const out: { id: number; wire: () => string }[] = [];
      for (let i = from; i < to; i++) {
        const n = core.ledger.get(i);
        if (n?.kind === RECEIPT_KIND) out.push({ id: i, wire: () => wire(i, nodeVerdictBody(n, core, keyUrl)) });
      }
      return out;
    },
  });
}
