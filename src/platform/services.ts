/**
 * The platform every plugin may use, built once per app by buildApp (no module-level state, so
 * tests can build as many apps as they like). What plugins give each other is in src/plugin.ts.
 */
import type { Config } from '../config/schema.js';
import type { RouteDef } from '../http/route.js';
import type { HealthRegistry } from '../core/health.js';
import type { InProcessClient } from '../http/in-process.js';
import type { PluginName } from './plugin.js';
import type { WorkerPool } from './pool.js';
import type { EventLoopMonitor } from '../observability/event-loop.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Ring } from '../lib/ring.js';
import type { TraceRecord } from '../observability/traces.js';

/** Published by the ADS-B feature, read by health, posture and evidence views. */
export interface AdsbStatus {
  live: boolean;
  /** Age of the snapshot being served, null before the first successful fetch. */
  snapshotAgeS: number | null;
  aircraft: number;
  providers: {
    name: string;
    url: string;
    breaker: 'closed' | 'open' | 'half-open';
    consecutiveFailures: number;
    lastOkAt: string | null;
    lastError: string | null;
    lastStatus: number | null;
  }[];
}

/** Published by the ledger feature. */
export interface LedgerStatus {
  size(): number;
  maxNodes: number;
  /** Hex RFC 9162 root over the node digests, null when empty. */
  root(): string | null;
  /** Recomputes the whole chain and Merkle root from the stored receipts. */
  verifyIntegrity(): { verified: boolean; nodes: number; root: string | null; reason: string };
  keyid: string;
  ephemeralKey: boolean;
  /** ledger.mode, and whether acknowledged nodes survive a restart. */
  mode: 'memory' | 'file' | 'postgres';
  durable: boolean;
}

/** Published by the CoT feature. */
export interface CotStatus {
  tracksTotal(): number;
  tracksCotValid(): number;
}

export interface Services {
  config: Readonly<Config>;
  log: Logger;
  metrics: Metrics;
  eventLoop: EventLoopMonitor;
  pool: WorkerPool;
  traces: Ring<TraceRecord>;
  health: HealthRegistry;
  startedAt: Date;
  /** Identifies this build: package version plus git commit when known. */
  releaseId: string;
  /** The app's full route table (available once buildApp has assembled it). */
  routeTable(): readonly RouteDef[];
  /** Names of the plugins built into this app, in build order (available once they are built). */
  plugins(): readonly PluginName[];
  /** GET requests through this app's own route table without a socket (probes, evidence, posture). */
  readonly inProcess: InProcessClient;
  /** Resolves once every route schema is described (done in slices after start-up, see http/describe.ts). */
  routesDescribed(): Promise<void>;
}
