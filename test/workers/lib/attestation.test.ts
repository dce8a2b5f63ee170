import { expect } from 'chai';
import { createHash, createPublicKey, sign, verify } from 'node:crypto';
import {
  appraise,
  attestationKey,
  buildEvidence,
  extend,
  measure,
  POLICY,
  publicKeyFromHex,
  referenceValues,
  replay,
  stageDescriptor,
  stageEntry,
  tamperDescriptor,
  verifierNonce,
  type Evidence,
} from '../../../workers/lib/attestation.js';
import { RngStreams } from '../../../src/lib/prng.js';

const sha384 = (...parts: (Buffer | string)[]): Buffer => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** JCS for flat ASCII-keyed objects of strings and integers. */
const jcs = (o: Record<string, unknown>): string => `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`).join(',')}}`;

describe('lib/attestation', () => {
  it('has one catalogue: the five named stages, then extension-<index>', () => {
    expect([1, 2, 3, 4, 5, 6, 64].map((i) => stageEntry(i).name)).to.deep.equal(['rot', 'firmware', 'kernel', 'gpu', 'workload', 'extension-6', 'extension-64']);
    expect(() => stageEntry(0)).to.throw(RangeError);
  });

  it('extends with SHA-384(R ‖ m) over raw bytes and replays from 48 zero bytes', () => {
    const ms = ['a', 'b', 'c'].map((s) => sha384(s).toString('hex'));
    let r: Buffer = Buffer.alloc(48);
    const expected = [r.toString('hex')];
    for (const m of ms) {
      r = sha384(r, Buffer.from(m, 'hex'));
      expected.push(r.toString('hex'));
    }
    expect(replay(ms)).to.deep.equal(expected);
    expect(extend(Buffer.alloc(48), Buffer.from(ms[0]!, 'hex')).toString('hex')).to.equal(expected[1]);
    // order sensitivity: swapping two measurements changes the final register
    expect(replay([ms[1]!, ms[0]!, ms[2]!])[3]).to.not.equal(expected[3]);
  });

  it('measures SHA-384 of the JCS of the descriptor; tampering flips the last image byte', () => {
    const rng = new RngStreams(7, 'any/kernel');
    const d = stageDescriptor(rng, 2);
    expect(d).to.include({ index: 2, stage: 'firmware' });
    expect(d.version).to.match(/^v\d\.\d{1,2}\.\d{1,2}$/);
    expect(d.image).to.have.length(128);
    expect(measure(d)).to.equal(sha384(jcs(d as unknown as Record<string, unknown>)).toString('hex'));
    const t = tamperDescriptor(d);
    expect(t.image.slice(0, 126)).to.equal(d.image.slice(0, 126));
    expect(parseInt(t.image.slice(126), 16)).to.equal(parseInt(d.image.slice(126), 16) ^ 0xff);
    expect(measure(t)).to.not.equal(measure(d));
  });

  it('draws stages from shared streams: independent of the kernel id and prefix-consistent in stages', () => {
    const a = referenceValues(new RngStreams(9, 'cc-attest/info'), 4);
    const b = referenceValues(new RngStreams(9, 'cc-attest/verify'), 6);
    expect(b.values.slice(0, 4)).to.deep.equal(a.values);
    expect(b.trace.slice(0, 5)).to.deep.equal(a.trace);
    expect(referenceValues(new RngStreams(10, 'cc-attest/info'), 4).values[0]!.digest).to.not.equal(a.values[0]!.digest);
  });

  it('derives a deterministic Ed25519 key whose raw public key and device id recompute', () => {
    const k = attestationKey(42);
    const x = Buffer.from(createPublicKey(k.privateKey).export({ format: 'jwk' }).x!, 'base64url');
    expect(k.publicKeyHex).to.equal(x.toString('hex'));
    expect(k.deviceId).to.equal(sha384(x).toString('hex'));
    expect(attestationKey(42).publicKeyHex).to.equal(k.publicKeyHex);
    expect(attestationKey(43).publicKeyHex).to.not.equal(k.publicKeyHex);
    expect(publicKeyFromHex(k.publicKeyHex).export({ format: 'jwk' }).x).to.equal(x.toString('base64url'));
  });

  describe('appraisal', () => {
    const seed = 1234;
    const rng = new RngStreams(seed, 'cc-attest/verify');
    const stages = 6;
    const ref = referenceValues(rng, stages);
    const key = attestationKey(seed);
    const verifier = { expectedNonce: verifierNonce(seed), reference: ref.values, trustedKey: key.publicKey };

    it('affirms honest evidence, whose signature verifies with node:crypto and whose quote binds the nonce', () => {
      const ev = buildEvidence(rng, stages);
      const a = appraise(ev, verifier);
      expect(a).to.deep.include({ status: 'affirming', failed_check: null, failed_stage: null });
      expect(a.results.map((r) => r.id)).to.deep.equal(POLICY.map((p) => p.id));
      expect(verify(null, Buffer.from(ev.quote), key.publicKey, Buffer.from(ev.signature_b64, 'base64'))).to.equal(true);
      const q = JSON.parse(ev.quote);
      expect(q.register).to.equal(ref.trace[stages]);
      expect(q.report_data).to.equal(sha384(Buffer.from(q.register, 'hex'), Buffer.from(verifierNonce(seed), 'hex')).toString('hex'));
      expect(verifierNonce(seed)).to.equal(createHash('sha256').update(`svc-cc-attest-nonce:${seed}`).digest('hex'));
    });

    it('fails each attack at exactly its designed check, and stops there', () => {
      const cases: [Parameters<typeof buildEvidence>[2], string][] = [
        [{ tamperStage: 3 }, 'measurements-match-reference'],
        [{ tamperStage: 3, forgeLog: true }, 'event-log-replays-to-quote'],
        [{ staleNonce: true }, 'nonce-fresh'],
        [{ wrongKey: true }, 'signature-chain'],
        [{ unboundReportData: true }, 'report-data-binds-nonce'],
      ];
      for (const [opts, check] of cases) {
        const a = appraise(buildEvidence(rng, stages, opts), verifier);
        expect(a.status).to.equal('contraindicated');
        expect(a.failed_check).to.equal(check);
        const at = a.results.findIndex((r) => r.passed === false);
        expect(a.results[at]!.id).to.equal(check);
        expect(a.results.slice(0, at).every((r) => r.passed === true)).to.equal(true);
        expect(a.results.slice(at + 1).every((r) => r.passed === null)).to.equal(true);
      }
      expect(appraise(buildEvidence(rng, stages, { tamperStage: 3 }), verifier).failed_stage).to.equal(3);
    });

    it('corrupting any one reference measurement fails measurements-match-reference for that stage only', () => {
      const ev = buildEvidence(rng, stages);
      for (let i = 1; i <= stages; i++) {
        const corrupted = ref.values.map((v) => (v.index === i ? { ...v, digest: sha384(v.digest).toString('hex') } : v));
        const a = appraise(ev, { ...verifier, reference: corrupted });
        expect([a.failed_check, a.failed_stage]).to.deep.equal(['measurements-match-reference', i]);
      }
    });

    it('a logged stage must match its reference by name, and every logged index needs a reference', () => {
      const ev = buildEvidence(rng, stages);
      // the digest replays, but the log names stage 2 as another stage
      const renamed: Evidence = { ...ev, event_log: ev.event_log.map((e) => (e.index === 2 ? { ...e, stage: 'not-a-stage' } : e)) };
      expect(appraise(renamed, verifier)).to.deep.include({ failed_check: 'measurements-match-reference', failed_stage: 2 });
      // the verifier holds references for fewer stages than the device logged
      const fewer = appraise(ev, { ...verifier, reference: ref.values.slice(0, -1) });
      expect(fewer).to.deep.include({ failed_check: 'measurements-match-reference', failed_stage: stages });
    });

    it('a quote that is not JSON fails the signature check, even when it carries a valid signature', () => {
      const bytes = 'not a quote';
      const signed: Evidence = { quote: bytes, signature_b64: sign(null, Buffer.from(bytes), key.privateKey).toString('base64'), event_log: [] };
      const a = appraise(signed, verifier);
      expect(a).to.deep.include({ status: 'contraindicated', failed_check: 'signature-chain', failed_stage: null });
      expect(a.results.slice(1).every((r) => r.passed === null)).to.equal(true);
    });

    it('refuses a modified quote or log', () => {
      const ev = buildEvidence(rng, stages);
      const flipped: Evidence = { ...ev, quote: ev.quote.replace('"stages":6', '"stages":5') };
      expect(appraise(flipped, verifier).failed_check).to.equal('signature-chain');
      const swapped: Evidence = { ...ev, event_log: [ev.event_log[1]!, ev.event_log[0]!, ...ev.event_log.slice(2)] };
      expect(appraise(swapped, verifier).failed_check).to.equal('event-log-replays-to-quote');
      const short: Evidence = { ...ev, event_log: ev.event_log.slice(0, -1) };
      expect(appraise(short, verifier).failed_check).to.equal('event-log-replays-to-quote');
    });
  });
});
