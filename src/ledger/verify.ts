/**
 * POST /khipu/verify: a DSSE envelope (or an export document carrying one) checked against the
 * published key. `verified` needs all of: a signature by our key over the PAE, the supported
 * payloadType, and a payload that parses as an svc.receipt/v1 receipt — decided together, so a
 * valid signature can never vouch for a swapped type (cosign CVE-2022-35929).
 */
import { Joi } from '../lib/code-points.js';
import type { ObjectParam } from '../lib/params.js';
import { decodeBase64, pae, PAYLOAD_TYPE, sha256, verifySignature, type Envelope, type SignatureCheck } from './dsse.js';
import type { Ledger } from './ledger.js';
import type { Keyring } from './keyring.js';
import { RECEIPT_SCHEMA } from './receipt.js';
import { toJsonSchema } from '../docs/joi-to-json-schema.js';

const B64 = /^(?:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?|[A-Za-z0-9_-]*)$/;
/** 16 KiB decoded payload at most. */
const MAX_PAYLOAD_B64 = Math.ceil((16 * 1024) / 3) * 4;

const envelopeSchema = Joi.object({
  payloadType: Joi.string().max(256).required(),
  payload: Joi.string().min(1).max(MAX_PAYLOAD_B64).pattern(B64).required(),
  signatures: Joi.array()
    .items(Joi.object({ keyid: Joi.string().allow('').max(128).pattern(/^[0-9a-fA-F]*$/), sig: Joi.string().min(1).max(200).pattern(B64).required() }).unknown(true))
    .min(1)
    .max(8)
    .required(),
}).unknown(true); // DSSE: consumers ignore fields they do not know (signed, honesty, _dsse, ...)

const ENVELOPE_JSON_SCHEMA = toJsonSchema(envelopeSchema);

export const verifyBodySchema: ObjectParam<Record<string, unknown>> = Joi.object({
  dsse: envelopeSchema,
  payloadType: Joi.any().when('dsse', { is: Joi.exist(), then: Joi.any(), otherwise: Joi.string().max(256).required() }),
  payload: Joi.any().when('dsse', { is: Joi.exist(), then: Joi.any(), otherwise: envelopeSchema.extract('payload') }),
  signatures: Joi.any().when('dsse', { is: Joi.exist(), then: Joi.any(), otherwise: envelopeSchema.extract('signatures') }),
})
  .unknown(true)
  // the `when`s above are not JSON Schema: the document states the two forms, a `dsse` key or the envelope's own keys
  // and list only `dsse` as a property: the envelope's own keys are typed in the second form
  .meta({ jsonSchema: { properties: { dsse: ENVELOPE_JSON_SCHEMA }, anyOf: [{ required: ['dsse'] }, ENVELOPE_JSON_SCHEMA] } });

export type VerifyState = 'VERIFIED' | 'SIGNATURE_INVALID' | 'UNSUPPORTED_PAYLOAD_TYPE' | 'PAYLOAD_INVALID';

function parseReceipt(bytes: Buffer): Record<string, unknown> | null {
  try {
    const doc = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
    const p = doc.payload as Record<string, unknown> | undefined;
    const ok = doc.schema === RECEIPT_SCHEMA && typeof doc.ts_utc === 'string' && typeof doc.kind === 'string' && p && typeof p.decision === 'string' && typeof p.lambda === 'number';
    return ok ? doc : null;
  } catch {
    return null;
  }
}

export function verifyEnvelope(body: Record<string, unknown>, keyring: Keyring, ledger: Ledger, keyUrl: string): Record<string, unknown> {
  const env = (body.dsse ?? body) as Envelope;
  const payload = decodeBase64(env.payload);
  const paeBytes = pae(env.payloadType, payload);
  const paeSha = sha256(paeBytes).toString('hex');
  let usedKey = keyring.current.keyid;
  const signatures: SignatureCheck[] = env.signatures.map((s, index) => {
    const hint = s.keyid ? s.keyid.toLowerCase() : null;
    // the key the signature names, from the keyring (current or retired); without a hint, any of them
    const named = hint === null ? undefined : keyring.get(hint);
    const candidates = hint === null ? keyring.list() : named ? [named] : [];
    const sig = decodeBase64(s.sig);
    // a hint naming no key of ours is checked against nothing; the encoding is still reported
    let r: ReturnType<typeof verifySignature> | null = null;
    for (const k of candidates) {
      r = verifySignature(paeBytes, sig, k.publicKey);
      if (r.verified) {
        usedKey = k.keyid;
        break;
      }
    }
    r ??= { ...verifySignature(paeBytes, sig, keyring.current.publicKey), verified: false };
    return { index, keyid_hint: hint, keyid_match: named !== undefined, encoding: r.encoding, verified: r.verified };
  });
  const sigOk = signatures.some((s) => s.verified);
  const typeOk = env.payloadType === PAYLOAD_TYPE;
  const receipt = sigOk && typeOk ? parseReceipt(payload) : null;
  const state: VerifyState = !sigOk ? 'SIGNATURE_INVALID' : !typeOk ? 'UNSUPPORTED_PAYLOAD_TYPE' : !receipt ? 'PAYLOAD_INVALID' : 'VERIFIED';
  const reason = {
    VERIFIED: 'a signature by the published key verifies over the DSSE PAE, the payload type is supported and the payload is an svc.receipt/v1 receipt',
    SIGNATURE_INVALID: 'no signature verifies over the DSSE PAE with the published key',
    UNSUPPORTED_PAYLOAD_TYPE: `payloadType must be ${PAYLOAD_TYPE}`,
    PAYLOAD_INVALID: 'the signed payload is not an svc.receipt/v1 receipt',
  }[state];
  const index = ledger.indexOfPae(paeSha);
  const node = index === undefined ? undefined : ledger.get(index);
  return {
    schema: 'svc.receipt-verification/v1',
    verified: state === 'VERIFIED',
    state,
    reason,
    alg: 'ECDSA-P256-SHA256',
    payload_type: env.payloadType,
    pae_sha256: paeSha,
    key: { keyid: usedKey, public_key_url: usedKey === keyring.current.keyid ? keyUrl : `${keyUrl}?keyid=${usedKey}`, status: usedKey === keyring.current.keyid ? 'current' : 'retired' },
    signatures,
    ledger: {
      member: node !== undefined,
      node_index: node?.index ?? null,
      node_digest: node?.nodeDigest.toString('hex') ?? null,
      ledger_size: ledger.size,
      khipu_root: ledger.root().toString('hex'),
    },
    // decoded from the very bytes that were verified, and only then (null unless VERIFIED)
    payload: receipt,
    checked_at: new Date().toISOString(),
  };
}
