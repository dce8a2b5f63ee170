/**
 * DSSE v1 (secure-systems-lab/dsse protocol 1.0.2): the signature covers
 * PAE = "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in bytes, never the bare body.
 */
import { verify, type KeyObject } from 'node:crypto';

// PAE and its hash are made in src/lib (the signing lane makes them too)
export { pae, PAYLOAD_TYPE, sha256 } from '../lib/receipt-bytes.js';
export const DSSE_HONESTY =
  'ECDSA-P256-SHA256 DSSE v1 envelope: the ASN.1 DER signature covers the pre-authentication encoding of payloadType and payload; verify with the published public key (edge/pubkey.pem) or POST /khipu/verify.';

/** Strict base64 (standard or URL-safe, optional padding): Node's decoder silently skips junk. */
const STD_B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_B64 = /^[A-Za-z0-9_-]*$/;

export function isStrictBase64(s: string): boolean {
  return STD_B64.test(s) || (URL_B64.test(s) && s.length % 4 !== 1);
}

export function decodeBase64(s: string): Buffer {
  return Buffer.from(s, STD_B64.test(s) ? 'base64' : 'base64url');
}

export interface Envelope {
  payloadType: string;
  payload: string;
  signatures: { keyid?: string; sig: string }[];
}

export interface SignatureCheck {
  index: number;
  keyid_hint: string | null;
  keyid_match: boolean;
  encoding: 'der' | 'ieee-p1363' | null;
  verified: boolean;
}

/** Verifies one signature over the PAE; DER first, raw r||s (WebCrypto) when 64 bytes and not DER. */
export function verifySignature(paeBytes: Buffer, sig: Buffer, key: KeyObject): { verified: boolean; encoding: 'der' | 'ieee-p1363' | null } {
  try {
    if (verify('sha256', paeBytes, key, sig)) return { verified: true, encoding: 'der' };
  } catch {
    // not DER: maybe P1363 below
  }
  if (sig.length === 64) {
    try {
      if (verify('sha256', paeBytes, { key, dsaEncoding: 'ieee-p1363' }, sig)) return { verified: true, encoding: 'ieee-p1363' };
    } catch {
      // neither encoding
    }
  }
  return { verified: false, encoding: null };
}
