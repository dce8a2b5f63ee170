/**
 * The platform every plugin may use, built once per app by buildApp (no module-level state, so
 * tests can build as many apps as they like). What plugins give each other is `Provides`
 * (plugin.ts), which each feature extends.
 */
import type { Config } from '../config/schema.js';
import type { RouteDef } from '../http/route.js';
import type { HealthRegistry } from './health.js';
import type { InProcessClient } from '../http/in-process.js';
import type { PluginName } from './plugin.js';
import type { WorkerPool } from './pool.js';
import type { EventLoopMonitor } from '../observability/event-loop.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Ring } from '../lib/ring.js';
import type { TraceRecord } from '../observability/traces.js';

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
