/**
 * Receipts: the signed payload of interface 2.3, serialised once (sorted keys, no whitespace) and
 * kept as bytes; and the DSSE envelope document built from a stored node.
 */
import { canonicalJson } from '../lib/numbers.js';
import { RECEIPT_DOCTRINE } from '../core/doctrine.js';
import { DSSE_HONESTY, PAYLOAD_TYPE } from './dsse.js';
import type { LedgerNode } from './ledger.js';

export const RECEIPT_SCHEMA = 'svc.receipt/v1';
export const RECEIPT_KIND = 'counter_uas_decision';

export interface ReceiptBody {
  breaches: unknown[];
  decision: string;
  geofence_inside: boolean | null;
  lambda: number;
  lambda_floor: number;
}

export function receiptPayload(body: ReceiptBody, tsUtc: string, kind = RECEIPT_KIND): Buffer {
  const doc = { doctrine: RECEIPT_DOCTRINE, kind, payload: body, schema: RECEIPT_SCHEMA, ts_utc: tsUtc };
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

export interface DsseDocument {
  payloadType: string;
  payload: string;
  signatures: { sig: string; keyid: string }[];
  signed: boolean;
  keyid: string;
  honesty: string;
  _dsse: 'DSSEv1';
  _pae_sha256: string;
}

export function dsseDocument(node: LedgerNode): DsseDocument {
  return {
    payloadType: PAYLOAD_TYPE,
    payload: node.payload.toString('base64'),
    signatures: [{ sig: node.sig.toString('base64'), keyid: node.keyid }],
    signed: true,
    keyid: node.keyid,
    honesty: DSSE_HONESTY,
    _dsse: 'DSSEv1',
    _pae_sha256: node.paeSha256.toString('hex'),
  };
}
