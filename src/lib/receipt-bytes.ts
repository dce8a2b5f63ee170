/**
 * The bytes a receipt signature covers, made the same way on both threads: the main thread checks
 * and stores them, the signing lane (workers/sign-host.ts) makes and signs them. The signed payload
 * is canonical JSON (sorted keys, no whitespace); DSSE v1 (secure-systems-lab/dsse protocol 1.0.2)
 * signs PAE = "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in bytes, never the bare
 * body.
 */
import { hash } from 'node:crypto';
import { canonicalJson } from './numbers.js';

export const PAYLOAD_TYPE = 'application/vnd.svc.receipt+json';
/** The receipt-export doctrine the payloads declare (the doctrine document publishes it too). */
export const RECEIPT_DOCTRINE = 'v11';
export const RECEIPT_SCHEMA = 'svc.receipt/v1';
export const RECEIPT_KIND = 'counter_uas_decision';

export interface ReceiptBody {
  breaches: unknown[];
  decision: string;
  geofence_inside: boolean | null;
  lambda: number;
  lambda_floor: number;
}

/**
 * What a receipt is about: the track and the SHA-256 (hex) of its telemetry frame in canonical
 * JSON (RFC 8785: keys sorted by UTF-16 code units, no whitespace, numbers in ECMAScript's
 * shortest form). Two verdicts on different frames then never share payload bytes, so a signature
 * cannot be moved from one to the other.
 */
export interface ReceiptSubject {
  frame_sha256: string;
  track_id: string;
}

/** The subject of a verdict on `frame` (the frame as validated: the posted JSON object, keys and values as sent). */
export function receiptSubject(frame: { track_id: string }): ReceiptSubject {
  return { frame_sha256: hash('sha256', canonicalJson(frame), 'hex'), track_id: frame.track_id };
}

export function pae(payloadType: string, body: Buffer): Buffer {
  const type = Buffer.from(payloadType, 'utf8');
  return Buffer.concat([Buffer.from(`DSSEv1 ${type.length} `), type, Buffer.from(` ${body.length} `), body]);
}

/** One-shot (crypto.hash): no Hash object per call, about a quarter cheaper for these small inputs. */
export function sha256(data: Uint8Array): Buffer {
  return hash('sha256', data, 'buffer');
}

/** `subject` is an added member of svc.receipt/v1: readers that do not know it see the same fields as before. */
export function receiptPayload(body: ReceiptBody, tsUtc: string, kind = RECEIPT_KIND, subject?: ReceiptSubject): Buffer {
  const doc = { doctrine: RECEIPT_DOCTRINE, kind, payload: body, schema: RECEIPT_SCHEMA, ...(subject ? { subject } : {}), ts_utc: tsUtc };
  // JSON.stringify would turn NaN into null: refuse to sign a receipt that is not what it claims
  const check = (v: unknown): void => {
    if (typeof v === 'number' && !Number.isFinite(v)) throw new Error('receipt holds a non-finite number');
    if (v && typeof v === 'object') for (const k in v) check((v as Record<string, unknown>)[k]);
  };
  check(doc);
  // a pooled slice (Buffer.from): the ledger copies the bytes into its arena (node-table.ts), so this
  // Buffer lives only as long as the request and the bounded replay and scene buffers; an unpooled
  // Buffer.alloc costs ~4 µs per receipt for its own backing store
  return Buffer.from(canonicalJson(doc), 'utf8');
}
