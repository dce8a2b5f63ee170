/**
 * Response schemas of the ledger routes: the DSSE envelope, the readiness object, the receipt
 * export, the published key, a verification and the DAG view.
 */
import { PAYLOAD_TYPE } from './dsse.js';
import { RECEIPT_DOCTRINE } from '../core/doctrine.js';
import Joi from 'joi';
import { bool, hex64, int, isoTime, listOf, nullable, num, oneOf, openShape, shape, str } from '../http/response-schema.js';

const B64 = (): ReturnType<typeof str> => str().pattern(/^[A-Za-z0-9+/]*={0,2}$/);

/** One breach of the receipt: the geofence rule with its zone, or an axis under its limit. */
export const BREACH = openShape({
  rule: oneOf('geofence', 'axis'),
  zone: str().optional(),
  axis: str().optional(),
  value: num().optional(),
  limit: num().optional(),
});

/** The DSSE envelope of a receipt. */
export const DSSE = shape({
  payloadType: oneOf(PAYLOAD_TYPE),
  payload: B64().min(1).description('base64 of the signed receipt payload'),
  signatures: listOf(shape({ sig: B64().description('ASN.1 DER ECDSA P-256 SHA-256 signature, standard base64'), keyid: hex64() })).min(1),
  signed: oneOf(true),
  keyid: hex64(),
  honesty: str(),
  _dsse: oneOf('DSSEv1'),
  _pae_sha256: hex64().description('SHA-256 of the DSSE pre-authentication encoding'),
});

/** The decoded signed payload: what `payload_b64` holds. */
export const RECEIPT_PAYLOAD = shape({
  doctrine: str(),
  kind: str().description('e.g. counter_uas_decision'),
  payload: shape({
    breaches: listOf(BREACH),
    decision: oneOf('ALLOW', 'REVIEW', 'DENY'),
    geofence_inside: nullable(bool()).description('null when no no-fly zone is configured'),
    lambda: num().min(0).max(1),
    lambda_floor: num().min(0).max(1),
  }),
  schema: oneOf('svc.receipt/v1'),
  subject: shape({
    frame_sha256: hex64().description('SHA-256 of the telemetry frame as posted, in RFC 8785 canonical JSON (keys sorted, no whitespace, ECMAScript number form)'),
    track_id: str().description('the frame\u2019s track_id'),
  })
    .optional()
    .description('what the verdict decided (an added member: receipts signed before it have none; readers of the other members need not know it)'),
  ts_utc: isoTime(),
});

/** The ledger readiness object. */
export const READINESS = shape({
  schema: oneOf('svc.ledger-readiness/v1'),
  durability_state: oneOf('EPHEMERAL', 'DURABLE', 'DEGRADED', 'CORRUPT'),
  requested_mode: oneOf('EPHEMERAL', 'FILE', 'POSTGRES'),
  ready: bool(),
  production_ready: bool(),
  production_readiness_basis: oneOf('NOT_APPLICABLE', 'DURABLE_STORE_AND_PERSISTED_KEY', 'EPHEMERAL_SIGNING_KEY', 'NOT_READY'),
  readiness_probe: oneOf('READ_ONLY'),
  persistence_scope: str().description('e.g. PROCESS_MEMORY'),
  startup_state: oneOf('READY', 'DEGRADED', 'FAILED'),
  adapter_configured: bool(),
  adapter_state: str().description('NOT_APPLICABLE in memory mode; the store state (READY, …) otherwise'),
  integrity: shape({ state: oneOf('VERIFIED', 'FAILED'), verified: bool(), nodes: int().min(0), root: hex64() }),
  replay: shape({
    state: oneOf('NOT_APPLICABLE', 'COMPLETE', 'STOPPED_AT_DAMAGE'),
    nodes: int().min(0),
    ms: int().min(0).optional().description('durable modes'),
    first_bad_index: nullable(int().min(0)).optional().description('durable modes'),
    from_checkpoint: int().min(0).optional().description('durable modes: nodes opened at the last persisted checkpoint (the root of their tiles checked against it); only the nodes after them were read and checked at start'),
  }),
  fsck: shape({
    state: oneOf('OFF', 'RUNNING', 'PASSED', 'DAMAGED', 'ERROR'),
    checked: int().min(0).description('nodes whose record and signature are checked so far'),
    total: int().min(0).description('nodes in the range checked (estimated while reading)'),
    first_bad_index: nullable(int().min(0)),
    first_bad_reason: nullable(str()),
    entries_per_second: nullable(int().min(0)),
    error: nullable(str()).description('why the check could not run to its end (state ERROR)'),
  })
    .optional()
    .description('file mode: after a start that opened at a checkpoint, every record, tile and signature of the log as it was then, checked again in the background (ledger.fsckAtStart); absent when start-up read every record'),
  recovery: shape({
    attempts: int().min(0),
    retry_after_s: num().min(0),
    trimmed_bytes: int().min(0).optional(),
    trimmed_reason: str().optional(),
  }),
  reason: str(),
});

const LIMIT = shape({ code: str(), detail: str() });

export const INCLUSION_PROOF = shape({ leaf_index: int().min(0), tree_size: int().min(1), audit_path: listOf(hex64()) }).description('RFC 9162 inclusion proof of the node');

/** The receipt export document; an empty ledger is reported as EMPTY_LEDGER, nothing made up. */
export const EXPORT = shape({
  schema: oneOf('svc.receipt-export/v1'),
  doctrine: oneOf(RECEIPT_DOCTRINE),
  generated_at: isoTime(),
  public_key_url: str(),
  ledger: READINESS,
  ledger_durability: oneOf('EPHEMERAL', 'DURABLE', 'DEGRADED', 'CORRUPT'),
  ledger_size: int().min(0),
  keyid: hex64(),
  verify_offline: listOf(str()).description('shell steps that verify the receipt offline with openssl'),
  limits: listOf(LIMIT),
  honesty: str(),
  ok: bool(),
  export_state: oneOf('SIGNED_VERIFIED', 'SIGNATURE_INVALID', 'EMPTY_LEDGER'),
  receipt_available: bool(),
  node_index: int().min(-1).description('-1 when the ledger is empty'),
  node_digest: nullable(hex64()),
  khipu_root: hex64(),
  dsse: nullable(DSSE),
  payload_b64: B64().description('equals dsse.payload; empty when the ledger is empty'),
  signed: bool(),
  verification: shape({
    state: oneOf('VERIFIED', 'SIGNATURE_INVALID', 'NO_RECEIPT'),
    verified: bool(),
    reason: str(),
    pae_sha256: nullable(hex64()),
  }),
  inclusion_proof: INCLUSION_PROOF.optional().description('absent when the ledger is empty'),
});

const JWK = shape({ kty: oneOf('EC'), crv: oneOf('P-256'), x: str(), y: str() });

export const PUBKEY = shape({
  schema: oneOf('svc.edge-pubkey/v1'),
  alg: oneOf('ECDSA-P256-SHA256'),
  sig_encoding: oneOf('DER'),
  keyid: hex64(),
  keyid_derivation: str(),
  public_key_pem: str(),
  public_key_url: str(),
  jwk: JWK,
  ephemeral: bool(),
  created_at: isoTime(),
  checkpoint: shape({ origin: str(), vkeys: shape({ ed25519: str(), ecdsa: str() }) }).description('the signed checkpoints (GET /ledger/checkpoint): their origin, which is also the key name, and the C2SP signed-note verifier keys'),
  keys: listOf(shape({ keyid: hex64(), status: oneOf('current', 'retired'), public_key_pem: str(), public_key_url: str(), jwk: JWK })).description('the keyring: retired keys stay published'),
});

export const VERIFICATION = shape({
  schema: oneOf('svc.receipt-verification/v1'),
  verified: bool(),
  state: oneOf('VERIFIED', 'SIGNATURE_INVALID', 'UNSUPPORTED_PAYLOAD_TYPE', 'PAYLOAD_INVALID'),
  reason: str(),
  alg: oneOf('ECDSA-P256-SHA256'),
  payload_type: str(),
  pae_sha256: hex64(),
  key: shape({ keyid: hex64(), public_key_url: str(), status: oneOf('current', 'retired') }),
  signatures: listOf(
    shape({
      index: int().min(0),
      keyid_hint: nullable(str()),
      keyid_match: bool(),
      encoding: nullable(str()).description('der or p1363 when the signature decodes, else null'),
      verified: bool(),
    }),
  ),
  ledger: shape({ member: bool(), node_index: nullable(int().min(0)), node_digest: nullable(hex64()), ledger_size: int().min(0), khipu_root: hex64() }),
  payload: nullable(RECEIPT_PAYLOAD).description('the decoded receipt when verified, else null'),
  checked_at: isoTime(),
});

const VERTEX = openShape({ id: str(), type: oneOf('root', 'receipt', 'payload', 'envelope'), digest: hex64() }).description(
  'root: + tree_size; receipt: + index, kind, ts_utc, prev, pae_sha256',
);

/** GET /api/svc/khipu/dag: the kernel envelope around live ledger state (seed null, data_kind state). */
export const DAG = shape({
  schema: oneOf('svc.kernel/v1'),
  kernel: oneOf('khipu/dag'),
  kernel_version: int().min(1),
  technique: str(),
  references: listOf(str()),
  seed: oneOf(null),
  params: shape({ node: Joi.alternatives(int().min(0), str()).description('head, genesis, an index or a digest prefix'), depth: int(), pendants: bool(), proof: bool(), since: int().optional() }),
  request_label: nullable(str()),
  request_sha256: hex64(),
  data_kind: oneOf('state'),
  synthetic_inputs: oneOf(false),
  result: shape({
    ledger_size: int().min(0),
    khipu_root: hex64(),
    root_alg: str(),
    node_digest_formula: str(),
    durability: str(),
    limits: listOf(LIMIT),
    focus: nullable(shape({ index: int().min(0), node_digest: hex64() })),
    vertices: listOf(VERTEX),
    edges: listOf(shape({ from: str(), to: str(), rel: oneOf('includes', 'prev', 'payload', 'envelope') })),
    inclusion_proof: nullable(INCLUSION_PROOF),
    consistency_proof: nullable(shape({ first: int().min(1), second: int().min(1), path: listOf(hex64()) })),
    verified: shape({ chain: bool(), inclusion: nullable(bool()), consistency: nullable(bool()) }),
  }),
  honesty: str(),
});
