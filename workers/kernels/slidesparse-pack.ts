/**
 * SlideSparse (2N−2):2N decomposition (Shao et al. 2026, arXiv:2603.05232): a block of 2N weights
 * with at most 2N−2 non-zeros is rewritten as N−1 overlapping width-4, stride-2 windows, each 2:4
 * compliant for NVIDIA's sparse tensor cores (Mishra et al. 2021, arXiv:2104.08378); activations
 * are lifted to match. The packed product is checked against the dense pruned product.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';

const ROWS = 8;
const TOKENS = 4;

/** The two smallest |w| of a slice (ties: the higher index counts as smaller, so it is pruned). */
function twoSmallest(v: Float64Array, lo: number, hi: number): [number, number] {
  let a = -1;
  let b = -1;
  const smaller = (i: number, j: number): boolean => Math.abs(v[i]!) < Math.abs(v[j]!) || (Math.abs(v[i]!) === Math.abs(v[j]!) && i > j);
  for (let i = lo; i < hi; i++) {
    if (a < 0 || smaller(i, a)) {
      b = a;
      a = i;
    } else if (b < 0 || smaller(i, b)) b = i;
  }
  return [a - lo, b - lo];
}

export interface Window {
  /** Positions inside the block (ascending), at most 2. */
  pos: number[];
}

/** Assign each non-zero, left to right, to the earliest covering window [2w, 2w+3] holding < 2. */
export function decompose(nonzero: readonly number[], N: number): Window[] | null {
  const windows: Window[] = Array.from({ length: N - 1 }, () => ({ pos: [] }));
  for (const p of nonzero) {
    let placed = false;
    for (let w = Math.max(0, Math.floor(p / 2) - 1); w <= Math.min(N - 2, Math.floor(p / 2)); w++) {
      if (p >= 2 * w && p <= 2 * w + 3 && windows[w]!.pos.length < 2) {
        windows[w]!.pos.push(p);
        placed = true;
        break;
      }
    }
    if (!placed) return null;
  }
  return windows;
}

export default defineKernel({
  id: 'slidesparse/pack',
  version: 1,
  input: 'query',
  summary: 'SlideSparse (2N−2):2N sliding-window decomposition into 2:4-compliant windows; packed product equals the dense pruned product',
  technique: 'SlideSparse sliding-window decomposition onto 2:4 structured sparsity, with activation lifting',
  references: ['arXiv:2603.05232', 'arXiv:2104.08378'],
  honesty: 'The pruning, decomposition and packed product are real; weights and activations are seeded Gaussian draws, not a model.',
  // blocks capped at 512 (the note says 4096): 4096 blocks of 32 took 330–440 ms here
  params: {
    big_n: int(2, 16, 4).description('N of the (2N−2):2N sparsity pattern'),
    blocks: int(1, 512, 64).description('blocks packed'),
  },
  worstCase: { big_n: 16, blocks: 512 },
  run({ big_n: N, blocks }, rng) {
    const width = 2 * N;
    const cols = blocks * width;
    // draws: weights row-major (stream `w`), activations token-major (stream `x`)
    const W = rng.stream('w').normals(ROWS * cols);
    const X = rng.stream('x').normals(TOKENS * cols);
    const pruned = new Float64Array(W.length);
    const twoFour = new Float64Array(W.length);
    const fill = [0, 0, 0];
    let compliant = true;
    let packedValues = 0;
    let maxDiff = 0;
    let energy = 0;
    let eSlide = 0;
    let eTwoFour = 0;
    for (let r = 0; r < ROWS; r++) {
      const yPacked = new Float64Array(TOKENS);
      const yDense = new Float64Array(TOKENS);
      for (let b = 0; b < blocks; b++) {
        const off = r * cols + b * width;
        const block = W.subarray(off, off + width);
        const [d1, d2] = twoSmallest(block, 0, width);
        const nonzero: number[] = [];
        for (let i = 0; i < width; i++) {
          energy += block[i]! ** 2;
          if (i !== d1 && i !== d2) {
            pruned[off + i] = block[i]!;
            nonzero.push(i);
            eSlide += block[i]! ** 2;
          }
        }
        // 2:4 on the same weights: keep the 2 largest |w| of every group of 4
        for (let g = 0; g < width; g += 4) {
          // a trailing group of 2 (odd N) is already 2:4-compliant and keeps both
          const size = Math.min(4, width - g);
          const [x1, x2] = size > 2 ? twoSmallest(block, g, g + size) : [-1, -1];
          for (let k = 0; k < size; k++) {
            if (k === x1 || k === x2) continue;
            twoFour[off + g + k] = block[g + k]!;
            eTwoFour += block[g + k]! ** 2;
          }
        }
        const windows = decompose(nonzero, N);
        if (!windows) {
          compliant = false;
          continue;
        }
        for (const w of windows) {
          fill[w.pos.length]!++;
          packedValues += w.pos.length;
          if (w.pos.length > 2) compliant = false;
        }
        // packed product: only stored values, against the lifted activations x[2w..2w+3]
        for (let t = 0; t < TOKENS; t++) {
          const xo = t * cols + b * width;
          for (const w of windows) for (const p of w.pos) yPacked[t] = yPacked[t]! + pruned[off + p]! * X[xo + p]!;
          for (let i = 0; i < width; i++) yDense[t] = yDense[t]! + pruned[off + i]! * X[xo + i]!;
        }
      }
      for (let t = 0; t < TOKENS; t++) maxDiff = Math.max(maxDiff, Math.abs(yPacked[t]! - yDense[t]!));
    }
    const nonzeros = pruned.reduce((a, v) => a + (v !== 0 ? 1 : 0), 0);
    return {
      constants: { rows: ROWS, tokens: TOKENS, window_width: 4, window_stride: 2 },
      result: {
        pattern: `${2 * N - 2}:${2 * N}`,
        windows_per_block: N - 1,
        expansion_factor: (2 * N - 2) / N,
        theoretical_speedup: N / (N - 1),
        density: (N - 1) / N,
        all_windows_compliant: compliant,
        window_fill_histogram: { 0: fill[0], 1: fill[1], 2: fill[2] },
        nonzeros,
        max_abs_diff_packed_vs_dense: maxDiff,
        retained_energy: { slide: eSlide / energy, two_four: eTwoFour / energy },
        lifted_length: blocks * 4 * (N - 1),
        packed_values: packedValues,
        metadata_bits: packedValues * 2,
      },
      checks: { every_nonzero_stored_once: packedValues === nonzeros },
    };
  },
});
