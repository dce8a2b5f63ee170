/** Config of the ledger, signing and verdict evaluation. */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

export interface NoFlyZone {
  id: string;
  name: string;
  /** Closed or open ring of [lat, lon] vertices (WGS-84 degrees). */
  polygon: [number, number][];
}

export type LedgerModeName = 'memory' | 'file' | 'postgres';

export interface LedgerConfig {
  /** Where nodes are persisted: memory (nothing), file (data directory), postgres (shared). */
  mode: LedgerModeName;
  /** file mode: the data directory (ledger log, lock, signing key, public keyring). */
  dataDir: string;
  /** postgres mode: connection URL (required there). */
  databaseUrl: string | null;
  /** postgres mode: the server cancels a statement (and a lock wait) after this, in ms. */
  pgStatementTimeoutMs: number;
  /** postgres mode: the client gives up on an answer after this, in ms (bounds a server that never answers). */
  pgQueryTimeoutMs: number;
  /** postgres mode: a new connection must be ready within this, in ms. */
  pgConnectTimeoutMs: number;
  /** Nodes made durable by one O_DSYNC write (or one transaction) at most. */
  groupCommitMax: number;
  /** The longest an append waits for company before its batch is written, in ms. */
  groupCommitWaitMs: number;
  /** Nodes allowed to wait for a commit; beyond it 503 + Retry-After. */
  commitQueueMax: number;
  /** Appends beyond this are refused with 503; nothing is ever evicted. */
  maxNodes: number;
  /** PKCS#8 PEM of a P-256 key; null generates an ephemeral key at start. */
  signingKeyFile: string | null;
  /** Receipts signed in one worker round trip at most. */
  signBatchMax: number;
  /** A new signed checkpoint at most this often while the log grows. */
  checkpointIntervalMs: number;
  /** The checkpoints' origin and key name; null: `<public host or drone-intel-svc>/khipu/<keyid16>`. */
  checkpointOrigin: string | null;
  /** File mode: check every record, tile and signature again in the background after each start. */
  fsckAtStart: boolean;
  noFlyZones: NoFlyZone[];
}

/** The zone the simulated flight crosses, so a fresh service shows DENY verdicts; a deployment lists its own. */
export const DEMO_NO_FLY_ZONES: readonly NoFlyZone[] = [
  {
    id: 'nfz-demo-1',
    name: 'Simulated restricted area (demo zone for the simulated flight)',
    polygon: [
      [36.215, -115.175],
      [36.215, -115.145],
      [36.24, -115.145],
      [36.24, -115.175],
    ],
  },
];

const latLon = Joi.array().ordered(Joi.number().min(-90).max(90).required(), Joi.number().min(-180).max(180).required()).length(2);

export const ledgerConfig: FeatureConfig = {
  key: 'ledger',
  schema: Joi.object({
    mode: Joi.string().valid('memory', 'file', 'postgres').default('file'),
    dataDir: Joi.string().min(1).max(4096).default('data'),
    databaseUrl: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }).allow(null).default(null),
    pgStatementTimeoutMs: Joi.number().integer().min(100).max(600_000).default(2000),
    // above the server's own timeout, so a live but slow server cancels first and says why
    pgQueryTimeoutMs: Joi.number().integer().min(200).max(600_000).greater(Joi.ref('pgStatementTimeoutMs')).default(3000),
    pgConnectTimeoutMs: Joi.number().integer().min(100).max(600_000).default(2000),
    groupCommitMax: Joi.number().integer().min(1).max(1024).default(64),
    groupCommitWaitMs: Joi.number().integer().min(0).max(50).default(0),
    commitQueueMax: Joi.number().integer().min(1).max(1_000_000).default(4096),
    maxNodes: Joi.number().integer().min(1).max(10_000_000).default(100_000),
    signingKeyFile: Joi.string().allow(null).default(null),
    signBatchMax: Joi.number().integer().min(1).max(4096).default(64),
    checkpointIntervalMs: Joi.number().integer().min(10).max(3_600_000).default(1000),
    checkpointOrigin: Joi.string().pattern(/^[^\s+]{1,255}$/u).allow(null).default(null),
    fsckAtStart: Joi.boolean().default(true),
    noFlyZones: Joi.array()
      .items(Joi.object({ id: Joi.string().pattern(/^[a-z0-9-]{1,64}$/).required(), name: Joi.string().max(128).required(), polygon: Joi.array().items(latLon).min(3).max(1000).required() }))
      .max(100)
      .default(DEMO_NO_FLY_ZONES),
  })
    // required: an absent section (all defaults) is not postgres mode
    .when(Joi.object({ mode: Joi.valid('postgres').required() }).unknown().required(), {
      then: Joi.object({ databaseUrl: Joi.required().invalid(null), signingKeyFile: Joi.required().invalid(null) }),
    })
    .default(),
  env: {
    SVC_LEDGER_MAX_NODES: 'maxNodes',
    SVC_SIGNING_KEY_FILE: 'signingKeyFile',
    SVC_LEDGER_MODE: 'mode',
    SVC_DATA_DIR: 'dataDir',
    SVC_CHECKPOINT_INTERVAL_MS: 'checkpointIntervalMs',
    SVC_CHECKPOINT_ORIGIN: 'checkpointOrigin',
    SVC_LEDGER_FSCK_AT_START: 'fsckAtStart',
    SVC_DATABASE_URL: 'databaseUrl',
    SVC_PG_STATEMENT_TIMEOUT_MS: 'pgStatementTimeoutMs',
    SVC_PG_QUERY_TIMEOUT_MS: 'pgQueryTimeoutMs',
    SVC_PG_CONNECT_TIMEOUT_MS: 'pgConnectTimeoutMs',
    SVC_LEDGER_GROUP_COMMIT_MAX: 'groupCommitMax',
    SVC_LEDGER_GROUP_COMMIT_WAIT_MS: 'groupCommitWaitMs',
  },
};
