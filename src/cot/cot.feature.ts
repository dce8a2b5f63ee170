/**
 * The CoT plugin: the sample maritime tracks, the service (export, ingest store, validation) and
 * its routes. It provides the track registry (other plugins add tracks: the simulated flight) and the
 * track counts that evidence and readiness read. In postgres mode the ingest store is the one the
 * replicas share on the ledger's database (shared-store.ts); otherwise it lives in this process.
 */
import { hostname } from 'node:os';
import { definePlugin, type Built, type PluginServices } from '../platform/plugin.js';
import { cotRoutes } from './cot.routes.js';
import { CotService } from './service.js';
import type { PreparedCot } from '../lib/cot/prepare.js';
import { SharedIngestStore } from './shared-store.js';
import { TakOutputsBoard, type CotStatus } from './status.js';
import { SAMPLE_MARITIME, TrackRegistry } from './tracks.js';

declare module '../platform/plugin.js' {
  interface Provides {
    /** `tracks`: other plugins register track sources (the simulated flight's drones); `takOutputs`: the TAK feature reports its outputs' state on it. */
    cot: { service: CotService; status: CotStatus; tracks: TrackRegistry; takOutputs: TakOutputsBoard };
  }
}

/** Its own slice, the XML body limit, and in postgres mode the ledger's database and the pool's Retry-After. */
type CotServices = PluginServices<'cot' | 'http' | 'ledger' | 'pool'>;

export const cotPlugin = definePlugin({ name: 'cot', needs: [], config: ['cot', 'http', 'ledger', 'pool'], build: buildCot });

async function buildCot(s: CotServices): Promise<Built<'cot'>> {
  const cfg = s.config.cot;
  const tracks = new TrackRegistry();
  tracks.register('sample-maritime', () => SAMPLE_MARITIME);
  const shared = await sharedStore(s);
  // parsing, validation and serialisation of an ingested body run in a kernel thread
  const service = new CotService(tracks, cfg, Date.now, async (input) => (await s.pool.run<PreparedCot>({ kind: 'cot', ...input })).value, shared);
  const takOutputs = new TakOutputsBoard();
  return {
    routes: cotRoutes(service, s.config.http.xmlLimitBytes, cfg.limits.maxUidLen, () => s.routeTable(), takOutputs),
    provides: {
      service,
      status: { tracksTotal: () => service.tracksTotal(), tracksCotValid: () => service.tracksCotValid() },
      tracks,
      takOutputs,
    },
    close: () => shared?.close(),
  };
}

/** postgres mode: the table every replica reads and writes; null where this process is alone with its store. */
async function sharedStore(s: CotServices): Promise<SharedIngestStore | null> {
  const { cot, ledger, pool } = s.config;
  if (ledger.mode !== 'postgres' || !ledger.databaseUrl) return null;
  return SharedIngestStore.open({
    url: ledger.databaseUrl,
    replicaId: `${hostname()}:${process.pid}`,
    maxStored: cot.maxStoredTracks,
    maxBytes: cot.maxStoredBytes,
    retryAfterS: pool.retryAfterS,
    statementTimeoutMs: ledger.pgStatementTimeoutMs,
    queryTimeoutMs: ledger.pgQueryTimeoutMs,
    connectTimeoutMs: ledger.pgConnectTimeoutMs,
    log: s.log,
  });
}
