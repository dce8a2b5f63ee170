/** The verdict body (POST /verdict; also each SSE `verdict` event and the edge batch). */
import { AXES } from './axes.js';
import { SOURCES } from './telemetry.js';
import { BREACH, DSSE, INCLUSION_PROOF } from '../ledger/ledger.responses.js';
import { bool, hex64, int, isoTime, nullable, num, oneOf, shape, str, listOf } from '../http/response-schema.js';

export const DECISION = oneOf('ALLOW', 'REVIEW', 'DENY').description('ALLOW when lambda ≥ 0.90, REVIEW when ≥ 0.70 (lambda_floor), else DENY');

/** The 13 trust axes, each in [0, 1]. */
export const AXES_SCHEMA = shape(Object.fromEntries(AXES.map((a) => [a.name, num().min(0).max(1).description(`${a.doc} (weight ${a.weight}, breach under ${a.limit})`)])));

/** The telemetry frame decided: the posted fields, keys and values as sent (absent ones stay absent). */
const FRAME = shape({
  track_id: str(),
  source: oneOf(...SOURCES).optional(),
  lat: num().min(-90).max(90),
  lon: num().min(-180).max(180),
  alt_m: num().optional(),
  speed_mps: num().optional(),
  heading_deg: num().optional(),
  rssi_dbm: num().optional(),
  id_authenticated: bool().optional(),
  timestamp_skew_s: num().optional(),
  n_observations: int().optional(),
  ts_utc: str().optional(),
});

export const VERDICT = shape({
  schema: oneOf('svc.verdict/v1'),
  track_id: str(),
  source: nullable(oneOf(...SOURCES)),
  decision: DECISION,
  lambda: num().min(0).max(1).description('min(lambda_empirical, PAC-Bayes certified floor)'),
  lambda_empirical: num().min(0).max(1).description('weighted geometric mean of the axes'),
  lambda_floor: num().min(0).max(1),
  pac_bayes: shape({ n: int().min(1), kl_posterior_prior: num(), delta: num(), bound: num().min(0), certified_floor: num().min(0).max(1) }),
  axes: AXES_SCHEMA,
  geofence: shape({
    inside: nullable(bool()).description('computed from the configured no-fly polygons; null when none is configured'),
    zone: nullable(str()),
    distance_m: nullable(num().min(0)).description('to the nearest zone edge'),
  }),
  breaches: listOf(BREACH),
  frame: nullable(FRAME).description('the telemetry frame as validated, which hashes (RFC 8785 JSON, SHA-256) to the signed receipt subject frame_sha256; null for a node stored without its detail'),
  simulated: bool(),
  ts_utc: isoTime(),
  receipt: shape({ dsse: DSSE, payload_b64: str(), keyid: hex64(), public_key_url: str().optional() }),
  ledger: shape({
    index: int().min(0),
    node_digest: hex64(),
    prev: hex64(),
    ledger_size: int().min(1),
    khipu_root: hex64(),
    inclusion_proof: INCLUSION_PROOF,
    checkpoint: shape({
      origin: str(),
      newest_size: nullable(int().min(0)).description('size of the newest signed checkpoint, null before the first'),
      covers: bool().description('whether that checkpoint covers this node'),
      covered_within_ms: int().min(0).description('0 when covered; else the next checkpoint, which covers it, is signed within this many ms'),
      proof_url: str().description('GET: the C2SP tlog-proof of this node against a signed checkpoint (waits for the covering one)'),
    }),
  }),
});

