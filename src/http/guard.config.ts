/**
 * Config of the service's guards against hostile and heavy clients: connection and request
 * timeouts, the connection caps (in all and per address), write tokens, the write quotas (per
 * token, and per address for anonymous writes) with the proxies trusted to name the client, CoT
 * export bounds, and how often shed requests are summarised in the log. Its own slice, so it
 * merges without touching the other features' keys.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

/**
 * The largest legal request line: a `request` parameter (kernels, khipu DAG) may be 4,096
 * characters (code points), and one character can take 4 UTF-8 bytes, each sent as `%XX` in the
 * query: 49,152 bytes for the value alone. The smallest header limit allowed leaves room for it,
 * the path and ordinary headers; Node's own default (16 KiB) does not, and answered such a request 431.
 */
export const MIN_HEADER_BYTES = 56 * 1024;

export interface GuardConfig {
  /** Node `server.headersTimeout`: the request head must arrive within this (408 after). */
  headersTimeoutMs: number;
  /** Node `server.requestTimeout`: the whole request (head and body) must arrive within this. */
  requestTimeoutMs: number;
  /** Node `maxHeaderSize`: request line plus headers at most (a JSON 431 beyond it). */
  maxHeaderBytes: number;
  /** A route reading a body gives up after this (408, connection closed). */
  bodyTimeoutMs: number;
  /** Open connections at most; beyond it new sockets get a 503 and are closed. */
  maxConnections: number;
  /** Open connections from one client address at most (trusted proxies excepted); beyond it the same 503. */
  maxConnectionsPerAddress: number;
  /** Comma-separated bearer tokens for the write routes; empty = writes need no token. Kept only as SHA-256 digests. */
  writeTokens: string;
  /** Ledger nodes per second one write token may append, sustained (a write that appends none counts 1); 0 = unlimited. */
  writeRatePerS: number;
  /** Ledger nodes one write token may append at once above the sustained rate. */
  writeBurst: number;
  /** Ledger nodes per second one client address may append without a token; 0 = unlimited. */
  addressWriteRatePerS: number;
  /** Ledger nodes one client address may append at once without a token. */
  addressWriteBurst: number;
  /** Proxies (addresses or CIDR ranges) whose `X-Forwarded-For` names the client; empty = the header is never read. */
  trustProxy: readonly string[];
  /** Shed requests (503/504) are logged as one summary line per interval, never one line each. */
  shedLogIntervalMs: number;
  /** A client shed again before its Retry-After ran out gets that answer after the rest of the wait, at most this long (0: never held). */
  shedHoldMaxMs: number;
  /** Sheds per second that add one second to a shed answer's Retry-After. */
  shedRetryStepPerS: number;
  /** Retry-After of a shed answer at most, however high the shed rate. */
  shedRetryAfterMaxS: number;
  /** The simulated flight pauses once the ledger holds this share of its cap (the rest is for real verdicts). */
  flightPauseRatio: number;
}

/** A token `Authorization: Bearer` can carry as write-guard.ts reads it; one it cannot (a space, a placeholder left in) would refuse every write. */
const WRITE_TOKEN = /^[\x21-\x7e]{1,512}$/;

/** Each comma-separated token must be one a client can present; the message never echoes a token. */
function checkTokens(value: string, helpers: Joi.CustomHelpers): unknown {
  const tokens = value.split(',').map((t) => t.trim()).filter(Boolean);
  const bad = tokens.findIndex((t) => !WRITE_TOKEN.test(t));
  if (bad < 0) return value;
  return helpers.message({ custom: `token ${bad + 1} of ${tokens.length} is not 1–512 visible ASCII characters without spaces (what an Authorization: Bearer header carries)` });
}

const proxyList = Joi.array().items(Joi.string().ip({ cidr: 'optional' })).max(256);

/** `SVC_TRUST_PROXY=10.0.0.5,10.1.0.0/16` (comma-separated). */
function parseProxyEnv(value: string, helpers: Joi.CustomHelpers): unknown {
  const { value: parsed, error } = proxyList.validate(value.split(',').map((s) => s.trim()).filter(Boolean));
  if (error) return helpers.message({ custom: `must be comma-separated addresses or CIDR ranges (${error.message})` });
  return parsed;
}

export const guardConfig: FeatureConfig = {
  key: 'guard',
  schema: Joi.object({
    headersTimeoutMs: Joi.number().integer().min(100).max(300_000).default(10_000),
    requestTimeoutMs: Joi.number().integer().min(100).max(3_600_000).default(30_000),
    bodyTimeoutMs: Joi.number().integer().min(50).max(300_000).default(10_000),
    maxHeaderBytes: Joi.number().integer().min(MIN_HEADER_BYTES).max(1024 * 1024).default(64 * 1024),
    maxConnections: Joi.number().integer().min(1).max(1_000_000).default(4096),
    maxConnectionsPerAddress: Joi.number().integer().min(1).max(1_000_000).default(1024),
    writeTokens: Joi.string().allow('').max(65_536).custom(checkTokens).default(''),
    writeRatePerS: Joi.number().min(0).max(1_000_000).default(0),
    writeBurst: Joi.number().integer().min(1).max(1_000_000).default(1024),
    addressWriteRatePerS: Joi.number().min(0).max(1_000_000).default(0),
    addressWriteBurst: Joi.number().integer().min(1).max(1_000_000).default(1024),
    trustProxy: Joi.alternatives().try(proxyList, Joi.string().custom(parseProxyEnv)).default([]),
    shedLogIntervalMs: Joi.number().integer().min(100).max(3_600_000).default(10_000),
    shedHoldMaxMs: Joi.number().integer().min(0).max(60_000).default(2000),
    shedRetryStepPerS: Joi.number().integer().min(1).max(1_000_000).default(100),
    shedRetryAfterMaxS: Joi.number().integer().min(1).max(3600).default(30),
    flightPauseRatio: Joi.number().greater(0).max(1).default(0.9),
  }).default(),
  env: {
    SVC_HEADERS_TIMEOUT_MS: 'headersTimeoutMs',
    SVC_REQUEST_TIMEOUT_MS: 'requestTimeoutMs',
    SVC_BODY_TIMEOUT_MS: 'bodyTimeoutMs',
    SVC_MAX_HEADER_BYTES: 'maxHeaderBytes',
    SVC_MAX_CONNECTIONS: 'maxConnections',
    SVC_MAX_CONNECTIONS_PER_ADDRESS: 'maxConnectionsPerAddress',
    SVC_WRITE_TOKENS: 'writeTokens',
    SVC_WRITE_RATE_PER_S: 'writeRatePerS',
    SVC_WRITE_BURST: 'writeBurst',
    SVC_ADDRESS_WRITE_RATE_PER_S: 'addressWriteRatePerS',
    SVC_ADDRESS_WRITE_BURST: 'addressWriteBurst',
    SVC_TRUST_PROXY: 'trustProxy',
    SVC_SHED_HOLD_MAX_MS: 'shedHoldMaxMs',
    SVC_FLIGHT_PAUSE_RATIO: 'flightPauseRatio',
  },
};
