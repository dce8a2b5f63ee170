/**
 * Checks a verdict in the browser, with WebCrypto only, so a replay shows what was signed and not
 * what the page was told: the DSSE v1 signature (ECDSA P-256 over PAE = "DSSEv1" SP len(type) SP
 * type SP len(body) SP body) under the published key of its keyid, and the frame, whose RFC 8785
 * JSON must hash to the signed subject's frame_sha256.
 */

export interface SignedVerdict {
  track_id: string | null;
  decision: string;
  ts_utc: string;
  frame: Record<string, unknown> | null;
  receipt: { payload_b64: string; keyid: string; dsse: { payloadType: string; signatures: { sig: string; keyid: string }[] } };
}

export interface Verification {
  signature: boolean;
  /** Null when the verdict carries no frame (a node stored without its detail). */
  frame: boolean | null;
  /** The signed payload's own decision and time: what the page shows in a replay. */
  decision: string | null;
  tsUtc: string | null;
}

const enc = new TextEncoder();

const fromB64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** DSSE's pre-authentication encoding; lengths count bytes. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const type = enc.encode(payloadType);
  const head = enc.encode(`DSSEv1 ${type.length} `);
  const mid = enc.encode(` ${body.length} `);
  const out = new Uint8Array(head.length + type.length + mid.length + body.length);
  out.set(head, 0);
  out.set(type, head.length);
  out.set(mid, head.length + type.length);
  out.set(body, head.length + type.length + mid.length);
  return out;
}

/** An ASN.1 DER ECDSA signature (SEQUENCE of two INTEGERs) as WebCrypto's raw r ‖ s, 32 bytes each. */
export function derToRaw(der: Uint8Array): Uint8Array<ArrayBuffer> | null {
  if (der[0] !== 0x30) return null;
  let i = der[1]! & 0x80 ? 2 + (der[1]! & 0x7f) : 2;
  const out = new Uint8Array(64);
  for (let k = 0; k < 2; k++) {
    if (der[i] !== 0x02) return null;
    const len = der[i + 1]!;
    let v = der.subarray(i + 2, i + 2 + len);
    while (v.length > 32 && v[0] === 0) v = v.subarray(1);
    if (v.length > 32) return null;
    out.set(v, k * 32 + 32 - v.length);
    i += 2 + len;
  }
  return out;
}

/** RFC 8785 for the flat objects a telemetry frame is: members sorted by UTF-16 code units, no whitespace. */
export function canonicalFlat(o: Record<string, unknown>): string {
  const keys = Object.keys(o).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`).join(',')}}`;
}

type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
/** A public key as /edge/pubkey publishes it (JWK, EC P-256). */
export interface PublicJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
}

const hex = (b: ArrayBuffer): string => Array.from(new Uint8Array(b), (x) => x.toString(16).padStart(2, '0')).join('');

export class VerdictVerifier {
  private readonly keys = new Map<string, Promise<Key | null>>();

  constructor(private readonly jwks: ReadonlyMap<string, PublicJwk>) {}

  private key(keyid: string): Promise<Key | null> {
    let k = this.keys.get(keyid);
    if (!k) {
      const jwk = this.jwks.get(keyid);
      k = jwk ? crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']).catch(() => null) : Promise.resolve(null);
      this.keys.set(keyid, k);
    }
    return k;
  }

  async verify(v: SignedVerdict): Promise<Verification> {
    const body = fromB64(v.receipt.payload_b64);
    const sig = v.receipt.dsse.signatures[0];
    const key = sig ? await this.key(sig.keyid) : null;
    const raw = sig ? derToRaw(fromB64(sig.sig)) : null;
    const signature = !!(key && raw) && (await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key!, raw!, pae(v.receipt.dsse.payloadType, body)));
    let signed: { payload?: { decision?: string }; subject?: { frame_sha256?: string }; ts_utc?: string } = {};
    try {
      signed = JSON.parse(new TextDecoder().decode(body)) as typeof signed;
    } catch {
      return { signature: false, frame: null, decision: null, tsUtc: null };
    }
    let frame: boolean | null = null;
    if (v.frame) frame = hex(await crypto.subtle.digest('SHA-256', enc.encode(canonicalFlat(v.frame)))) === signed.subject?.frame_sha256;
    return { signature, frame, decision: signed.payload?.decision ?? null, tsUtc: signed.ts_utc ?? null };
  }
}
