import { expect } from 'chai';
import aimc, { aimcAttention } from '../../../workers/kernels/aimc-attend.js';
import { Rng, RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

const hs = (x: number): number => Math.min(1, Math.max(0, x / 6 + 0.5));

/** Independent digital references from matrices given as rows. */
function references(Q: number[][], K: number[][], V: number[][]): { softmax: number[][]; hs: number[][] } {
  const d = Q[0]!.length;
  const softmax: number[][] = [];
  const hard: number[][] = [];
  Q.forEach((q, i) => {
    const s = K.slice(0, i + 1).map((k) => q.reduce((acc, x, m) => acc + x * k[m]!, 0) / Math.sqrt(d));
    const mx = Math.max(...s);
    const e = s.map((v) => Math.exp(v - mx));
    const z = e.reduce((a, b) => a + b, 0);
    softmax.push(Array.from({ length: d }, (_, m) => e.reduce((acc, w, j) => acc + (w / z) * V[j]![m]!, 0)));
    hard.push(Array.from({ length: d }, (_, m) => s.reduce((acc, sj, j) => acc + (hs(sj) / (i + 1)) * V[j]![m]!, 0)));
  });
  return { softmax, hs: hard };
}

const rows = (x: Float64Array[]): number[][] => x.map((r) => Array.from(r));

/**
 * Independent analog path (kernels-b §18): Q, K, V redrawn from stream qkv; each tensor quantised
 * over [−max|x|, max|x|] to `levels`; score (q̃·k̃·e^(−(i−j)/256) + 0.01·c_k·e^(−(i−j)/256)·‖q̃_i‖·ξ)/√d,
 * weight HardSigmoid/(i+1) times the decay, output Σ a·ṽ + 0.01·c_v·‖a‖·ξ′, ξ from stream read
 * (per row: one per j ≤ i, then d for the outputs); a 256-level ADC over the digital full scale.
 */
function analog(seed: number, L: number, d: number, levels: number) {
  const rng = new RngStreams(seed, 'aimc/attend');
  const qkv = rng.stream('qkv');
  const mat = () => Array.from({ length: L }, () => Array.from({ length: d }, () => qkv.normal()));
  const Q = mat();
  const K = mat();
  const V = mat();
  const quant = (X: number[][]) => {
    const c = Math.max(...X.flat().map(Math.abs));
    const step = (2 * c) / (levels - 1);
    return { c, X: X.map((row) => row.map((x) => -c + step * Math.round((x + c) / step))) };
  };
  const [q, k, v] = [quant(Q), quant(K), quant(V)];
  const read = rng.stream('read');
  const out = q.X.map((qi, i) => {
    const qn = Math.hypot(...qi);
    const a = k.X.slice(0, i + 1).map((kj, j) => {
      const decay = Math.exp(-(i - j) / 256);
      const dot = qi.reduce((s, x, m) => s + x * kj[m]!, 0);
      const score = (dot * decay + 0.01 * k.c * decay * qn * read.normal()) / Math.sqrt(d);
      return (hs(score) / (i + 1)) * decay;
    });
    const sd = 0.01 * v.c * Math.hypot(...a);
    return Array.from({ length: d }, (_, m) => a.reduce((s, w, j) => s + w * v.X[j]![m]!, 0)).map((o) => o + sd * read.normal());
  });
  const dig = references(Q, K, V);
  const cOut = Math.max(...dig.hs.flat().map(Math.abs));
  const adc = (2 * cOut) / 255;
  const quantOut = out.map((row) => row.map((o) => -cOut + adc * Math.min(255, Math.max(0, Math.round((o + cOut) / adc)))));
  return { Q, K, V, full: { q: q.c, k: k.c, v: v.c, out: cOut }, adc, out: quantOut, dig };
}

const cosRows = (a: number[][], b: number[][]) => a.reduce((s, row, i) => {
  const ab = row.reduce((t, x, m) => t + x * b[i]![m]!, 0);
  const aa = Math.hypot(...row);
  const bb = Math.hypot(...b[i]!);
  return s + (aa > 0 && bb > 0 ? ab / (aa * bb) : aa === bb ? 1 : 0);
}, 0) / a.length;

describe('kernel aimc/attend', () => {
  it('the analog output and every fidelity figure recomputed by an independent analog path on redrawn Q, K, V and read noise', () => {
    for (const [seed, L, d, levels] of [[42, 16, 8, 16], [4, 9, 3, 4], [5, 30, 20, 256], [6, 40, 4, 2]] as const) {
      const r = runRaw(aimc, { seed, seq_len: L, d_head: d, levels }).result as any;
      const ref = analog(seed, L, d, levels);
      for (const [name, X] of [['Q', ref.Q], ['K', ref.K], ['V', ref.V]] as const) rows(r[name]).forEach((row, i) => row.forEach((x, m) => expect(x).to.be.closeTo(X[i]![m]!, 1e-15)));
      expect(r.full_scales.q).to.be.closeTo(ref.full.q, 1e-15);
      expect(r.full_scales.k).to.be.closeTo(ref.full.k, 1e-15);
      expect(r.full_scales.v).to.be.closeTo(ref.full.v, 1e-15);
      expect(r.full_scales.out).to.be.closeTo(ref.full.out, 1e-15);
      expect(r.adc_step).to.be.closeTo(ref.adc, 1e-15);
      rows(r.out_aimc).forEach((row, i) => row.forEach((x, m) => expect(x, `out ${i},${m}`).to.be.closeTo(ref.out[i]![m]!, 1e-12)));
      expect(r.hardware_cosine).to.be.closeTo(cosRows(ref.out, ref.dig.hs), 1e-12);
      expect(r.algorithmic_cosine).to.be.closeTo(cosRows(ref.dig.hs, ref.dig.softmax), 1e-12);
      expect(r.matrices_omitted).to.equal(false);
    }
  });

  it('stored values sit within half a step of the truth, with Δ = 2·max|x|/(levels − 1)', () => {
    for (const [seed, levels] of [[42, 16], [1, 2], [2, 255], [3, 4096]] as const) {
      const r = runRaw(aimc, { seed, levels }).result as any;
      for (const name of ['Q', 'K', 'V'] as const) {
        const x = rows(r[name]).flat();
        const c = Math.max(...x.map(Math.abs));
        const step = (2 * c) / (levels - 1);
        expect(r.step_sizes[name.toLowerCase()]).to.be.closeTo(step, 1e-15);
        let worst = 0;
        for (const v of x) {
          const q = -c + step * Math.round((v + c) / step);
          expect(Math.abs(v - q)).to.be.at.most(step / 2 + 1e-15);
          worst = Math.max(worst, Math.abs(v - q));
        }
        expect(r.max_quant_error[name.toLowerCase()]).to.be.closeTo(worst, 1e-15);
        expect(r.half_step[name.toLowerCase()]).to.be.closeTo(step / 2, 1e-15);
      }
    }
  });

  it('recomputes both digital references and the fidelity metrics from the redrawn matrices and analog path', () => {
    for (const [seed, L, d] of [[42, 16, 8], [4, 9, 3], [5, 30, 20]] as const) {
      const out = runRaw(aimc, { seed, seq_len: L, d_head: d });
      const r = out.result as any;
      const an = analog(seed, L, d, out.params.levels);
      const ref = references(an.Q, an.K, an.V);
      expect([r.out_softmax.length, r.out_hs.length, r.out_aimc.length, r.row_hardware_error.length]).to.deep.equal([L, L, L, L]);
      ref.softmax.forEach((row, i) => row.forEach((v, m) => expect(r.out_softmax[i][m]).to.be.closeTo(v, 1e-12)));
      ref.hs.forEach((row, i) => row.forEach((v, m) => expect(r.out_hs[i][m]).to.be.closeTo(v, 1e-12)));
      const flat = (a: number[][]): number[] => a.flat();
      const rel = (a: number[], b: number[]): number => Math.sqrt(a.reduce((s, x, i) => s + (x - b[i]!) ** 2, 0) / b.reduce((s, x) => s + x * x, 0));
      const aimcOut = an.out; // the body's out_aimc equals it (the analog test above)
      rows(r.out_aimc).forEach((row, i) => row.forEach((x, m) => expect(x).to.be.closeTo(aimcOut[i]![m]!, 1e-12)));
      expect(r.hardware_rel_error).to.be.closeTo(rel(flat(aimcOut), flat(ref.hs)), 1e-12);
      expect(r.algorithmic_rel_error).to.be.closeTo(rel(flat(ref.hs), flat(ref.softmax)), 1e-12);
      r.row_hardware_error.forEach((e: number, i: number) => expect(e).to.be.closeTo(Math.hypot(...aimcOut[i]!.map((v, m) => v - ref.hs[i]![m]!)), 1e-12));
      // ADC: every analog output sits on the 256-level grid over the digital full scale
      const cOut = Math.max(...flat(ref.hs).map(Math.abs));
      const step = (2 * cOut) / 255;
      for (const v of flat(aimcOut)) expect(Math.abs((v + cOut) / step - Math.round((v + cOut) / step))).to.be.below(1e-6);
      expect(r.ops).to.deep.equal({ macs: d * L * (L + 1), dac_conversions: L * d, adc_conversions: L * d });
    }
  });

  it('in the ideal limit (no noise, no leakage, 2²⁰ levels, ADC off) the analog path equals digital HardSigmoid', () => {
    const rng = new Rng(3);
    const L = 12;
    const d = 5;
    const Q = rng.normals(L * d);
    const K = rng.normals(L * d);
    const V = rng.normals(L * d);
    const out = aimcAttention(Q, K, V, L, d, { levels: 2 ** 20, sigma: 0, tau: Infinity, cOut: null }, new Rng(4)).out;
    const split = (x: Float64Array): number[][] => Array.from({ length: L }, (_, i) => Array.from(x.subarray(i * d, (i + 1) * d)));
    const ref = references(split(Q), split(K), split(V)).hs;
    ref.forEach((row, i) => row.forEach((v, m) => expect(out[i * d + m]).to.be.closeTo(v, 1e-5)));
  });

  it('is causal: permuting future rows of V leaves earlier outputs unchanged; HardSigmoid weights lie in [0, 1]', () => {
    const rng = new Rng(6);
    const L = 10;
    const d = 4;
    const Q = rng.normals(L * d);
    const K = rng.normals(L * d);
    const V = rng.normals(L * d);
    const V2 = Float64Array.from(V);
    // swap rows 7 and 9: the same values (same max|V|, so the same quantisation grid), different future
    for (let m = 0; m < d; m++) [V2[7 * d + m], V2[9 * d + m]] = [V2[9 * d + m]!, V2[7 * d + m]!];
    const opts = { levels: 16, sigma: 0.01, tau: 256, cOut: null };
    const a = aimcAttention(Q, K, V, L, d, opts, new Rng(7)).out;
    const b = aimcAttention(Q, K, V2, L, d, opts, new Rng(7)).out;
    for (let i = 0; i < 7; i++) for (let m = 0; m < d; m++) expect(b[i * d + m]).to.equal(a[i * d + m]);
    expect(Array.from(b.subarray(9 * d))).to.not.deep.equal(Array.from(a.subarray(9 * d)));
    for (const x of [-100, -3, 0, 2.9, 3, 50]) expect(hs(x)).to.be.within(0, 1);
  });

  it('hardware error falls with precision: mean over seeds 0…9 at levels 4 > 16 > 256', () => {
    const mean = (levels: number): number => {
      let s = 0;
      for (let seed = 0; seed < 10; seed++) s += (runRaw(aimc, { seed, levels }).result as any).hardware_rel_error;
      return s / 10;
    };
    const [e4, e16, e256] = [mean(4), mean(16), mean(256)];
    expect(e4).to.be.greaterThan(e16);
    expect(e16).to.be.greaterThan(e256);
  });

  it('omits the matrices above 1024 entries', () => {
    const r = runRaw(aimc, { seq_len: 64, d_head: 32 }).result as any;
    expect(r.matrices_omitted).to.equal(true);
    expect(r.Q).to.equal(undefined);
    expect(r.row_hardware_error).to.have.length(64);
  });
});
