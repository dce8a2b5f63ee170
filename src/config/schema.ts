/** The one config schema, validated at start-up. Every key's default is here or in its feature's slice. */
import Joi from 'joi';
import { availableParallelism } from 'node:os';
import { adsbConfig, type AdsbConfig } from '../adsb/adsb.config.js';
import { alertsConfig, type AlertsConfig } from '../alerts/alerts.config.js';
import { cotConfig, type CotConfig } from '../cot/cot.config.js';
import { energyConfig, type EnergyConfig } from '../energy/energy.config.js';
import { guardConfig, type GuardConfig } from '../http/guard.config.js';
import { ledgerConfig, type LedgerConfig } from '../ledger/ledger.config.js';
import { streamConfig, type StreamConfig } from '../stream/stream.config.js';
import { takConfig, type TakConfig } from '../tak/tak.config.js';
import type { FeatureConfig } from './feature-config.js';

/** Feature slices: each feature declares its own keys, defaults and env variables next to its code. */
export const FEATURE_CONFIGS: readonly FeatureConfig[] = [ledgerConfig, streamConfig, adsbConfig, alertsConfig, cotConfig, takConfig, energyConfig, guardConfig];

export interface Config {
  env: string;
  server: { port: number; host: string; publicBaseUrl: string | null; shutdownTimeoutMs: number; keepAliveTimeoutMs: number };
  log: { level: string };
  http: { jsonLimitBytes: number; xmlLimitBytes: number; traceRingSize: number };
  pool: {
    /** 0 means one thread per available core. */
    threads: number;
    maxQueue: number;
    taskDeadlineMs: number;
    idleTimeoutMs: number;
    /** Heap cap per worker thread. V8 sizes old-space growth by it: under 2048 MB (64-bit Node) a
     * heap grows at most 1.3–2× between full collections instead of up to 4×, so allocating kernels
     * ran ~10× the full collections and 21–26 % slower. */
    maxOldGenerationSizeMb: number;
    retryAfterS: number;
    /** Threads of the signing lane (a separate pool: kernels never delay receipts). */
    signThreads: number;
    /** A running task is terminated this long after its deadline (it is answered 504 at the deadline). */
    killGraceMs: number;
    /** Kernel threads add this to their nice value (Linux; 0 = off): the main thread and signing win a busy CPU. */
    niceIncrement: number;
    /** Each kernel thread runs every kernel at its defaults when it starts (workers/warm.ts); the pool is ready after. */
    warmup: boolean;
    /** Passes over every kernel at warm-up. */
    warmupPasses: number;
  };
  ledger: LedgerConfig;
  stream: StreamConfig;
  adsb: AdsbConfig;
  alerts: AlertsConfig;
  cot: CotConfig;
  tak: TakConfig;
  energy: EnergyConfig;
  guard: GuardConfig;
}

export const configSchema = Joi.object<Config>({
  env: Joi.string().valid('development', 'production', 'test').default('development'),
  server: Joi.object({
    port: Joi.number().integer().min(0).max(65535).default(8000),
    host: Joi.string().hostname().default('0.0.0.0'),
    publicBaseUrl: Joi.string().uri({ scheme: ['http', 'https'] }).allow(null).default(null),
    shutdownTimeoutMs: Joi.number().integer().min(100).max(60000).default(4000),
    keepAliveTimeoutMs: Joi.number().integer().min(1000).max(120000).default(5000),
  }).default(),
  log: Joi.object({
    level: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  }).default(),
  http: Joi.object({
    jsonLimitBytes: Joi.number().integer().min(1024).max(16 * 1024 * 1024).default(256 * 1024),
    xmlLimitBytes: Joi.number().integer().min(1024).max(1024 * 1024).default(64 * 1024),
    traceRingSize: Joi.number().integer().min(1).max(10000).default(64),
  }).default(),
  pool: Joi.object({
    threads: Joi.number().integer().min(0).max(64).default(0),
    maxQueue: Joi.number().integer().min(1).max(100000).default(256),
    taskDeadlineMs: Joi.number().integer().min(1).max(60000).default(2000),
    idleTimeoutMs: Joi.number().integer().min(1000).default(60000),
    maxOldGenerationSizeMb: Joi.number().integer().min(32).max(4096).default(2048),
    retryAfterS: Joi.number().integer().min(1).max(3600).default(1),
    signThreads: Joi.number().integer().min(1).max(8).default(1),
    killGraceMs: Joi.number().integer().min(0).max(600_000).default(1000),
    niceIncrement: Joi.number().integer().min(0).max(19).default(10),
    warmup: Joi.boolean().default(true),
    warmupPasses: Joi.number().integer().min(1).max(50).default(16),
  }).default(),
  ...Object.fromEntries(FEATURE_CONFIGS.map((f) => [f.key, f.schema])),
})
  // the one rule that spans two slices: a shared ADS-B refresh lives in the ledger's database
  .custom((c: Config, helpers) =>
    c.adsb.sharedRefresh === 'postgres' && !c.ledger.databaseUrl ? helpers.message({ custom: 'adsb.sharedRefresh "postgres" needs ledger.databaseUrl (SVC_DATABASE_URL)' }) : c,
  )
  .required();

export function effectiveThreads(config: Config): number {
  return config.pool.threads > 0 ? config.pool.threads : Math.max(1, availableParallelism());
}
