import { expect } from 'chai';
import { createHash } from 'node:crypto';
import info from '../../../workers/kernels/cc-attest-info.js';
import verifyKernel from '../../../workers/kernels/cc-attest-verify.js';
import { rejects, runBody } from '../../helpers/kernels.js';

const sha384 = (...parts: (Buffer | string)[]): Buffer => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};
const jcs = (o: Record<string, unknown>): string => `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`).join(',')}}`;
const body = (q: Record<string, unknown> = {}): any => JSON.parse(runBody(info, q)).result;

describe('kernel cc-attest/info', () => {
  it('replays: every measurement is SHA-384(JCS(descriptor)) and the extend fold gives every pcr_after and pcr_final', () => {
    for (const seed of [0, 1, 42, 4294967295]) {
      const r = body({ seed, stages: 9 });
      let reg: Buffer = Buffer.alloc(48);
      r.stages.forEach((s: any, i: number) => {
        expect(s.index).to.equal(i + 1);
        const descriptor = { index: s.index, stage: s.name, component: s.component, version: s.version, image: s.image };
        expect(s.measurement).to.equal(sha384(jcs(descriptor)).toString('hex'));
        reg = sha384(reg, Buffer.from(s.measurement, 'hex'));
        expect(s.pcr_after).to.equal(reg.toString('hex'));
      });
      expect(r.pcr_final).to.equal(reg.toString('hex'));
      expect(r.stages.map((s: any) => s.name)).to.deep.equal(['rot', 'firmware', 'kernel', 'gpu', 'workload', 'extension-6', 'extension-7', 'extension-8', 'extension-9']);
    }
  });

  it('is order sensitive: swapping two measurements changes the final register', () => {
    const r = body();
    const fold = (ms: string[]): string => {
      let reg: Buffer = Buffer.alloc(48);
      for (const m of ms) reg = sha384(reg, Buffer.from(m, 'hex'));
      return reg.toString('hex');
    };
    const ms = r.stages.map((s: any) => s.measurement as string);
    expect(fold(ms)).to.equal(r.pcr_final);
    for (let i = 0; i + 1 < ms.length; i++) {
      const swapped = [...ms];
      [swapped[i], swapped[i + 1]] = [swapped[i + 1]!, swapped[i]!];
      expect(fold(swapped)).to.not.equal(r.pcr_final);
    }
  });

  it('is prefix consistent in stages for the same seed', () => {
    for (let k = 1; k < 16; k++) {
      const a = body({ seed: 5, stages: k });
      const b = body({ seed: 5, stages: k + 1 });
      expect(b.stages.slice(0, k)).to.deep.equal(a.stages);
      expect(b.stages[k - 1].pcr_after).to.equal(a.pcr_final);
    }
  });

  it('binds the nonce: report_data = SHA-384(pcr_final ‖ nonce), nonce = SHA-256 of the seed label', () => {
    for (const seed of [3, 4]) {
      const r = body({ seed });
      expect(r.nonce).to.equal(createHash('sha256').update(`svc-cc-attest-nonce:${seed}`).digest('hex'));
      expect(r.report_data).to.equal(sha384(Buffer.from(r.pcr_final, 'hex'), Buffer.from(r.nonce, 'hex')).toString('hex'));
    }
    expect(body({ seed: 3 }).nonce).to.not.equal(body({ seed: 4 }).nonce);
    const r = body();
    expect(r.policy.map((p: any) => p.id)).to.deep.equal(['signature-chain', 'nonce-fresh', 'report-data-binds-nonce', 'event-log-replays-to-quote', 'measurements-match-reference']);
    expect(r.policy.find((p: any) => p.id === 'signature-chain').simulated).to.equal(true);
    expect(r.hardware.present).to.equal(false);
  });

  it('agrees with /cc-attest/verify: same reference values, key and nonce; its honest evidence is affirmed', () => {
    for (const [seed, stages] of [[42, 5], [7, 1], [99, 16]] as const) {
      const a = body({ seed, stages });
      const v = JSON.parse(runBody(verifyKernel, { seed, stages })).result;
      expect(v.reference_values.map((x: any) => x.digest)).to.deep.equal(a.stages.map((s: any) => s.measurement));
      expect(v.final_register).to.equal(a.pcr_final);
      expect(v.nonce_hex).to.equal(a.nonce);
      expect(v.public_key_hex).to.equal(a.endorsement.public_key_hex);
      expect(JSON.parse(v.quote).report_data).to.equal(a.report_data);
      expect(v.scenarios[0]).to.include({ name: 'honest', status: 'affirming' });
    }
  });

  it('is deterministic in seed and sensitive to it', () => {
    expect(runBody(info, { seed: 11 })).to.equal(runBody(info, { seed: 11 }));
    expect(runBody(info, { seed: 11 })).to.not.equal(runBody(info, { seed: 12 }));
  });

  it('refuses out-of-range and malformed parameters', () => {
    expect(rejects(info, { stages: '0' })).to.deep.equal(['stages:number.min']);
    expect(rejects(info, { stages: '17' })).to.deep.equal(['stages:number.max']);
    expect(rejects(info, { stages: '2.5' })).to.deep.equal(['stages:qint.parse']);
    expect(rejects(info, { seed: '-1' })).to.deep.equal(['seed:number.min']);
    expect(rejects(info, { stage: '3' })).to.deep.equal(['stage:object.unknown']);
    expect(rejects(info, { stages: '16' })).to.deep.equal([]);
  });
});
