// POST /khipu/verify's logic without HTTP: verifyBodySchema (bare and {dsse} forms, base64, limits,
// unknown fields) and verifyEnvelope (states VERIFIED / SIGNATURE_INVALID / UNSUPPORTED_PAYLOAD_TYPE /
// PAYLOAD_INVALID, per-signature keyid hints and encodings, current vs retired key, ledger membership).
// Expected PAEs, digests and signatures are computed here with node:crypto, not with the module's helpers.
import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { verifyBodySchema, verifyEnvelope } from '../../src/ledger/verify.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { loadSigningKey, type SigningKey } from '../../src/ledger/keys.js';
import { Ledger, type LedgerNode } from '../../src/ledger/ledger.js';
import { receiptPayload } from '../../src/ledger/receipt.js';

const TYPE = 'application/vnd.svc.receipt+json';
const KEY_URL = 'https://ledger.example/api/svc/v1/edge/pubkey.pem';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const keyidOf = (k: KeyObject): string => createHash('sha256').update(k.export({ type: 'spki', format: 'der' })).digest('hex');
const pemOf = (k: KeyObject): string => k.export({ type: 'spki', format: 'pem' }).toString();
/** DSSE v1 PAE by hand: "DSSEv1" SP len(type) SP type SP len(body) SP body, lengths in bytes. */
const paeOf = (type: string, body: Buffer): Buffer => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `, 'utf8'), body]);
const sha256Hex = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const der = (key: KeyObject, type: string, body: Buffer): Buffer => sign('sha256', paeOf(type, body), key);
const raw = (key: KeyObject, type: string, body: Buffer): Buffer => sign('sha256', paeOf(type, body), { key, dsaEncoding: 'ieee-p1363' });

type Sig = { keyid?: string; sig: Buffer };
const envelope = (payload: Buffer, sigs: Sig[], payloadType = TYPE): Record<string, unknown> => ({
  payloadType,
  payload: payload.toString('base64'),
  signatures: sigs.map((s) => (s.keyid === undefined ? { sig: s.sig.toString('base64') } : { keyid: s.keyid, sig: s.sig.toString('base64') })),
});

/** A receipt the way parseReceipt wants it; `over` replaces or (undefined) drops top-level fields. */
function receiptJson(over: Record<string, unknown> = {}, body: Record<string, unknown> = {}): Buffer {
  const doc: Record<string, unknown> = { doctrine: 'v11', kind: 'counter_uas_decision', payload: { breaches: [], decision: 'DENY', geofence_inside: null, lambda: 0.25, lambda_floor: 0.1, ...body }, schema: 'svc.receipt/v1', ts_utc: '2025-03-04T05:06:07.000Z', ...over };
  for (const k of Object.keys(doc)) if (doc[k] === undefined) delete doc[k];
  return Buffer.from(JSON.stringify(doc), 'utf8');
}

interface World {
  current: SigningKey;
  retired: ReturnType<typeof p256>;
  retiredId: string;
  stranger: ReturnType<typeof p256>;
  strangerId: string;
  ring: Keyring;
  ledger: Ledger;
  /** A real svc.receipt/v1 payload that is node 2 of the ledger (node 0 and 1 are fillers). */
  member: Buffer;
  memberNode: LedgerNode;
  /** A real receipt that is not in the ledger. */
  outsider: Buffer;
}

function world(): World {
  const current = loadSigningKey(null);
  const retired = p256();
  const stranger = p256();
  const ring = new Keyring(current);
  ring.add(pemOf(retired.publicKey));
  const ledger = new Ledger(16);
  const append = (payload: Buffer): LedgerNode =>
    ledger.append({ kind: 'counter_uas_decision', tsUtc: '2025-03-04T05:06:07.000Z', payload, paeSha256: createHash('sha256').update(paeOf(TYPE, payload)).digest(), sig: der(current.privateKey, TYPE, payload), keyid: current.keyid });
  append(receiptJson({ ts_utc: '2025-01-01T00:00:00.000Z' }));
  append(receiptJson({ ts_utc: '2025-01-01T00:00:01.000Z' }));
  const member = receiptPayload({ breaches: [], decision: 'ENGAGE', geofence_inside: true, lambda: 0.75, lambda_floor: 0.5 }, '2025-03-04T05:06:08.000Z');
  const memberNode = append(member);
  append(receiptJson({ ts_utc: '2025-01-01T00:00:09.000Z' }));
  const outsider = receiptPayload({ breaches: ['x'], decision: 'HOLD', geofence_inside: false, lambda: 2, lambda_floor: 1 }, '2025-03-04T05:06:09.000Z');
  return { current, retired, retiredId: keyidOf(retired.publicKey), stranger, strangerId: keyidOf(stranger.publicKey), ring, ledger, member, memberNode, outsider };
}

const REASONS = {
  VERIFIED: 'a signature by the published key verifies over the DSSE PAE, the payload type is supported and the payload is an svc.receipt/v1 receipt',
  SIGNATURE_INVALID: 'no signature verifies over the DSSE PAE with the published key',
  UNSUPPORTED_PAYLOAD_TYPE: 'payloadType must be application/vnd.svc.receipt+json',
  PAYLOAD_INVALID: 'the signed payload is not an svc.receipt/v1 receipt',
};

/** verifyEnvelope with checked_at checked (a fresh ISO timestamp) and dropped. */
function run(w: World, body: Record<string, unknown>): Record<string, any> {
  const before = Date.now();
  const doc = verifyEnvelope(body, w.ring, w.ledger, KEY_URL) as Record<string, any>;
  const at = Date.parse(doc.checked_at);
  expect(new Date(at).toISOString()).to.equal(doc.checked_at);
  expect(at).to.be.within(before, Date.now());
  const { checked_at: _checked, ...rest } = doc;
  return rest;
}

const notMember = (w: World) => ({ member: false, node_index: null, node_digest: null, ledger_size: w.ledger.size, khipu_root: w.ledger.root().toString('hex') });

describe('ledger verify (verifyEnvelope, verifyBodySchema)', () => {
  const w = world();

  it('a receipt in the ledger, signed (DER) by the current key it names: VERIFIED, the whole document', () => {
    const sig = der(w.current.privateKey, TYPE, w.member);
    const doc = run(w, envelope(w.member, [{ keyid: w.current.keyid, sig }]));
    expect(doc).to.deep.equal({
      schema: 'svc.receipt-verification/v1',
      verified: true,
      state: 'VERIFIED',
      reason: REASONS.VERIFIED,
      alg: 'ECDSA-P256-SHA256',
      payload_type: TYPE,
      pae_sha256: sha256Hex(paeOf(TYPE, w.member)),
      key: { keyid: w.current.keyid, public_key_url: KEY_URL, status: 'current' },
      signatures: [{ index: 0, keyid_hint: w.current.keyid, keyid_match: true, encoding: 'der', verified: true }],
      ledger: { member: true, node_index: 2, node_digest: w.memberNode.nodeDigest.toString('hex'), ledger_size: 4, khipu_root: w.ledger.root().toString('hex') },
      payload: JSON.parse(w.member.toString('utf8')),
    });
    // the node the document names is the appended one, and the root is the ledger's current one
    expect(w.ledger.get(2)!.paeSha256.toString('hex')).to.equal(doc.pae_sha256);
    expect(doc.payload).to.deep.include({ schema: 'svc.receipt/v1', kind: 'counter_uas_decision', ts_utc: '2025-03-04T05:06:08.000Z' });
  });

  it('the {dsse: …} wrapper (an export document) is verified from its envelope; the outer fields are ignored', () => {
    const env = envelope(w.member, [{ keyid: w.current.keyid, sig: der(w.current.privateKey, TYPE, w.member) }]);
    const bare = run(w, env);
    const decoy = envelope(w.outsider, [{ sig: Buffer.alloc(64, 7) }], 'text/plain');
    const wrapped = run(w, { ...decoy, dsse: { ...env, signed: true, _dsse: 'DSSEv1' }, export_state: 'SIGNED_VERIFIED' });
    expect(wrapped).to.deep.equal(bare);
    expect(wrapped.state).to.equal('VERIFIED');
    // and the bare form ignores an unrelated field that is not `dsse`
    expect(run(w, { ...env, honesty: 'x' })).to.deep.equal(bare);
  });

  it('IEEE-P1363 (raw r‖s) signature without a keyid: every key tried, encoding reported; a receipt not in the ledger is not a member', () => {
    const sig = raw(w.current.privateKey, TYPE, w.outsider);
    expect(sig.length).to.equal(64);
    const doc = run(w, envelope(w.outsider, [{ sig }]));
    expect(doc).to.deep.include({ verified: true, state: 'VERIFIED', reason: REASONS.VERIFIED, pae_sha256: sha256Hex(paeOf(TYPE, w.outsider)) });
    expect(doc.signatures).to.deep.equal([{ index: 0, keyid_hint: null, keyid_match: false, encoding: 'ieee-p1363', verified: true }]);
    expect(doc.key).to.deep.equal({ keyid: w.current.keyid, public_key_url: KEY_URL, status: 'current' });
    expect(doc.ledger).to.deep.equal(notMember(w));
    expect(doc.payload).to.deep.equal(JSON.parse(w.outsider.toString('utf8')));
    // an empty keyid is no hint either
    const empty = run(w, envelope(w.outsider, [{ keyid: '', sig }]));
    expect(empty.signatures).to.deep.equal([{ index: 0, keyid_hint: null, keyid_match: false, encoding: 'ieee-p1363', verified: true }]);
    expect(empty.state).to.equal('VERIFIED');
  });

  it('a signature by a retired key of the keyring: verified, key status retired, URL with ?keyid=', () => {
    const sig = der(w.retired.privateKey, TYPE, w.member);
    const expectedKey = { keyid: w.retiredId, public_key_url: `${KEY_URL}?keyid=${w.retiredId}`, status: 'retired' };
    const hinted = run(w, envelope(w.member, [{ keyid: w.retiredId, sig }]));
    expect(hinted).to.deep.include({ verified: true, state: 'VERIFIED' });
    expect(hinted.key).to.deep.equal(expectedKey);
    expect(hinted.signatures).to.deep.equal([{ index: 0, keyid_hint: w.retiredId, keyid_match: true, encoding: 'der', verified: true }]);
    expect(hinted.ledger).to.deep.include({ member: true, node_index: 2 });
    // without a hint the current key (listed first) fails and the retired one is found after it
    const unhinted = run(w, envelope(w.member, [{ sig }]));
    expect(unhinted).to.deep.include({ verified: true, state: 'VERIFIED' });
    expect(unhinted.key).to.deep.equal(expectedKey);
    expect(unhinted.signatures).to.deep.equal([{ index: 0, keyid_hint: null, keyid_match: false, encoding: 'der', verified: true }]);
    // P1363 by the retired key, no hint
    const rawSig = raw(w.retired.privateKey, TYPE, w.member);
    expect(run(w, envelope(w.member, [{ sig: rawSig }])).signatures[0]).to.deep.include({ encoding: 'ieee-p1363', verified: true });
  });

  it('a keyid hint is normalised to lower case; an upper-case hint still names our key', () => {
    const sig = der(w.current.privateKey, TYPE, w.member);
    const upper = run(w, envelope(w.member, [{ keyid: w.current.keyid.toUpperCase(), sig }]));
    expect(upper.signatures).to.deep.equal([{ index: 0, keyid_hint: w.current.keyid, keyid_match: true, encoding: 'der', verified: true }]);
    expect(upper.state).to.equal('VERIFIED');
    const retiredUpper = run(w, envelope(w.member, [{ keyid: w.retiredId.toUpperCase(), sig: der(w.retired.privateKey, TYPE, w.member) }]));
    expect(retiredUpper.signatures[0]).to.deep.include({ keyid_hint: w.retiredId, keyid_match: true, verified: true });
    expect(retiredUpper.key.status).to.equal('retired');
  });

  it('a hint naming no key of ours is checked against nothing: not verified even when our key signed, encoding still reported', () => {
    for (const hint of [w.strangerId, 'ab'.repeat(32), 'ABCDEF']) {
      const derDoc = run(w, envelope(w.member, [{ keyid: hint, sig: der(w.current.privateKey, TYPE, w.member) }]));
      expect(derDoc, hint).to.deep.include({ verified: false, state: 'SIGNATURE_INVALID', reason: REASONS.SIGNATURE_INVALID, payload: null });
      expect(derDoc.signatures, hint).to.deep.equal([{ index: 0, keyid_hint: hint.toLowerCase(), keyid_match: false, encoding: 'der', verified: false }]);
      expect(derDoc.key).to.deep.equal({ keyid: w.current.keyid, public_key_url: KEY_URL, status: 'current' });
      // membership is reported from the PAE whatever the signature
      expect(derDoc.ledger).to.deep.include({ member: true, node_index: 2 });
    }
    const rawDoc = run(w, envelope(w.member, [{ keyid: w.strangerId, sig: raw(w.current.privateKey, TYPE, w.member) }]));
    expect(rawDoc.signatures).to.deep.equal([{ index: 0, keyid_hint: w.strangerId, keyid_match: false, encoding: 'ieee-p1363', verified: false }]);
    // a retired key's signature under an unknown hint: the fallback check is against the current key only
    const retiredDoc = run(w, envelope(w.member, [{ keyid: w.strangerId, sig: der(w.retired.privateKey, TYPE, w.member) }]));
    expect(retiredDoc.signatures).to.deep.equal([{ index: 0, keyid_hint: w.strangerId, keyid_match: false, encoding: null, verified: false }]);
  });

  it('a hint naming one of our keys is checked against that key only', () => {
    // signed by the retired key, hint names the current one: not tried with the retired key
    const doc = run(w, envelope(w.member, [{ keyid: w.current.keyid, sig: der(w.retired.privateKey, TYPE, w.member) }]));
    expect(doc).to.deep.include({ verified: false, state: 'SIGNATURE_INVALID' });
    expect(doc.signatures).to.deep.equal([{ index: 0, keyid_hint: w.current.keyid, keyid_match: true, encoding: null, verified: false }]);
    expect(doc.key).to.deep.equal({ keyid: w.current.keyid, public_key_url: KEY_URL, status: 'current' });
    // and the other way round
    const back = run(w, envelope(w.member, [{ keyid: w.retiredId, sig: der(w.current.privateKey, TYPE, w.member) }]));
    expect(back.signatures).to.deep.equal([{ index: 0, keyid_hint: w.retiredId, keyid_match: true, encoding: null, verified: false }]);
    expect(back.state).to.equal('SIGNATURE_INVALID');
  });

  it('several signatures: one that verifies is enough, and names the key; each is reported by index', () => {
    const bad = der(w.stranger.privateKey, TYPE, w.member);
    const good = der(w.retired.privateKey, TYPE, w.member);
    const doc = run(w, envelope(w.member, [{ sig: bad }, { keyid: w.retiredId, sig: good }, { keyid: w.strangerId, sig: Buffer.alloc(64, 3) }]));
    expect(doc).to.deep.include({ verified: true, state: 'VERIFIED', reason: REASONS.VERIFIED });
    expect(doc.signatures).to.deep.equal([
      { index: 0, keyid_hint: null, keyid_match: false, encoding: null, verified: false },
      { index: 1, keyid_hint: w.retiredId, keyid_match: true, encoding: 'der', verified: true },
      { index: 2, keyid_hint: w.strangerId, keyid_match: false, encoding: null, verified: false },
    ]);
    expect(doc.key).to.deep.equal({ keyid: w.retiredId, public_key_url: `${KEY_URL}?keyid=${w.retiredId}`, status: 'retired' });
    expect(doc.payload).to.deep.equal(JSON.parse(w.member.toString('utf8')));
  });

  it('no signature by any of our keys: SIGNATURE_INVALID, key stays the current one, no payload', () => {
    const doc = run(w, envelope(w.outsider, [{ sig: der(w.stranger.privateKey, TYPE, w.outsider) }, { sig: Buffer.alloc(64, 1) }]));
    expect(doc).to.deep.equal({
      schema: 'svc.receipt-verification/v1',
      verified: false,
      state: 'SIGNATURE_INVALID',
      reason: REASONS.SIGNATURE_INVALID,
      alg: 'ECDSA-P256-SHA256',
      payload_type: TYPE,
      pae_sha256: sha256Hex(paeOf(TYPE, w.outsider)),
      key: { keyid: w.current.keyid, public_key_url: KEY_URL, status: 'current' },
      signatures: [
        { index: 0, keyid_hint: null, keyid_match: false, encoding: null, verified: false },
        { index: 1, keyid_hint: null, keyid_match: false, encoding: null, verified: false },
      ],
      ledger: notMember(w),
      payload: null,
    });
    // our key over another payload does not verify this one
    const other = run(w, envelope(w.outsider, [{ keyid: w.current.keyid, sig: der(w.current.privateKey, TYPE, w.member) }]));
    expect(other).to.deep.include({ verified: false, state: 'SIGNATURE_INVALID', payload: null });
  });

  it('a valid signature over another payloadType: UNSUPPORTED_PAYLOAD_TYPE, never the payload', () => {
    const type = 'application/json';
    const doc = run(w, envelope(w.member, [{ keyid: w.current.keyid, sig: der(w.current.privateKey, type, w.member) }], type));
    expect(doc).to.deep.include({ verified: false, state: 'UNSUPPORTED_PAYLOAD_TYPE', reason: REASONS.UNSUPPORTED_PAYLOAD_TYPE, payload_type: type, payload: null });
    expect(doc.pae_sha256).to.equal(sha256Hex(paeOf(type, w.member)));
    expect(doc.signatures).to.deep.equal([{ index: 0, keyid_hint: w.current.keyid, keyid_match: true, encoding: 'der', verified: true }]);
    // the PAE binds the type: another PAE is not the ledger's node
    expect(doc.ledger).to.deep.equal(notMember(w));
    // a signature over the supported type's PAE does not vouch for the swapped type
    const swapped = run(w, envelope(w.member, [{ sig: der(w.current.privateKey, TYPE, w.member) }], type));
    expect(swapped).to.deep.include({ verified: false, state: 'SIGNATURE_INVALID' });
    // an invalid signature with a wrong type is reported as a signature failure first
    expect(run(w, envelope(w.member, [{ sig: Buffer.alloc(64, 5) }], type)).state).to.equal('SIGNATURE_INVALID');
  });

  it('a signed payload that is not an svc.receipt/v1 receipt: PAYLOAD_INVALID, each field checked on its own', () => {
    const cases: [string, Buffer][] = [
      ['schema v2', receiptJson({ schema: 'svc.receipt/v2' })],
      ['no schema', receiptJson({ schema: undefined })],
      ['no ts_utc', receiptJson({ ts_utc: undefined })],
      ['ts_utc a number', receiptJson({ ts_utc: 1741064767000 })],
      ['no kind', receiptJson({ kind: undefined })],
      ['kind a number', receiptJson({ kind: 7 })],
      ['no payload', receiptJson({ payload: undefined })],
      ['payload null', receiptJson({ payload: null })],
      ['payload a string', receiptJson({ payload: 'DENY' })],
      ['decision a number', receiptJson({}, { decision: 1 })],
      ['decision missing', receiptJson({}, { decision: undefined })],
      ['lambda a string', receiptJson({}, { lambda: '0.25' })],
      ['lambda null', receiptJson({}, { lambda: null })],
      ['invalid JSON', Buffer.from('{"schema":"svc.receipt/v1",', 'utf8')],
      ['JSON null', Buffer.from('null', 'utf8')],
      ['JSON number', Buffer.from('42', 'utf8')],
      ['not UTF-8 JSON', Buffer.from([0xff, 0xfe, 0x00])],
    ];
    for (const [label, body] of cases) {
      const doc = run(w, envelope(body, [{ keyid: w.current.keyid, sig: der(w.current.privateKey, TYPE, body) }]));
      expect(doc, label).to.deep.include({ verified: false, state: 'PAYLOAD_INVALID', reason: REASONS.PAYLOAD_INVALID, payload: null });
      expect(doc.signatures[0], label).to.deep.include({ verified: true, encoding: 'der' });
    }
    // the same builder with nothing changed is a receipt (so each case above differs in one field only)
    const ok = receiptJson();
    const good = run(w, envelope(ok, [{ sig: der(w.current.privateKey, TYPE, ok) }]));
    expect(good).to.deep.include({ verified: true, state: 'VERIFIED' });
    expect(good.payload).to.deep.equal(JSON.parse(ok.toString('utf8')));
    // a minimal receipt: only what is checked, extra fields kept as signed
    const minimal = Buffer.from(JSON.stringify({ schema: 'svc.receipt/v1', ts_utc: 't', kind: '', payload: { decision: '', lambda: 0 }, extra: [1] }), 'utf8');
    const min = run(w, envelope(minimal, [{ sig: der(w.current.privateKey, TYPE, minimal) }]));
    expect(min).to.deep.include({ state: 'VERIFIED' });
    expect(min.payload).to.deep.equal({ schema: 'svc.receipt/v1', ts_utc: 't', kind: '', payload: { decision: '', lambda: 0 }, extra: [1] });
  });

  it('only verified bytes of the supported type are parsed: an unverified or wrongly typed payload never reaches JSON.parse', () => {
    const parse = JSON.parse;
    const seen: string[] = [];
    const spy: typeof JSON.parse = (text, reviver) => {
      seen.push(text);
      return parse(text, reviver);
    };
    const parsed = (body: Record<string, unknown>): string[] => {
      seen.length = 0;
      JSON.parse = spy;
      try {
        verifyEnvelope(body, w.ring, w.ledger, KEY_URL);
      } finally {
        JSON.parse = parse;
      }
      return [...seen];
    };
    const text = w.outsider.toString('utf8');
    const other = 'application/json';
    // signature by a stranger, supported type
    expect(parsed(envelope(w.outsider, [{ sig: der(w.stranger.privateKey, TYPE, w.outsider) }]))).to.not.include(text);
    // our valid signature over another type
    expect(parsed(envelope(w.outsider, [{ sig: der(w.current.privateKey, other, w.outsider) }], other))).to.not.include(text);
    // neither
    expect(parsed(envelope(w.outsider, [{ sig: der(w.stranger.privateKey, other, w.outsider) }], other))).to.not.include(text);
    // both: parsed, from the verified bytes
    expect(parsed(envelope(w.outsider, [{ sig: der(w.current.privateKey, TYPE, w.outsider) }]))).to.include(text);
  });

  it('URL-safe base64 payload and signature decode to the same bytes', () => {
    const sig = der(w.current.privateKey, TYPE, w.member);
    const doc = run(w, { payloadType: TYPE, payload: w.member.toString('base64url'), signatures: [{ sig: sig.toString('base64url') }] });
    expect(doc).to.deep.include({ state: 'VERIFIED', pae_sha256: sha256Hex(paeOf(TYPE, w.member)) });
    expect(doc.ledger).to.deep.include({ member: true, node_index: 2 });
  });

  it('a member at index 0 and a ledger that grows: index, digest, size and root are read at call time', () => {
    const w2 = world();
    const first = w2.ledger.get(0)!;
    const doc = run(w2, envelope(first.payload, [{ sig: der(w2.current.privateKey, TYPE, first.payload) }]));
    expect(doc.ledger).to.deep.equal({ member: true, node_index: 0, node_digest: first.nodeDigest.toString('hex'), ledger_size: 4, khipu_root: w2.ledger.root().toString('hex') });
    const rootBefore = doc.ledger.khipu_root;
    const p = w2.outsider;
    const added = w2.ledger.append({ kind: 'k', tsUtc: '2025-01-01T00:00:00.000Z', payload: p, paeSha256: createHash('sha256').update(paeOf(TYPE, p)).digest(), sig: Buffer.from([1]), keyid: 'x' });
    const after = run(w2, envelope(p, [{ sig: der(w2.current.privateKey, TYPE, p) }]));
    expect(after.ledger).to.deep.equal({ member: true, node_index: 4, node_digest: added.nodeDigest.toString('hex'), ledger_size: 5, khipu_root: w2.ledger.root().toString('hex') });
    expect(after.ledger.khipu_root).to.not.equal(rootBefore);
  });

  describe('verifyBodySchema', () => {
    const sig = der(w.current.privateKey, TYPE, w.member);
    const env = envelope(w.member, [{ keyid: w.current.keyid, sig }]);
    const check = (body: unknown) => verifyBodySchema.validate(body, { abortEarly: false, convert: false, allowUnknown: false });
    const paths = (body: unknown): string[] => (check(body).error?.details ?? []).map((d) => d.path.join('.'));

    it('accepts the bare envelope and the {dsse} wrapper, with fields it does not know', () => {
      expect(check(env).error).to.equal(undefined);
      expect(check({ dsse: env }).error).to.equal(undefined);
      expect(check({ ...env, signed: true, honesty: 'h', _dsse: 'DSSEv1', signatures: [{ keyid: w.current.keyid, sig: sig.toString('base64'), extra: 1 }] }).error).to.equal(undefined);
      expect(check({ dsse: { ...env, _pae_sha256: 'ab', signed: true }, export_state: 'SIGNED_VERIFIED', ledger: {}, payload_b64: 'x y' }).error).to.equal(undefined);
      // URL-safe base64, an empty and an upper-case keyid, no keyid at all
      expect(check({ payloadType: TYPE, payload: w.member.toString('base64url'), signatures: [{ keyid: '', sig: sig.toString('base64url') }, { keyid: 'ABCDEF0123', sig: 'QQ==' }, { sig: 'QUJD' }] }).error).to.equal(undefined);
      // what it accepts, verifyEnvelope verifies
      const { value } = check({ dsse: env });
      expect(verifyEnvelope(value as Record<string, unknown>, w.ring, w.ledger, KEY_URL).state).to.equal('VERIFIED');
    });

    it('a bare body needs payloadType, payload and signatures; the wrapper needs them in dsse', () => {
      const { payloadType: _t, ...noType } = env;
      const { payload: _p, ...noPayload } = env;
      const { signatures: _s, ...noSigs } = env;
      expect(paths(noType)).to.deep.equal(['payloadType']);
      expect(paths(noPayload)).to.deep.equal(['payload']);
      expect(paths(noSigs)).to.deep.equal(['signatures']);
      expect(paths({})).to.deep.equal(['payloadType', 'payload', 'signatures']);
      expect(paths({ dsse: noType })).to.deep.equal(['dsse.payloadType']);
      expect(paths({ dsse: noPayload })).to.deep.equal(['dsse.payload']);
      expect(paths({ dsse: noSigs })).to.deep.equal(['dsse.signatures']);
      expect(paths({ dsse: 'x' })).to.deep.equal(['dsse']);
      expect(paths({ ...env, payloadType: 5 })).to.deep.equal(['payloadType']);
      expect(paths({ ...env, payloadType: 'x'.repeat(256) })).to.deep.equal([]);
      expect(paths({ ...env, payloadType: 'x'.repeat(257) })).to.deep.equal(['payloadType']);
    });

    it('refuses payloads that are not strict base64 or longer than the 16 KiB cap', () => {
      for (const bad of ['a b', 'QQ=', 'Q===', 'QUJD=', 'a+_b', '*']) {
        expect(paths({ ...env, payload: bad }), bad).to.deep.equal(['payload']);
        expect(paths({ dsse: { ...env, payload: bad } }), bad).to.deep.equal(['dsse.payload']);
      }
      // ⌈16384 / 3⌉ · 4 = 21848 characters at most
      expect(paths({ ...env, payload: 'A'.repeat(21848) })).to.deep.equal([]);
      expect(paths({ ...env, payload: 'A'.repeat(21852) })).to.deep.equal(['payload']);
      expect(paths({ dsse: { ...env, payload: 'A'.repeat(21848) } })).to.deep.equal([]);
      expect(paths({ dsse: { ...env, payload: 'A'.repeat(21852) } })).to.deep.equal(['dsse.payload']);
      expect(paths({ ...env, payload: '' })).to.deep.equal(['payload']);
    });

    it('signatures: 1 to 8, each a base64 sig of 1..200 characters and an optional hex keyid of up to 128', () => {
      const one = { keyid: w.current.keyid, sig: sig.toString('base64') };
      expect(paths({ ...env, signatures: Array.from({ length: 8 }, () => one) })).to.deep.equal([]);
      expect(paths({ ...env, signatures: Array.from({ length: 9 }, () => one) })).to.deep.equal(['signatures']);
      expect(paths({ dsse: { ...env, signatures: Array.from({ length: 9 }, () => one) } })).to.deep.equal(['dsse.signatures']);
      expect(paths({ ...env, signatures: [] })).to.deep.equal(['signatures']);
      expect(paths({ dsse: { ...env, signatures: [] } })).to.deep.equal(['dsse.signatures']);
      expect(paths({ ...env, signatures: 'x' })).to.deep.equal(['signatures']);
      expect(paths({ ...env, signatures: [{ keyid: 'xyz', sig: 'QQ==' }] })).to.deep.equal(['signatures.0.keyid']);
      expect(paths({ ...env, signatures: [{ keyid: 'a'.repeat(128), sig: 'QQ==' }] })).to.deep.equal([]);
      expect(paths({ ...env, signatures: [{ keyid: 'a'.repeat(129), sig: 'QQ==' }] })).to.deep.equal(['signatures.0.keyid']);
      expect(paths({ ...env, signatures: [{ keyid: 12, sig: 'QQ==' }] })).to.deep.equal(['signatures.0.keyid']);
      expect(paths({ ...env, signatures: [{ keyid: 'ab' }] })).to.deep.equal(['signatures.0.sig']);
      expect(paths({ ...env, signatures: [{ sig: '' }] })).to.deep.equal(['signatures.0.sig']);
      expect(paths({ ...env, signatures: [{ sig: 'QQ=' }] })).to.deep.equal(['signatures.0.sig']);
      expect(paths({ ...env, signatures: [{ sig: 'A'.repeat(200) }] })).to.deep.equal([]);
      expect(paths({ ...env, signatures: [{ sig: 'A'.repeat(204) }] })).to.deep.equal(['signatures.0.sig']);
      expect(paths({ dsse: { ...env, signatures: [one, { keyid: 'zz', sig: 'QQ==' }] } })).to.deep.equal(['dsse.signatures.1.keyid']);
    });
  });
});
