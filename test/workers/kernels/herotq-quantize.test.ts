import { expect } from 'chai';
import herotq, { BETA_GRID, condition, drawInputs, hessian, projectRotation, quantizeRows, roundHalfEven, spectrum, hadamardRotation } from '../../../workers/kernels/herotq-quantize.js';
import { jacobiEigen, type Matrix } from '../../../workers/lib/linalg.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

type Mat = number[][];
const toMat = (m: Matrix): Mat => Array.from({ length: m.rows }, (_, i) => Array.from(m.data.subarray(i * m.cols, (i + 1) * m.cols)));
const mul = (a: Mat, b: Mat): Mat => a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
const tr = (a: Mat): Mat => a[0]!.map((_, j) => a.map((row) => row[j]!));

function inputs(seed: number, nIn: number, nOut: number, N: number, outliers: number, gain: number) {
  return drawInputs(new RngStreams(seed, 'herotq/quantize'), nIn, nOut, N, outliers, gain);
}

/** The row scales and integer codes of the same RTN (scale max|row|/qmax, 1 for a zero row), row-major. */
function rtnCodes(W: Mat, bits: number): { scales: number[]; codes: number[] } {
  const qmax = 2 ** (bits - 1) - 1;
  const scales = W.map((row) => Math.max(...row.map(Math.abs))).map((m) => (m > 0 ? m / qmax : 1));
  const codes = W.flatMap((row, i) => row.map((v) => {
    const x = v / scales[i]!;
    const q = Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : Math.round(x);
    return Math.max(-qmax, Math.min(qmax, q)) + 0; // + 0: integer codes carry no sign on zero
  }));
  return { scales, codes };
}

/** Independent symmetric INT-b RTN per row with round-half-even; returns the dequantised rows. */
function rtn(W: Mat, bits: number): Mat {
  const qmax = 2 ** (bits - 1) - 1;
  const rhe = (x: number): number => {
    const r = Math.round(x);
    return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
  };
  return W.map((row) => {
    const m = Math.max(...row.map(Math.abs));
    const s = m > 0 ? m / qmax : 1;
    return row.map((v) => Math.max(-qmax, Math.min(qmax, rhe(v / s))) * s);
  });
}

/** ‖ΔW·X‖²_F / N: the loss written through the calibration data, not through H. */
function lossViaData(dW: Mat, X: Mat): number {
  const Y = mul(dW, X);
  return Y.reduce((s, row) => s + row.reduce((a, v) => a + v * v, 0), 0) / X[0]!.length;
}

describe('kernel herotq/quantize', () => {
  it('the conditioned Hessian has the closed-form spectrum g^β·λ^(1−β), and W′·T⁻¹ = W', () => {
    for (const [seed, nIn, nOut, N, outl, gain] of [[42, 32, 8, 256, 4, 10], [7, 16, 4, 40, 2, 30], [3, 8, 5, 8, 0, 1]] as const) {
      const inp = inputs(seed, nIn, nOut, N, outl, gain);
      const X = toMat(inp.X);
      const Href = mul(X, tr(X)).map((row) => row.map((v) => v / N));
      const lam = Array.from(jacobiEigen({ rows: nIn, cols: nIn, data: Float64Array.from(Href.flat()) }).values);
      const g = Math.exp(lam.reduce((s, l) => s + Math.log(l), 0) / nIn);
      const H = hessian(inp.X);
      const sp = spectrum(H);
      const UtQ = projectRotation(sp, hadamardRotation(inp.signs));
      const body = runRaw(herotq, { seed, n_in: nIn, n_out: nOut, calib: N, outliers: outl, outlier_gain: gain }).result as any;
      expect(body.hessian.condition).to.be.closeTo(lam[nIn - 1]! / lam[0]!, 1e-8 * body.hessian.condition);
      expect(body.hessian.lambda_max).to.be.closeTo(lam[nIn - 1]!, 1e-9 * lam[nIn - 1]!);
      expect(body.hessian.lambda_min).to.be.closeTo(lam[0]!, 1e-8 * lam[nIn - 1]!);
      expect(body.hessian.geo_mean).to.be.closeTo(g, 1e-8 * g);
      // outliers from stream `outliers`: a partial Fisher–Yates of the channels, then one uniform each
      const os = new RngStreams(seed, 'herotq/quantize').stream('outliers');
      const idx = Array.from({ length: nIn }, (_, i) => i);
      for (let i = 0; i < outl; i++) {
        const j = i + Math.floor(os.next() * (nIn - i));
        [idx[i], idx[j]] = [idx[j]!, idx[i]!];
      }
      const scaleOf = new Map(idx.slice(0, outl).map((ch) => [ch, gain * (1 + os.next())]));
      const channels = [...scaleOf.keys()].sort((a, b) => a - b);
      expect(body.outlier_channels).to.deep.equal(channels);
      expect(body.outlier_scales).to.deep.equal(channels.map((ch) => scaleOf.get(ch)));
      const bits: number = body.quant.bits;
      const Wm = toMat(inp.W);
      const mse = (D: Mat): number => D.flat().reduce((a, v) => a + v * v, 0) / D.flat().length;
      expect(body.rtn.weight_mse).to.be.closeTo(mse(rtn(Wm, bits).map((row, i) => row.map((v, j) => Wm[i]![j]! - v))), 1e-15);
      expect(body.sweep.map((x: any) => x.beta)).to.deep.equal([...BETA_GRID]);
      expect(body.rotation).to.deep.equal({ kind: 'randomized-hadamard', n: nIn, signs: inp.signs });
      const losses: number[] = [];
      const quantOf: { scales: number[]; codes: number[] }[] = [];
      for (const beta of BETA_GRID) {
        const c = condition(inp.W, H, sp, UtQ, beta);
        const got = Array.from(jacobiEigen(c.Hp).values);
        const want = lam.map((l) => g ** beta * l ** (1 - beta)).sort((a, b) => a - b);
        got.forEach((v, k) => expect(Math.abs(v - want[k]!)).to.be.at.most(1e-8 * want[k]!));
        const back = mul(toMat(c.Wp), toMat(c.Tinv));
        const W = toMat(inp.W);
        const wmax = Math.max(...W.flat().map(Math.abs));
        back.forEach((row, i) => row.forEach((v, j) => expect(Math.abs(v - W[i]![j]!)).to.be.at.most(1e-9 * wmax)));
        const row = body.sweep.find((s: any) => s.beta === beta);
        expect(row.condition).to.be.closeTo((lam[nIn - 1]! / lam[0]!) ** (1 - beta), 1e-7 * row.condition);
        expect(row.lambda_max).to.be.closeTo(g ** beta * lam[nIn - 1]! ** (1 - beta), 1e-8 * row.lambda_max);
        // quantise W′ with the test's RTN, map the error back with T⁻¹, and measure it through the data
        const Wp = toMat(c.Wp);
        const err = mul(rtn(Wp, bits).map((r, i) => r.map((v, j) => Wp[i]![j]! - v)), toMat(c.Tinv));
        const loss = lossViaData(err, X);
        expect(row.loss).to.be.closeTo(loss, 1e-8 * loss);
        expect(row.weight_mse).to.be.closeTo(mse(err), 1e-9 * mse(err));
        losses.push(loss);
        quantOf.push(rtnCodes(Wp, bits));
      }
      // the chosen β is the argmin of the losses recomputed here; its codes and scales are the test's RTN of W′
      const best = losses.indexOf(Math.min(...losses));
      expect(body.chosen.beta).to.equal(BETA_GRID[best]);
      expect(body.chosen.loss).to.be.closeTo(losses[best]!, 1e-8 * losses[best]!);
      expect(body.chosen.loss_ratio_vs_rtn).to.be.closeTo(losses[best]! / lossViaData(Wm.map((r, i) => r.map((v, j) => v - rtn(Wm, bits)[i]![j]!)), X), 1e-8);
      expect(body.quant.row_scales).to.have.length(nOut);
      body.quant.row_scales.forEach((x: number, i: number) => expect(x).to.be.closeTo(quantOf[best]!.scales[i]!, 1e-12 * quantOf[best]!.scales[i]!));
      expect(Array.from(body.quant.codes_head)).to.deep.equal(quantOf[best]!.codes.slice(0, 64));
    }
  });

  it('RTN and rotation-only (β = 0) losses match an independent recomputation through the calibration data', () => {
    for (let seed = 0; seed < 10; seed++) {
      const [nIn, nOut, N, bits] = [[8, 16, 32][seed % 3]!, 4 + seed, 64 + 10 * seed, 2 + (seed % 5)];
      const body = runRaw(herotq, { seed, n_in: nIn, n_out: nOut, calib: N, bits, outliers: 2 }).result as any;
      const inp = inputs(seed, nIn, nOut, N, 2, 10);
      const W = toMat(inp.W);
      const X = toMat(inp.X);
      const dW = rtn(W, bits).map((row, i) => row.map((v, j) => W[i]![j]! - v));
      const rtnLoss = lossViaData(dW, X);
      expect(body.rtn.loss).to.be.closeTo(rtnLoss, 1e-9 * rtnLoss);
      // β = 0: W′ = W·Q with Q = diag(signs)·H_n/√n rebuilt here from the drawn signs
      const signs: number[] = Array.from(inp.signs);
      const pop = (x: number): number => (x ? (x & 1) + pop(x >>> 1) : 0);
      const Q: Mat = signs.map((s, i) => signs.map((_, j) => (s * (pop(i & j) % 2 ? -1 : 1)) / Math.sqrt(nIn)));
      const Wp = mul(W, Q);
      const dWp = rtn(Wp, bits).map((row, i) => row.map((v, j) => Wp[i]![j]! - v));
      const rotLoss = lossViaData(mul(dWp, tr(Q)), X);
      const row0 = body.sweep[0];
      expect(row0.beta).to.equal(0);
      expect(row0.loss).to.be.closeTo(rotLoss, 1e-9 * rotLoss);
      expect(row0.loss_ratio_vs_rtn).to.be.closeTo(rotLoss / rtnLoss, 1e-9);
    }
  });

  it('chooses the argmin of the sweep, codes lie on the INT-b grid, and each row reaches ±qmax', () => {
    for (const bits of [2, 3, 4, 8]) {
      const r = runRaw(herotq, { bits, n_in: 16, n_out: 6, seed: bits }).result as any;
      const qmax = 2 ** (bits - 1) - 1;
      expect(r.quant.qmax).to.equal(qmax);
      const losses: number[] = r.sweep.map((s: any) => s.loss);
      const min = Math.min(...losses);
      expect(r.chosen.loss).to.equal(min);
      expect(r.chosen.beta).to.equal(r.sweep[losses.indexOf(min)].beta);
      // ratios against the RTN loss (recomputed through the data in the test above)
      for (const row of r.sweep) expect(row.loss_ratio_vs_rtn).to.be.closeTo(row.loss / r.rtn.loss, 1e-12 * (row.loss / r.rtn.loss));
      expect(r.chosen.loss_ratio_vs_rtn).to.be.closeTo(min / r.rtn.loss, 1e-12 * (min / r.rtn.loss));
      const codes: number[] = Array.from(r.quant.codes_head);
      expect(codes).to.have.length(64);
      codes.forEach((c) => expect(Number.isInteger(c) && Math.abs(c) <= qmax).to.equal(true));
      for (let i = 0; i < 4; i++) expect(Math.max(...codes.slice(16 * i, 16 * i + 16).map(Math.abs))).to.equal(qmax);
      expect(r.quant.row_scales).to.have.length(6);
    }
  });

  it('Hessian conditioning beats plain RTN and rotation alone (regression: ratio < 0.5 over 10 seeds at n_in = 64)', () => {
    const d = runRaw(herotq).result as any;
    expect(d.chosen.loss_ratio_vs_rtn).to.be.lessThan(0.5);
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(herotq, { seed, n_in: 64, n_out: 16, calib: 256 }).result as any;
      expect(r.chosen.loss_ratio_vs_rtn).to.be.lessThan(0.5);
      expect(r.chosen.loss).to.be.at.most(r.sweep[0].loss);
      expect(r.chosen.beta).to.be.greaterThan(0);
      expect(r.outlier_channels).to.have.length(4);
    }
  });

  it('the kernel checks hold across shapes, bits and outlier settings', () => {
    for (const [seed, n_in, n_out, calib, bits, outliers] of [[1, 8, 4, 8, 2, 0], [2, 16, 6, 64, 3, 4], [3, 32, 8, 40, 8, 8], [4, 64, 5, 64, 4, 16]] as const) {
      const out = runRaw(herotq, { seed, n_in, n_out, calib, bits, outliers }) as any;
      const W = inputs(seed, n_in, n_out, calib, outliers, 10).W;
      const wmax = Math.max(...Array.from(W.data, Math.abs));
      expect(out.checks).to.deep.include({ function_preserved: true, codes_on_grid: true, eigen_floor_applied: false });
      expect(out.checks.function_preservation_max_abs).to.be.at.most(1e-9 * wmax);
      expect(out.checks.loss_formula_rel_gap).to.be.at.most(1e-9);
    }
  });

  it('round half to even at every kind of tie, and symmetric RTN gives a zero row scale 1 and code 0', () => {
    for (const [x, want] of [[0.5, 0], [1.5, 2], [2.5, 2], [-0.5, 0], [-1.5, -2], [-2.5, -2], [2.4999, 2], [2.5001, 3], [-2.5001, -3], [3, 3]] as const) {
      expect(roundHalfEven(x)).to.equal(want);
    }
    const q = quantizeRows({ rows: 2, cols: 3, data: Float64Array.from([0, 0, 0, 3, -1.5, 0.75]) }, 3);
    expect(Array.from(q.scales)).to.deep.equal([1, 1]); // qmax = 3: the second row's max 3 → s = 1
    expect(Array.from(q.codes)).to.deep.equal([0, 0, 0, 3, -2, 1]); // −1.5 → −2, 0.75 → 1
    expect(Array.from(q.dequant.data)).to.deep.equal([0, 0, 0, 3, -2, 1]);
  });

  it('the eigenvalue floor: a singular Hessian is floored at 1e-14·λ_max and the geometric mean uses the floor', () => {
    const sp = spectrum({ rows: 2, cols: 2, data: Float64Array.from([4, 0, 0, 0]) });
    expect(sp.floored).to.equal(true);
    expect(Array.from(sp.lambda)).to.deep.equal([4e-14, 4]);
    expect(sp.geoMean).to.be.closeTo(Math.sqrt(16e-14), 1e-20);
    const ok = spectrum({ rows: 2, cols: 2, data: Float64Array.from([2, 1, 1, 2]) });
    expect(ok.floored).to.equal(false);
    Array.from(ok.lambda).forEach((v, i) => expect(v).to.be.closeTo([1, 3][i]!, 1e-12));
    expect(ok.geoMean).to.be.closeTo(Math.sqrt(3), 1e-12);
    // λ = 1e-14 is below the floor 1e-14·4: raised to 4e-14
    const low = spectrum({ rows: 2, cols: 2, data: Float64Array.from([4, 0, 0, 1e-14]) });
    expect(low.floored).to.equal(true);
    expect(Array.from(low.lambda)).to.deep.equal([4e-14, 4]);
  });

  it('inputs from the documented draws: W (stream w, 0.5·z), channel gains (stream outliers), X (stream x, row-major), signs (stream signs)', () => {
    const [seed, nIn, nOut, N, outliers, gain] = [7, 8, 3, 5, 2, 10];
    const inp = inputs(seed, nIn, nOut, N, outliers, gain);
    const rs = new RngStreams(seed, 'herotq/quantize');
    const ws = rs.stream('w');
    expect(Array.from(inp.W.data)).to.deep.equal(Array.from({ length: nOut * nIn }, () => 0.5 * ws.normal()));
    const os = rs.stream('outliers');
    const chosen = os.sample(nIn, outliers);
    const scale = new Array<number>(nIn).fill(1);
    for (const j of chosen) scale[j] = gain * (1 + os.next());
    expect(Array.from(inp.channelScale)).to.deep.equal(scale);
    const xs = rs.stream('x');
    const X = Array.from({ length: nIn * N }, (_, k) => scale[Math.floor(k / N)]! * xs.normal());
    Array.from(inp.X.data).forEach((v, k) => expect(v).to.equal(X[k]));
    const ss = rs.stream('signs');
    expect(Array.from(inp.signs)).to.deep.equal(Array.from({ length: nIn }, () => (ss.next() < 0.5 ? -1 : 1)));
    expect(new Set(inp.signs).size).to.equal(2); // both signs occur at this seed
  });

  it('n_in is a power of two, calib ≥ n_in, outliers ≤ n_in/4', () => {
    expect(rejects(herotq, { n_in: '24' })).to.deep.equal(['n_in:constraint']);
    expect(rejects(herotq, { n_in: '64', calib: '32' })).to.deep.equal(['calib:constraint']);
    expect(rejects(herotq, { n_in: '8', outliers: '3' })).to.deep.equal(['outliers:constraint']);
    expect(rejects(herotq, { n_in: '64', calib: '64', outliers: '16' })).to.deep.equal([]);
  });
});
