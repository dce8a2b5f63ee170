/**
 * Receipts: the signed payload (made by src/lib/receipt-bytes.ts, kept as bytes), bound to its
 * subject (the track and the digest of the frame it decides), and the DSSE envelope document built
 * from a stored node.
 */
import { DSSE_HONESTY, PAYLOAD_TYPE } from './dsse.js';
import type { LedgerNode } from './ledger.js';

// the payload bytes are made in src/lib (the signing lane makes them too)
export { RECEIPT_KIND, RECEIPT_SCHEMA, receiptPayload, receiptSubject, type ReceiptBody, type ReceiptSubject } from '../lib/receipt-bytes.js';

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
