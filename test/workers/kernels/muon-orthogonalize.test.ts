import { expect } from 'chai';
import muon, { makeGradient, newtonSchulz, polarFactor } from '../../../workers/kernels/muon-orthogonalize.js';
import { RngStreams } from '../../../src/lib/prng.js';
import type { Matrix } from '../../../workers/lib/linalg.js';
import { runRaw } from '../../helpers/kernels.js';

type M = number[][];
const mul = (a: M, b: M): M => a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
const tr = (a: M): M => a[0]!.map((_, j) => a.map((row) => row[j]!));
const rowsOf = (m: Matrix): M => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
const fro2 = (a: M): number => a.reduce((s, r) => s + r.reduce((t, v) => t + v * v, 0), 0);
const trace = (a: M): number => a.reduce((s, r, i) => s + r[i]!, 0);
const p = (x: number, steps: number): number => {
  for (let s = 0; s < steps; s++) x = 3.4445 * x - 4.775 * x ** 3 + 2.0315 * x ** 5;
  return x;
};
/** Naive Newton–Schulz on nested arrays, written from the Muon reference code. */
function refNS(g: M, steps: number): M {
  const norm = Math.sqrt(fro2(g)) + 1e-7;
  const tall = g.length > g[0]!.length;
  let x = (tall ? tr(g) : g).map((r) => r.map((v) => v / norm));
  for (let s = 0; s < steps; s++) {
    const A = mul(x, tr(x));
    const B = A.map((r, i) => r.map((v, j) => -4.775 * v + 2.0315 * mul(A, A)[i]![j]!));
    const BX = mul(B, x);
    x = x.map((r, i) => r.map((v, j) => 3.4445 * v + BX[i]![j]!));
  }
  return tall ? tr(x) : x;
}
const gradient = (seed: number, rows: number, cols: number, decay = 0): Matrix => makeGradient(new RngStreams(seed, 'muon/orthogonalize').stream('G'), rows, cols, decay);

describe('kernel muon/orthogonalize', () => {
  it('spectral identity: output_sv = p^(steps)(input ratios), and both spectra match trace moments of an independent G and O', () => {
    for (let seed = 0; seed < 10; seed++) {
      const [rows, cols, steps, decay] = ([[8, 12, 5, 0], [12, 8, 3, 0.5], [10, 10, 5, 1], [6, 20, 8, 0]] as const)[seed % 4]!;
      const r = runRaw(muon, { seed, rows, cols, steps, decay }).result as any;
      const m = Math.min(rows, cols);
      const x = Array.from(r.input_sv_ratio as Float64Array);
      const out = Array.from(r.output_sv as Float64Array);
      const pred = x.map((v) => p(v, steps)).sort((a, b) => a - b);
      pred.forEach((v, i) => expect(out[i]).to.be.closeTo(v, 1e-10));
      const G = rowsOf(gradient(seed, rows, cols, decay));
      const O = refNS(G, steps);
      const c = Math.sqrt(fro2(G)) + 1e-7;
      const gram = rows <= cols ? mul(G, tr(G)) : mul(tr(G), G);
      const ogram = rows <= cols ? mul(O, tr(O)) : mul(tr(O), O);
      // Σ x² = tr(GGᵀ)/c², Σ x⁴ = tr((GGᵀ)²)/c⁴; Σ σ_out² = ‖O‖², Σ σ_out⁴ = ‖OOᵀ‖²
      expect(x.reduce((s, v) => s + v * v, 0)).to.be.closeTo(trace(gram) / c ** 2, 1e-10);
      expect(x.reduce((s, v) => s + v ** 4, 0)).to.be.closeTo(trace(mul(gram, gram)) / c ** 4, 1e-10);
      expect(out.reduce((s, v) => s + v * v, 0)).to.be.closeTo(fro2(O), 1e-10);
      expect(out.reduce((s, v) => s + v ** 4, 0)).to.be.closeTo(fro2(ogram), 1e-10);
      expect(out).to.have.length(m);
      expect(r.frobenius_g).to.be.closeTo(c - 1e-7, 1e-12 * c);
      expect(Array.from(r.predicted_sv as Float64Array)).to.have.length(m);
      pred.forEach((v, i) => expect(r.predicted_sv[i]).to.be.closeTo(v, 1e-12));
      expect(r.shape).to.deep.equal([rows, cols]);
      expect(r.coefficients).to.deep.equal([3.4445, -4.775, 2.0315]);
    }
  });

  it('the kernel iteration equals an independent naive Newton–Schulz', () => {
    for (const [rows, cols] of [[5, 9], [9, 5], [7, 7]] as const) {
      const g = gradient(3, rows, cols, 0.3);
      const O = rowsOf(newtonSchulz(g, 5));
      const ref = refNS(rowsOf(g), 5);
      O.forEach((row, i) => row.forEach((v, j) => expect(v).to.be.closeTo(ref[i]![j]!, 1e-12)));
    }
  });

  it('band (steps = 5): outputs with input ratio ≥ 0.002 lie in [0.68, 1.21], for seeds 0–9, with or without decay', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(muon, { seed, decay: seed % 2 ? 1.5 : 0 }).result as any;
      const x = Array.from(r.input_sv_ratio as Float64Array);
      const ys = x.filter((v) => v >= 0.002).map((v) => p(v, 5));
      for (const y of ys) expect(y).to.be.within(0.68, 1.21);
      expect(r.band.under_converged).to.equal(x.length - ys.length);
      expect(r.band.min).to.be.closeTo(Math.min(...ys), 1e-12);
      expect(r.band.max).to.be.closeTo(Math.max(...ys), 1e-12);
      expect(r.band.min).to.be.at.least(0.68);
      expect(r.band.max).to.be.at.most(1.21);
    }
  });

  it('polar error, orthogonality error and RMS follow from the spectrum', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(muon, { seed, rows: 16, cols: 24, steps: 1 + (seed % 6) }).result as any;
      const ys = Array.from(r.output_sv as Float64Array);
      const x = Array.from(r.input_sv_ratio as Float64Array).map((v) => p(v, 1 + (seed % 6)));
      expect(r.polar_rel_err).to.be.closeTo(Math.sqrt(x.reduce((s, v) => s + (v - 1) ** 2, 0) / 16), 1e-9);
      expect(r.polar_rel_err_predicted).to.be.closeTo(Math.sqrt(x.reduce((s, v) => s + (v - 1) ** 2, 0) / 16), 1e-12);
      expect(r.orth_err).to.be.closeTo(Math.sqrt(ys.reduce((s, v) => s + (v * v - 1) ** 2, 0)) / 4, 1e-9);
      expect(r.rms_matched).to.be.closeTo(0.2 * Math.sqrt(ys.reduce((s, v) => s + v * v, 0) / 16), 1e-12);
    }
    // more steps converge: polar error at steps 5 is below steps 1 on average
    const at = (steps: number): number => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].reduce((s, seed) => s + (runRaw(muon, { seed, steps }).result as any).polar_rel_err, 0);
    expect(at(5)).to.be.below(at(1));
  });

  it('symmetries: O(cG) = O(G) up to the ε of the normaliser; O(Gᵀ) = O(G)ᵀ bit-for-bit when rows ≠ cols', () => {
    const g = gradient(5, 12, 20);
    const o = newtonSchulz(g, 5);
    const scale = (c: number): Matrix => newtonSchulz({ ...g, data: g.data.map((v) => v * c) }, 5);
    // ε = 1e-7 in the normaliser moves the input ratios by ~1e-8 relative at ‖G‖_F ≈ 15
    scale(37.5).data.forEach((v, i) => expect(v).to.be.closeTo(o.data[i]!, 1e-7));
    // at large norms ε is negligible and scale invariance is exact to rounding
    const big = scale(1e6);
    scale(3e6).data.forEach((v, i) => expect(v).to.be.closeTo(big.data[i]!, 1e-12));
    const gt: Matrix = { rows: 20, cols: 12, data: Float64Array.from(tr(rowsOf(g)).flat()) };
    expect(Array.from(newtonSchulz(gt, 5).data)).to.deep.equal(tr(rowsOf(o)).flat());
  });

  it('G from the documented draws: one normal per entry, row i scaled by (1 + i)^−decay', () => {
    for (const [seed, rows, cols, decay] of [[1, 6, 9, 1.5], [2, 9, 6, 0.7]] as const) {
      const gs = new RngStreams(seed, 'muon/orthogonalize').stream('G');
      const G = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, () => gs.normal() * (1 + i) ** -decay));
      expect(rowsOf(makeGradient(new RngStreams(seed, 'muon/orthogonalize').stream('G'), rows, cols, decay))).to.deep.equal(G);
      const r = runRaw(muon, { seed, rows, cols, decay }).result as any;
      expect(r.frobenius_g).to.be.closeTo(Math.sqrt(fro2(G)), 1e-12);
    }
  });

  it('the kernel checks hold for wide, tall and square G: the spectral gap is the reported max |σ_out − p(x)|, the polar error matches its prediction', () => {
    for (let seed = 0; seed < 6; seed++) {
      for (const [rows, cols] of [[8, 12], [12, 8], [10, 10]] as const) {
        const out = runRaw(muon, { seed, rows, cols, steps: 2 + seed, decay: seed / 4 }) as any;
        const r = out.result;
        const gap = Math.max(...Array.from(r.output_sv as Float64Array, (v, i) => Math.abs(v - r.predicted_sv[i])));
        expect(out.checks.spectral_identity_gap).to.equal(gap);
        expect(gap).to.be.at.most(1e-10);
        expect(out.checks.polar_err_matches_prediction).to.equal(true);
        // the exact polar factor is independent of the orientation used inside: check it against the spectrum
        const x = Array.from(r.input_sv_ratio as Float64Array).map((v) => p(v, 2 + seed));
        expect(r.polar_rel_err).to.be.closeTo(Math.sqrt(x.reduce((s, v) => s + (v - 1) ** 2, 0) / Math.min(rows, cols)), 1e-9);
        expect(r.band).to.not.have.property('reason');
        expect(r).to.not.have.property('polar_reason');
      }
    }
  });

  it('under-converged ratios (< 0.002) are counted and left out of the band (decay 2 makes them)', () => {
    const r = runRaw(muon, { seed: 3, rows: 64, cols: 128, steps: 5, decay: 2 }).result as any;
    const x = Array.from(r.input_sv_ratio as Float64Array);
    const under = x.filter((v) => v < 0.002).length;
    expect(under).to.be.above(0);
    expect(r.band.under_converged).to.equal(under);
    const ys = x.filter((v) => v >= 0.002).map((v) => p(v, 5));
    expect(r.band.min).to.be.closeTo(Math.min(...ys), 1e-12);
    expect(r.band.max).to.be.closeTo(Math.max(...ys), 1e-12);
  });

  it('the exact polar factor is null when σ_min²/σ_max² ≤ 1e-24 and an orthogonal matrix otherwise', () => {
    const mk = (d: number[][]): Matrix => ({ rows: d.length, cols: d[0]!.length, data: Float64Array.from(d.flat()) });
    // σ = 1e6 and 1e-7: σ_min²/σ_max² = 1e-26
    expect(polarFactor(mk([[1e6, 0, 0], [0, 1e-7, 0]]))).to.equal(null);
    expect(polarFactor(mk([[1, 2], [2, 4], [0, 0]]))).to.equal(null);
    expect(polarFactor(mk([[0, 0], [0, 0]]))).to.equal(null);
    // σ = 1e6 and 1e-5: ratio 1e-22, kept; the polar factor of diag(σ) is [I 0]
    const q = polarFactor(mk([[1e6, 0, 0], [0, 1e-5, 0]]))!;
    Array.from(q.data).forEach((v, i) => expect(v).to.be.closeTo([1, 0, 0, 0, 1, 0][i]!, 1e-9));
  });

});
