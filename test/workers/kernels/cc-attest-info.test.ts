import { expect } from 'chai';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { RngStreams } from '../../../src/lib/prng.js';
import info from '../../../workers/kernels/cc-attest-info.js';
import verifyKernel from '../../../workers/kernels/cc-attest-verify.js';
import { runBody } from '../../helpers/kernels.js';

const sha384 = (...parts: (Buffer | string)[]): Buffer => {
  const h = createHash('sha384');
  for (const p of parts) h.update(p);
  return h.digest();
};
const jcs = (o: Record<string, unknown>): string => `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`).join(',')}}`;
const body = (q: Record<string, unknown> = {}): any => JSON.parse(runBody(info, q)).result;

/** Stage i's version and image redrawn from the shared stream cc-attest/stage/<i>: int(10), int(50), int(100), then 16 little-endian uint32 words. */
function descriptor(seed: number, i: number): { version: string; image: string } {
  const s = new RngStreams(seed, 'cc-attest/info').shared(`cc-attest/stage/${i}`);
  const version = `v${Math.floor(s.next() * 10)}.${Math.floor(s.next() * 50)}.${Math.floor(s.next() * 100)}`;
  const words = Array.from({ length: 16 }, () => Math.floor(s.next() * 2 ** 32));
  return { version, image: words.map((w) => Buffer.from([w & 255, (w >>> 8) & 255, (w >>> 16) & 255, w >>> 24]).toString('hex')).join('') };
}

describe('kernel cc-attest/info', () => {
  it('the descriptors are the seeded draws, the components the catalogue, the key the documented Ed25519 derivation', () => {
    const components = ['CPU security processor / TDX module firmware (root of trust)', 'guest UEFI (OVMF) in the launch measurement', 'guest kernel, initrd and command line', 'GPU firmware and VBIOS, SPDM measurement report with CC mode on', 'container image and model-weights digest with the runtime policy'];
    for (const seed of [0, 42, 4294967295]) {
      const r = body({ seed, stages: 7 });
      expect(r.stages).to.have.length(7);
      r.stages.forEach((st: any, k: number) => {
        const d = descriptor(seed, k + 1);
        expect([st.version, st.image]).to.deep.equal([d.version, d.image]);
        expect(st.component).to.equal(components[k] ?? `further configuration component ${k + 1}`);
      });
      // RFC 8410 PKCS#8 of the 32-byte seed SHA-256("svc/cc-attest/ak/<seed>")
      const keySeed = createHash('sha256').update(`svc/cc-attest/ak/${seed}`).digest();
      const pub = createPublicKey(createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), keySeed]), format: 'der', type: 'pkcs8' }));
      const raw = Buffer.from(pub.export({ format: 'jwk' }).x!, 'base64url');
      expect(r.endorsement.public_key_hex).to.equal(raw.toString('hex'));
      expect(r.endorsement.device_id).to.equal(sha384(raw).toString('hex'));
      expect(r.stages.map((st: any) => st.index)).to.deep.equal([1, 2, 3, 4, 5, 6, 7]);
    }
  });

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
});
