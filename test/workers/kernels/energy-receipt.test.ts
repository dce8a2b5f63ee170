import { expect } from 'chai';
import { createHash } from 'node:crypto';
import energy from '../../../workers/kernels/energy-receipt.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

/** Test-side RFC 8785 for this ASCII-keyed, finite data: sorted keys, no whitespace, ECMAScript numbers. */
function jcs(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  const keys = Object.keys(v as object).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
}

const sha = (s: string | Uint8Array): string => createHash('sha256').update(s).digest('hex');
const body = (q: Record<string, unknown>): any => JSON.parse(runBody(energy, q)).result;

describe('kernel energy/receipt', () => {
  it('physics identities hold exactly: E = (P·L)·N, CO₂ = E/3.6e6·G, doubling N doubles E, G = 0 gives 0', () => {
    for (const [N, P, L, G] of [[512, 350, 0.02, 480], [1000, 123.4, 0.0037, 911.5], [262144, 10000, 60, 2000], [1, 0.5, 1e-6, 0]] as const) {
      const r = runRaw(energy, { tokens: N, power_w: P, latency_s: L, grid_gco2_per_kwh: G }).result as any;
      expect(r.nominal.energy_j).to.equal(P * L * N);
      expect(r.nominal.co2_g).to.equal(((P * L * N) / 3.6e6) * G);
      expect(r.nominal.energy_wh).to.equal((P * L * N) / 3600);
      expect(r.nominal.j_per_token).to.equal(P * L);
      expect(r.nominal.tokens_per_s).to.equal(1 / L);
      if (N <= 131072) {
        const twice = runRaw(energy, { tokens: 2 * N, power_w: P, latency_s: L, grid_gco2_per_kwh: G }).result as any;
        expect(twice.nominal.energy_j).to.equal(2 * r.nominal.energy_j);
      }
      if (G === 0) expect(r.nominal.co2_g).to.equal(0);
    }
    // defaults: 7 J/token, 3584 J per request
    const d = runRaw(energy).result as any;
    expect(d.nominal.j_per_token).to.be.closeTo(7, 1e-12);
    expect(d.nominal.energy_j).to.be.closeTo(3584, 1e-9);
  });

  it('the canonical string is the test’s own JCS of the returned receipt and the hash is its SHA-256', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = body({ seed, tokens: String(100 + 37 * seed), power_w: String(10 + seed * 77.7) });
      expect(jcs(r.receipt)).to.equal(r.canonical);
      expect(sha(r.canonical)).to.equal(r.hash);
      expect(r.hash).to.match(/^[0-9a-f]{64}$/);
      expect(r.receipt.seq).to.equal(seed);
      expect(r.receipt.schema).to.equal('svc.energy-receipt/v1');
    }
  });

  it('chains: each receipt names the previous hash, the chain re-verifies, and any edit breaks it', () => {
    const r1 = body({ seed: 1 });
    expect(r1.prev_hash).to.equal('0'.repeat(64));
    expect(r1.genesis).to.equal(true);
    const r2 = body({ seed: 2, prev_hash: r1.hash, tokens: '1024' });
    expect([r2.prev_hash, r2.genesis]).to.deep.equal([r1.hash, false]);
    const r3 = body({ seed: 3, prev_hash: r2.hash, power_w: '700' });
    const chain = [r1, r2, r3];
    let prev = '0'.repeat(64);
    for (const r of chain) {
      expect(r.receipt.prev_hash).to.equal(prev);
      expect(sha(jcs(r.receipt))).to.equal(r.hash);
      prev = r.hash;
    }
    for (const [key, value] of Object.entries({ tokens: 513, power_w: 351, co2_g: 0, prev_hash: 'a'.repeat(64), method: 'x' })) {
      const forged = { ...r2.receipt, [key]: value };
      expect(sha(jcs(forged))).to.not.equal(r2.hash);
    }
    // the same inputs with a different predecessor give a different hash
    expect(body({ seed: 2, prev_hash: 'a'.repeat(64), tokens: '1024' }).hash).to.not.equal(r2.hash);
  });

  it('every receipt and nominal field recomputed from the inputs and the regenerated trace (not read back from the body)', () => {
    const r12 = (x: number) => Number(x.toPrecision(12));
    for (const [seed, N, P, L, G] of [[9, 300, 200, 0.05, 120], [42, 512, 350, 0.02, 480], [3, 7, 0.5, 1e-6, 2000]] as const) {
      const r = body({ seed, tokens: N, power_w: P, latency_s: L, grid_gco2_per_kwh: G });
      const s = new RngStreams(seed, 'energy/receipt').stream('meter');
      let e = 0;
      let t = 0;
      for (let k = 0; k < N; k++) {
        const p = P * (1 + 0.05 * s.normal());
        const l = L * Math.exp(0.1 * s.normal() - 0.005);
        e += p * l;
        t += l;
      }
      const E = P * L * N;
      expect(r.receipt).to.deep.include({ seq: seed, tokens: N, power_w: P, latency_s: L, grid_gco2_per_kwh: G, pue: 1, energy_j: r12(E), energy_kwh: r12(E / 3.6e6), co2_g: r12((E / 3.6e6) * G), prev_hash: '0'.repeat(64) });
      expect(r.receipt.metered_energy_j).to.be.closeTo(e, 1e-9 * e);
      expect(r.receipt.metered_duration_s).to.be.closeTo(t, 1e-9 * t);
      expect(r.receipt.trace_digest).to.equal(r.metered.trace_digest);
      expect(r.nominal.energy_kwh).to.be.closeTo(E / 3.6e6, 1e-12 * (E / 3.6e6));
      expect(r.nominal.co2_mg_per_token).to.be.closeTo((((E / 3.6e6) * G) * 1000) / N, 1e-11 * Math.max(1e-12, ((E / 3.6e6) * G * 1000) / N));
      expect(r.metered.ratio_to_nominal).to.be.closeTo(e / E, 1e-9);
    }
  });

  it('the trace digest is the SHA-256 of the little-endian float64 trace regenerated in the test', () => {
    const N = 300;
    const r = runRaw(energy, { seed: 9, tokens: N, power_w: 200, latency_s: 0.05 }).result as any;
    const s = new RngStreams(9, 'energy/receipt').stream('meter');
    const buf = new DataView(new ArrayBuffer(16 * N));
    let e = 0;
    let t = 0;
    for (let k = 0; k < N; k++) {
      const p = 200 * (1 + 0.05 * s.normal());
      const l = 0.05 * Math.exp(0.1 * s.normal() - 0.005);
      buf.setFloat64(16 * k, p, true);
      buf.setFloat64(16 * k + 8, l, true);
      e += p * l;
      t += l;
    }
    expect(r.metered.trace_digest).to.equal(sha(new Uint8Array(buf.buffer)));
    expect(r.metered.energy_j).to.be.closeTo(e, 1e-9 * e);
    expect(r.metered.duration_s).to.be.closeTo(t, 1e-9 * t);
  });

  it('metering: |ratio − 1| ≤ 4√((0.05² + 0.1²)/N) over 10 seeds; metered energy > 0 when powered; P = 0 gives a null ratio', () => {
    for (let seed = 0; seed < 10; seed++) {
      const N = 1000 * (seed + 1);
      const r = runRaw(energy, { seed, tokens: N }).result as any;
      expect(Math.abs(r.metered.ratio_to_nominal - 1)).to.be.at.most(4 * Math.sqrt((0.05 ** 2 + 0.1 ** 2) / N));
      expect(r.metered.energy_j).to.be.greaterThan(0);
      expect(r.metered.duration_s).to.be.closeTo(N * 0.02, 0.05 * N * 0.02);
    }
    const off = runRaw(energy, { power_w: 0 }).result as any;
    expect(off.metered.ratio_to_nominal).to.equal(null);
    expect(off.metered.ratio_reason).to.equal('nominal energy is 0 (power_w = 0)');
    const on = runRaw(energy, {});
    expect(on.result.metered).to.not.have.property('ratio_reason');
    expect(on.checks).to.deep.equal({ canonical_reparses_to_receipt: true, metered_positive_when_powered: true });
    expect(off.metered.energy_j).to.equal(0);
  });

  it('prev_hash must be 64 hex characters; uppercase is accepted and lowercased before it is chained and hashed', () => {
    expect(rejects(energy, { prev_hash: 'xyz' })).to.deep.equal(['prev_hash:string.pattern.base']);
    expect(rejects(energy, { prev_hash: 'G'.repeat(64) })).to.deep.equal(['prev_hash:string.pattern.base']);
    const lower = '0123456789abcdef'.repeat(4);
    const upper = runBody(energy, { seed: 5, prev_hash: lower.toUpperCase() });
    const mixed = runBody(energy, { seed: 5, prev_hash: '0123456789ABCDEF0123456789abcdef'.repeat(2) });
    expect(upper).to.equal(runBody(energy, { seed: 5, prev_hash: lower }));
    expect(mixed).to.equal(upper);
    const r = JSON.parse(upper);
    expect([r.params.prev_hash, r.result.prev_hash, r.result.receipt.prev_hash]).to.deep.equal([lower, lower, lower]);
    expect(r.result.canonical).to.include(`"prev_hash":"${lower}"`);
    expect(r.result.hash).to.equal(createHash('sha256').update(r.result.canonical).digest('hex'));
    expect(rejects(energy, { prev_hash: 'a'.repeat(63) })).to.deep.equal(['prev_hash:string.pattern.base']);
    expect(rejects(energy, { prev_hash: '' })).to.deep.equal(['prev_hash:string.empty']);
    expect(rejects(energy, { prev_hash: '0123456789abcdef'.repeat(4), latency_s: '1e-6' })).to.deep.equal([]);
  });
});
