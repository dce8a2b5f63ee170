import { expect } from 'chai';
import nvfp4, { e2m1Rne, e2m1Stochastic, e4m3Rne, makeTensor, mxfp4Quantize, nvfp4Quantize, rhtForward, rhtInverse, rhtSigns } from '../../../workers/kernels/nvfp4-quantize.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

const GRID = [0, 0.5, 1, 1.5, 2, 3, 4, 6];
/** E4M3 by bit decoding: bias 7, subnormals at exponent 0, 0x7f is NaN. */
const E4M3 = Array.from({ length: 127 }, (_, bits) => {
  const e = bits >> 3;
  const m = bits & 7;
  return { bits, value: e === 0 ? (m / 8) * 2 ** -6 : (1 + m / 8) * 2 ** (e - 7) };
});
/** Slow scans: nearest grid point, ties to the even code. */
function refE4M3(v: number): { bits: number; value: number } {
  let best = E4M3[0]!;
  for (const c of E4M3) {
    const d = Math.abs(v - c.value) - Math.abs(v - best.value);
    if (d < 0 || (d === 0 && c.bits % 2 === 0 && best.bits % 2 === 1)) best = c;
  }
  return best;
}
function refE2M1(t: number): number {
  let best = 0;
  for (let i = 1; i < 8; i++) {
    const d = Math.abs(t - GRID[i]!) - Math.abs(t - GRID[best]!);
    if (d < 0 || (d === 0 && i % 2 === 0)) best = i;
  }
  return best;
}
/** Independent NVFP4 (rne) reference: codes and block bits. */
function reference(x: ArrayLike<number>): { codes: number[]; bits: number[]; xhat: number[]; sigma: number[] } {
  const amax = Math.max(...Array.from(x, Math.abs));
  const sEnc = amax > 0 ? (6 * 448) / amax : 1;
  const codes: number[] = [];
  const bits: number[] = [];
  const xhat: number[] = [];
  const sigma: number[] = [];
  for (let lo = 0; lo < x.length; lo += 16) {
    const blk = Array.from(x).slice(lo, lo + 16);
    const bmax = Math.max(...blk.map(Math.abs));
    const e = refE4M3(Math.min(448, (bmax / 6) * sEnc));
    const s = e.value / sEnc;
    bits.push(e.bits);
    sigma.push(s);
    for (const v of blk) {
      const idx = s > 0 ? refE2M1(Math.abs(v) / s) : 0;
      codes.push(s > 0 ? (v < 0 ? 8 : 0) + idx : 0);
      xhat.push(s > 0 ? Math.sign(v) * GRID[idx]! * s : 0);
    }
  }
  return { codes, bits, xhat, sigma };
}
const hadamard = (i: number, j: number): number => {
  let v = i & j;
  let ones = 0;
  for (; v; v >>= 1) ones += v & 1;
  return ones % 2 ? -1 : 1;
};
const unpack = (hex: string, n: number): number[] => {
  const b = Buffer.from(hex, 'hex');
  return Array.from({ length: n }, (_, i) => (b[i >> 1]! >> (i & 1 ? 4 : 0)) & 15);
};

/** Stochastic E2M1 by its definition: round |t| up to the next grid point with probability (t − lo)/(hi − lo). */
function refE2M1Stochastic(t: number, u: number): number {
  if (t >= 6) return 7;
  let lo = 0;
  while (GRID[lo + 1]! <= t) lo++;
  return u < (t - GRID[lo]!) / (GRID[lo + 1]! - GRID[lo]!) ? lo + 1 : lo;
}
/** MXFP4 by the OCP MX v1.0 text: blocks of 32, scale 2^(⌊log₂ amax⌋ − 2), E2M1 nearest-even. */
function refMx(x: number[]): number[] {
  const out: number[] = [];
  for (let lo = 0; lo < x.length; lo += 32) {
    const blk = x.slice(lo, lo + 32);
    const bmax = Math.max(...blk.map(Math.abs));
    let e = 0;
    if (bmax > 0) {
      while (2 ** e > bmax) e--;
      while (2 ** (e + 1) <= bmax) e++;
    }
    const s = 2 ** (e - 2);
    for (const v of blk) out.push(bmax === 0 ? 0 : Math.sign(v) * GRID[refE2M1(Math.abs(v) / s)]! * s);
  }
  return out;
}
function stats(x: number[], xh: number[]): { mse: number; sqnr: number; max: number } {
  const sig = x.reduce((s, v) => s + v * v, 0);
  const err = x.reduce((s, v, i) => s + (v - xh[i]!) ** 2, 0);
  return { mse: err / x.length, sqnr: 10 * Math.log10(sig / err), max: Math.max(...x.map((v, i) => Math.abs(v - xh[i]!))) };
}

describe('kernel nvfp4/quantize', () => {
  it('every reported value is recomputed (rne, stochastic, RHT; n ≤ 64 so the whole tensor is in the body)', () => {
    for (const [seed, n, rounding, rht] of [[42, 64, 'rne', false], [5, 50, 'stochastic', false], [8, 64, 'stochastic', true], [9, 33, 'rne', true]] as const) {
      const r = runRaw(nvfp4, { seed, n, outlier_rate: 0.1, rounding, rht }).result as any;
      // the input from the documented draws: per element a normal, then the outlier uniform
      const xs = new RngStreams(seed, 'nvfp4/quantize').stream('x');
      const x = Array.from({ length: n }, () => {
        const z = xs.normal();
        return xs.next() < 0.1 ? z * 8 : z;
      });
      expect(Array.from(r.input_head as Float64Array)).to.deep.equal(x);
      let y = x.slice();
      let signs: number[] = [];
      if (rht) {
        const rs = new RngStreams(seed, 'nvfp4/quantize').stream('rht');
        signs = Array.from({ length: 16 }, () => (rs.next() < 0.5 ? -1 : 1));
        expect(Array.from(r.transformed_head.signs as Float64Array)).to.deep.equal(signs);
        const padded = [...x, ...new Array<number>((16 - (n % 16)) % 16).fill(0)];
        y = padded.map((_, k) => {
          const b = k - (k % 16);
          let acc = 0;
          for (let j = 0; j < 16; j++) acc += hadamard(k % 16, j) * signs[j]! * padded[b + j]!;
          return acc / 4;
        });
        expect([r.transformed_head.y.length, r.transformed_head.y_hat.length]).to.deep.equal([y.length, y.length]);
        Array.from(r.transformed_head.y as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(y[i]!, 1e-14));
      } else expect(r.transformed_head).to.equal(null);
      // quantise y: block scales by the slow E4M3 scan, elements rne or stochastic from stream `sr`
      const amax = Math.max(...y.map(Math.abs));
      const sEnc = (6 * 448) / amax;
      const sr = new RngStreams(seed, 'nvfp4/quantize').stream('sr');
      const codes: number[] = [];
      const yhat: number[] = [];
      expect(r.n_blocks).to.equal(Math.ceil(y.length / 16));
      expect(r.blocks).to.have.length(r.n_blocks);
      for (let lo = 0, b = 0; lo < y.length; lo += 16, b++) {
        const blk = y.slice(lo, lo + 16);
        const bmax = Math.max(...blk.map(Math.abs));
        const e = refE4M3(Math.min(448, (bmax / 6) * sEnc));
        const sigma = e.value / sEnc;
        expect(r.blocks[b]).to.deep.include({ e4m3_bits: e.bits, e4m3_value: e.value });
        expect(r.blocks[b].amax).to.be.closeTo(bmax, 1e-15 * bmax);
        expect(r.blocks[b].effective_scale).to.be.closeTo(sigma, 1e-15 * sigma);
        for (const v of blk) {
          const u = rounding === 'stochastic' ? sr.next() : 0;
          const t = Math.abs(v) / sigma;
          const idx = rounding === 'rne' ? refE2M1(t) : refE2M1Stochastic(t, u);
          codes.push((v < 0 ? 8 : 0) + idx);
          yhat.push(Math.sign(v) * GRID[idx]! * sigma);
        }
      }
      expect(unpack(r.codes_hex, y.length)).to.deep.equal(codes);
      expect(r.tensor.amax).to.be.closeTo(amax, 1e-15 * amax);
      expect(r.tensor.encode_scale).to.be.closeTo(sEnc, 1e-12 * sEnc);
      expect(r.tensor.decode_scale).to.be.closeTo(1 / sEnc, 1e-12 / sEnc);
      let xhat = yhat.slice(0, n);
      if (rht) {
        Array.from(r.transformed_head.y_hat as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(yhat[i]!, 1e-14));
        xhat = x.map((_, k) => {
          const b = k - (k % 16);
          let acc = 0;
          for (let j = 0; j < 16; j++) acc += hadamard(k % 16, j) * yhat[b + j]!;
          return (signs[k % 16]! * acc) / 4;
        });
      }
      expect(r.dequant_head).to.have.length(n);
      Array.from(r.dequant_head as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(xhat[i]!, 1e-14));
      const nv = stats(x, xhat);
      const mx = stats(x, refMx(x));
      expect(r.error.mse).to.be.closeTo(nv.mse, 1e-12 * nv.mse);
      expect(r.error.sqnr_db).to.be.closeTo(nv.sqnr, 1e-9);
      expect(r.error.max_abs).to.be.closeTo(nv.max, 1e-13);
      expect(r.mxfp4.mse).to.be.closeTo(mx.mse, 1e-12 * mx.mse);
      expect(r.mxfp4.sqnr_db).to.be.closeTo(mx.sqnr, 1e-9);
      expect(r.mxfp4.max_abs).to.be.closeTo(mx.max, 1e-13);
      expect(r.mse_ratio_mxfp4_over_nvfp4).to.be.closeTo(mx.mse / nv.mse, 1e-9 * (mx.mse / nv.mse));
      expect(r.bits_per_element).to.be.closeTo((4 * n + 8 * Math.ceil(n / 16) + 32) / n, 1e-15);
      expect(r).to.deep.include({ blocks_truncated: false, codes_truncated: false });
    }
  });

  it('stochastic rounding is unbiased in magnitude: E[|x̂|] = |x| per grid interval, so sign-aligned errors average 0', () => {
    // a symmetric tensor hides a magnitude bias in the signed mean; align each error with its sign
    for (const seed of [1, 2, 3]) {
      const rng = new RngStreams(seed, 'nvfp4/quantize');
      const x = makeTensor(rng.stream('x'), 65536, 0, 8);
      const q = nvfp4Quantize(x, 'stochastic', rng.stream('sr'));
      // in units of the block scale, only elements strictly inside the grid (not saturated, not on a point)
      const d: number[] = [];
      x.forEach((v, i) => {
        const s = q.blocks[i >> 4]!.effective_scale;
        const t = Math.abs(v) / s;
        if (t < 6 && !GRID.includes(t)) d.push((Math.abs(q.dequant[i]!) - Math.abs(v)) / s);
      });
      const mean = d.reduce((a, b) => a + b, 0) / d.length;
      const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / (d.length - 1));
      expect(d.length).to.be.above(60000);
      expect(sd).to.be.above(0.1); // really stochastic: errors of both signs
      expect(Math.abs(mean)).to.be.at.most((4 * sd) / Math.sqrt(d.length));
    }
  });

  it('slow reference: every code and every E4M3 block scale matches an independent scan, for 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const n of [64, 50]) {
        const r = runRaw(nvfp4, { seed, n, outlier_rate: 0.1 }).result as any;
        const x = Array.from(r.input_head as Float64Array);
        expect(x).to.have.length(n);
        const ref = reference(x);
        expect(unpack(r.codes_hex, n)).to.deep.equal(ref.codes);
        expect(r.blocks.map((b: any) => b.e4m3_bits)).to.deep.equal(ref.bits);
        Array.from(r.dequant_head as Float64Array).forEach((v, i) => expect(v).to.be.closeTo(ref.xhat[i]!, 1e-15 * Math.max(1, Math.abs(v))));
        expect(r.tensor.decode_scale * r.tensor.encode_scale).to.be.closeTo(1, 1e-15);
        expect(r.tensor.amax).to.equal(Math.max(...x.map(Math.abs)));
      }
    }
  });

  it('grid membership for every seed: x̂/σ_b is an E2M1 point and every scale an E4M3 value ≤ 448', () => {
    const values = new Set(E4M3.map((e) => e.value));
    for (let seed = 0; seed < 10; seed++) {
      const x = makeTensor(new RngStreams(seed, 'nvfp4/quantize').stream('x'), 4096, 0.05, 32);
      const q = nvfp4Quantize(x, 'rne');
      q.blocks.forEach((b) => {
        expect(values.has(b.e4m3_value)).to.equal(true);
        expect(b.e4m3_value).to.be.at.most(448);
      });
      q.dequant.forEach((v, i) => {
        const s = q.blocks[i >> 4]!.effective_scale;
        const t = Math.abs(v) / s;
        expect(GRID.some((g) => Math.abs(t - g) <= 1e-15 * 6)).to.equal(true);
      });
    }
  });

  it('block maximum hits the top code ±6 in every block with a normal E4M3 scale, and |x − x̂| ≤ σ_b', () => {
    for (let seed = 0; seed < 10; seed++) {
      const x = makeTensor(new RngStreams(seed, 'nvfp4/quantize').stream('x'), 2048, 0.02, 64);
      const q = nvfp4Quantize(x, 'rne');
      q.blocks.forEach((b, bi) => {
        const idx = Array.from({ length: 16 }, (_, k) => bi * 16 + k);
        const arg = idx.reduce((a, i) => (Math.abs(x[i]!) > Math.abs(x[a]!) ? i : a), idx[0]!);
        if (b.e4m3_value >= 2 ** -6) expect(q.codes[arg]! & 7).to.equal(7);
        for (const i of idx) {
          const t = Math.abs(x[i]!) / b.effective_scale;
          // half the grid gap around t, or the saturation overshoot above 6
          const upper = GRID.findIndex((g) => g >= t);
          const halfGap = upper <= 0 ? 0 : (GRID[upper]! - GRID[upper - 1]!) / 2;
          const bound = b.effective_scale * (upper < 0 ? t - 6 : halfGap);
          const slack = 1e-15 * Math.abs(x[i]!); // rounding of x̂ = g·σ_b and of the subtraction
          expect(Math.abs(x[i]! - q.dequant[i]!)).to.be.at.most(bound + slack);
          expect(Math.abs(x[i]! - q.dequant[i]!)).to.be.at.most(b.effective_scale + slack);
        }
      });
    }
  });

  it('stochastic rounding is unbiased (n = 65536, no outliers, no RHT) and RNE is not random', () => {
    for (const seed of [1, 2, 3]) {
      const rng = new RngStreams(seed, 'nvfp4/quantize');
      const x = makeTensor(rng.stream('x'), 65536, 0, 8);
      const q = nvfp4Quantize(x, 'stochastic', rng.stream('sr'));
      const d = Array.from(x, (v, i) => q.dequant[i]! - v);
      const mean = d.reduce((a, b) => a + b, 0) / d.length;
      const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / (d.length - 1));
      expect(Math.abs(mean)).to.be.at.most((5 * sd) / Math.sqrt(d.length));
    }
    const a = runRaw(nvfp4, { seed: 4, rounding: 'stochastic' }).result as any;
    const b = runRaw(nvfp4, { seed: 4, rounding: 'rne' }).result as any;
    expect(a.codes_hex).to.not.equal(b.codes_hex);
    expect(a.error.mse).to.be.above(b.error.mse);
  });

  it('the random Hadamard transform is orthonormal and invertible; its body reports y and ŷ', () => {
    const rng = new RngStreams(6, 'nvfp4/quantize');
    const x = makeTensor(rng.stream('x'), 40, 0.1, 8);
    const signs = rhtSigns(rng.stream('rht'));
    const y = rhtForward(x, signs);
    expect(y).to.have.length(48);
    const n2 = (v: ArrayLike<number>): number => Array.from(v).reduce((s, t) => s + t * t, 0);
    expect(n2(y)).to.be.closeTo(n2(x), 1e-12);
    rhtInverse(y, signs, 40).forEach((v, i) => expect(v).to.be.closeTo(x[i]!, 1e-14));
    const r = runRaw(nvfp4, { seed: 6, n: 40, outlier_rate: 0.1, rht: true }).result as any;
    expect(Array.from(r.transformed_head.y)).to.deep.equal(Array.from(y));
    const ref = reference(y);
    ref.xhat.forEach((v, i) => expect(r.transformed_head.y_hat[i]).to.be.closeTo(v, 1e-15 * Math.max(1, Math.abs(v))));
    expect(unpack(r.codes_hex, 48)).to.deep.equal(ref.codes);
  });

  it('regression over seeds 0–19: NVFP4 beats MXFP4 in MSE; storage is 4 + 8/16 + 32/n bits', () => {
    for (let seed = 0; seed < 20; seed++) {
      const r = runRaw(nvfp4, { seed }).result as any;
      expect(r.mxfp4.mse).to.be.above(r.error.mse);
      expect(r.error.sqnr_db).to.be.above(15);
      expect(r.bits_per_element).to.equal(4 + 8 / 16 + 32 / 256);
    }
    expect((runRaw(nvfp4, { n: 17 }).result as any).bits_per_element).to.be.closeTo((4 * 17 + 16 + 32) / 17, 1e-15);
  });

  it('the kernel checks hold for every rounding and RHT setting; no null-reason keys on non-zero errors', () => {
    for (let seed = 0; seed < 12; seed++) {
      for (const [rounding, rht] of [['rne', false], ['rne', true], ['stochastic', false], ['stochastic', true]] as const) {
        const out = runRaw(nvfp4, { seed, n: 256, outlier_rate: 0.05, rounding, rht }) as any;
        expect(out.checks).to.deep.equal({ grid_membership: true, block_max_top_code: true });
        // Gaussian data is never exactly on the grid: every error is > 0, so no reason keys
        expect(out.result.error).to.not.have.property('sqnr_reason');
        expect(out.result.mxfp4).to.not.have.property('sqnr_reason');
        expect(out.result).to.not.have.property('mse_ratio_reason');
      }
    }
  });

  it('listing bounds: 256 blocks and 4096 codes are listed whole, one element more is truncated', () => {
    const at = runRaw(nvfp4, { seed: 3, n: 4096 }).result as any;
    expect(at).to.deep.include({ n_blocks: 256, blocks_truncated: false, codes_truncated: false });
    expect(at.blocks).to.have.length(256);
    expect(at.codes_hex).to.have.length(4096); // two hex digits per byte, two codes per byte
    const past = runRaw(nvfp4, { seed: 3, n: 4097 }).result as any;
    expect(past).to.deep.include({ n_blocks: 257, blocks_truncated: true, codes_truncated: true });
    expect(past.blocks).to.have.length(256);
    expect(past.codes_hex).to.have.length(4096);
    // an odd count packs into ⌈n/2⌉ bytes, the last high nibble empty
    const odd = runRaw(nvfp4, { seed: 3, n: 17 }).result as any;
    expect(odd.codes_hex).to.have.length(18);
    expect(odd.codes_hex[16]).to.equal('0');
  });

  it('E4M3 and E2M1 round-to-nearest send every exact midpoint to the even code (checked against the slow scans)', () => {
    for (let k = 0; k + 1 < E4M3.length; k++) {
      const mid = (E4M3[k]!.value + E4M3[k + 1]!.value) / 2;
      expect(e4m3Rne(mid)).to.deep.equal(refE4M3(mid));
      expect(e4m3Rne(E4M3[k]!.value)).to.deep.equal(E4M3[k]);
    }
    expect(e4m3Rne(448)).to.deep.equal({ value: 448, bits: 126 });
    expect(e4m3Rne(1e6)).to.deep.equal({ value: 448, bits: 126 });
    for (let k = 0; k + 1 < GRID.length; k++) {
      const mid = (GRID[k]! + GRID[k + 1]!) / 2;
      expect(e2m1Rne(mid)).to.equal(refE2M1(mid));
      expect(e2m1Rne(GRID[k]!)).to.equal(k);
    }
    expect(e2m1Rne(6)).to.equal(7);
  });

  it('stochastic E2M1 rounds up exactly when u < p, so u uniform on [0, 1) rounds up with probability p', () => {
    // t = 0.75 and t = 5 lie halfway between grid points: p = 1/2
    for (const [t, lo] of [[0.75, 1], [5, 6]] as const) {
      expect(e2m1Stochastic(t, 0.5)).to.equal(lo);
      expect(e2m1Stochastic(t, 0.5 - 2 ** -53)).to.equal(lo + 1);
      expect(e2m1Stochastic(t, 0)).to.equal(lo + 1);
    }
    expect(e2m1Stochastic(3, 0)).to.equal(5); // on a grid point: never moved
    expect(e2m1Stochastic(7, 0.99)).to.equal(7); // saturates
  });

  it('degenerate blocks: an all-zero tensor, a block whose E4M3 scale underflows to 0, and an exact zero element are all code 0', () => {
    const zero = nvfp4Quantize(new Float64Array(32), 'rne');
    expect(zero.encodeScale).to.equal(1);
    expect(Array.from(zero.codes)).to.deep.equal(new Array(32).fill(0));
    expect(Array.from(zero.dequant)).to.deep.equal(new Array(32).fill(0));
    expect(zero.blocks.map((b) => b.e4m3_value)).to.deep.equal([0, 0]);
    // block 1 has amax 1e-7: 448·1e-7 < 2^-10, half the smallest subnormal, so its scale is 0
    const x = Float64Array.from({ length: 48 }, (_, i) => (i < 16 ? (i % 3) - 1 + i / 100 : i < 32 ? 1e-7 * Math.cos(i) : i === 40 ? 0 : Math.sin(i)));
    expect(x[40]).to.equal(0);
    const q = nvfp4Quantize(x, 'rne');
    const ref = reference(x);
    expect(Array.from(q.codes)).to.deep.equal(ref.codes);
    expect(q.blocks.map((b) => b.e4m3_bits)).to.deep.equal(ref.bits);
    expect(q.blocks[1]!.e4m3_value).to.equal(0);
    expect(Array.from(q.dequant.subarray(16, 32))).to.deep.equal(new Array(16).fill(0));
    expect(Object.is(q.dequant[40], 0)).to.equal(true); // +0, not −0
  });

  it('MXFP4 uses the true ⌊log₂ amax⌋ where Math.log2 rounds up (amax just below 2^30)', () => {
    // log₂((1 − 2^-53)·2^30) rounds to 30 in double precision; the E8M0 exponent must be 29
    const a = 2 ** 30 * (1 - 2 ** -53);
    const x = [a, a / 3, -a / 5, 0.5];
    expect(Array.from(mxfp4Quantize(Float64Array.from(x)))).to.deep.equal(refMx(x));
    expect(mxfp4Quantize(Float64Array.from(x))[0]).to.equal(6 * 2 ** 27); // 8·2^27 saturates to the top code
  });

  it('rounding is rne or stochastic; the largest n with both options passes', () => {
    expect(rejects(nvfp4, { rounding: 'floor' })).to.deep.equal(['rounding:any.only']);
    expect(rejects(nvfp4, { n: '65536', rounding: 'stochastic', rht: 'true' })).to.deep.equal([]);
  });
});
