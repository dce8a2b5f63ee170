/**
 * Everything a feature may depend on, built once per app by buildApp (no module-level state, so
 * tests can build as many apps as they like). Features receive this and return their routes.
 */
import type { Config } from './config/schema.js';
import type { HealthRegistry } from './core/health.js';
import type { Enforcement } from './core/doctrine.js';
import type { WorkerPool } from './kernels/pool.js';
import type { EventLoopMonitor } from './observability/event-loop.js';
import type { Logger } from './observability/logger.js';
import type { Metrics } from './observability/metrics.js';
import type { Ring, TraceRecord } from './observability/traces.js';

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
  /** Doctrine enforcement status from the last evidence refresh. */
  enforcement(): Enforcement;
}
