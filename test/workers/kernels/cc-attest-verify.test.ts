import { expect } from 'chai';
import { createHash, createPublicKey, verify } from 'node:crypto';
import cc from '../../../workers/kernels/cc-attest-verify.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runBody } from '../../helpers/kernels.js';

const sha384 = (...parts: (Buffer | string)[]): Buffer => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};
const body = (q: Record<string, unknown> = {}): any => JSON.parse(runBody(cc, q)).result;
const pubKey = (hex: string) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') }, format: 'jwk' });

const EXPECTED: Record<string, string | null> = {
  honest: null,
  tampered_component: 'measurements-match-reference',
  log_forgery: 'event-log-replays-to-quote',
  replayed_quote: 'nonce-fresh',
  forged_signature: 'signature-chain',
  unbound_report_data: 'report-data-binds-nonce',
};

const ORDER = ['signature-chain', 'nonce-fresh', 'report-data-binds-nonce', 'event-log-replays-to-quote', 'measurements-match-reference'];

describe('kernel cc-attest/verify', () => {
  it('the tampered stage is 1 + ⌊u·n⌋ from stream attack; every scenario lists its checks passed up to the failure, then not reached', () => {
    for (const [seed, stages] of [[42, 5], [3, 64], [9, 1], [17, 12]] as const) {
      const r = body({ seed, stages });
      expect(r.tampered_stage).to.equal(1 + Math.floor(new RngStreams(seed, 'cc-attest/verify').stream('attack').next() * stages));
      expect(r.stages).to.equal(stages);
      expect(r.reference_values.map((v: any) => [v.index, v.stage])).to.deep.equal(r.stage_names.map((n: string, i: number) => [i + 1, n]));
      for (const sc of r.scenarios) {
        const at = sc.expected_failure === null ? ORDER.length : ORDER.indexOf(sc.expected_failure);
        expect(sc.checks, sc.name).to.deep.equal(ORDER.map((id, k) => ({ id, passed: k < at ? true : k === at ? false : null })));
      }
    }
  });

  it('chain: R_0 … R_n recompute from the event log with SHA-384 and the quote holds R_n', () => {
    for (const seed of [0, 1, 2, 42]) {
      const r = body({ seed, stages: 7 });
      let reg: Buffer = Buffer.alloc(48);
      const trace = [reg.toString('hex')];
      for (const e of r.event_log) {
        reg = sha384(reg, Buffer.from(e.digest, 'hex'));
        trace.push(reg.toString('hex'));
      }
      expect(r.register_trace).to.deep.equal(trace);
      expect(r.final_register).to.equal(trace[7]);
      const q = JSON.parse(r.quote);
      expect(q).to.include({ alg: 'sha384', register: r.final_register, nonce: r.nonce_hex, stages: 7, device_id: r.device_id });
      expect(q.report_data).to.equal(sha384(Buffer.from(q.register, 'hex'), Buffer.from(q.nonce, 'hex')).toString('hex'));
      expect(r.device_id).to.equal(sha384(Buffer.from(r.public_key_hex, 'hex')).toString('hex'));
      expect(r.event_log.map((e: any) => e.digest)).to.deep.equal(r.reference_values.map((v: any) => v.digest));
    }
  });

  it('signature: the quote verifies under the public key; one flipped byte does not', () => {
    const r = body();
    const key = pubKey(r.public_key_hex);
    const sig = Buffer.from(r.signature_b64, 'base64');
    expect(verify(null, Buffer.from(r.quote), key, sig)).to.equal(true);
    const bad = Buffer.from(r.quote);
    bad[10] = bad[10]! ^ 1;
    expect(verify(null, bad, key, sig)).to.equal(false);
  });

  it('scenario exactness over 12 seeds: honest affirms, each attack fails at its designed check (tampered at its stage)', () => {
    for (let seed = 0; seed < 12; seed++) {
      const stages = 1 + (seed % 8);
      const r = body({ seed, stages });
      expect(r.tampered_stage).to.be.within(1, stages);
      expect(r.scenarios.map((s: any) => s.name)).to.deep.equal(Object.keys(EXPECTED));
      for (const s of r.scenarios) {
        expect(s.failed_check, s.name).to.equal(EXPECTED[s.name]);
        expect(s.status).to.equal(s.name === 'honest' ? 'affirming' : 'contraindicated');
        if (s.name === 'tampered_component') expect(s.failed_stage).to.equal(r.tampered_stage);
        else expect(s.failed_stage).to.equal(null);
      }
      expect(r.all_scenarios_as_expected).to.equal(true);
    }
  });

  it('structure: swapping two logged digests changes the register; stages n+1 extends the n trace', () => {
    const r = body({ stages: 6 });
    const fold = (ds: string[]): string => {
      let reg: Buffer = Buffer.alloc(48);
      for (const m of ds) reg = sha384(reg, Buffer.from(m, 'hex'));
      return reg.toString('hex');
    };
    const ds = r.event_log.map((e: any) => e.digest as string);
    [ds[1], ds[4]] = [ds[4], ds[1]];
    expect(fold(ds)).to.not.equal(r.final_register);
    for (const n of [1, 5, 63]) {
      const a = body({ seed: 8, stages: n });
      const b = body({ seed: 8, stages: n + 1 });
      expect(b.register_trace.slice(0, n + 1)).to.deep.equal(a.register_trace);
      expect(b.stage_names.slice(0, n)).to.deep.equal(a.stage_names);
    }
    expect(body({ stages: 64 }).stage_names[63]).to.equal('extension-64');
  });

  it('another seed is another key: the signature, the final register and the public key all change', () => {
    const a = body({ seed: 3 });
    const b = body({ seed: 4 });
    expect(a.signature_b64).to.not.equal(b.signature_b64);
    expect(a.final_register).to.not.equal(b.final_register);
    expect(a.public_key_hex).to.not.equal(b.public_key_hex);
  });
});
