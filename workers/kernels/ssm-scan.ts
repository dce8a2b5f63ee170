/**
 * Mamba selective scan (Gu & Dao 2023, arXiv:2312.00752) on a small diagonal SSM, computed twice:
 * the sequential recurrence and a work-efficient Blelloch scan (CMU-CS-90-190) with the
 * associative operator (a1,b1)•(a2,b2) = (a1·a2, a2·b1 + b2). A is S4D-real, A_n = −(n+1)
 * (arXiv:2206.11893). The LTI check freezes Δ, B, C and compares the recurrence with its
 * convolution kernel K_k = Σ_n C_n Ā_n^k B̄_n. Design: kernels-c §3.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { sampleSeries } from '../../src/lib/numbers.js';

export const CHANNELS = 4;
const LTI_STEPS = 256;

export interface SsmInputs {
  L: number;
  N: number;
  /** x[t*D + d] */
  x: Float64Array;
  /** delta[t*D + d] = softplus(w_d·x_t − 1) */
  delta: Float64Array;
  /** B[t*N + n], C[t*N + n] */
  B: Float64Array;
  C: Float64Array;
  /** skip[d] */
  skip: Float64Array;
  /** A[n] = −(n+1) */
  A: Float64Array;
}

const softplus = (z: number): number => (z > 30 ? z : Math.log1p(Math.exp(z)));

/** Draw order: x row-major from `x`; then W_Δ (D×D), W_B (N×D), W_C (N×D), skip (D) from `weights`. */
export function makeInputs(L: number, N: number, xs: Rng, ws: Rng): SsmInputs {
  const D = CHANNELS;
  const x = xs.normals(L * D);
  const sd = 1 / Math.sqrt(D);
  const wDelta = ws.normals(D * D, sd);
  const wB = ws.normals(N * D, sd);
  const wC = ws.normals(N * D, sd);
  const skip = ws.normals(D);
  const delta = new Float64Array(L * D);
  const B = new Float64Array(L * N);
  const C = new Float64Array(L * N);
  for (let t = 0; t < L; t++) {
    for (let d = 0; d < D; d++) {
      let z = 0;
      for (let j = 0; j < D; j++) z += wDelta[d * D + j]! * x[t * D + j]!;
      delta[t * D + d] = softplus(z - 1);
    }
    for (let n = 0; n < N; n++) {
      let b = 0;
      let c = 0;
      for (let j = 0; j < D; j++) {
        b += wB[n * D + j]! * x[t * D + j]!;
        c += wC[n * D + j]! * x[t * D + j]!;
      }
      B[t * N + n] = b;
      C[t * N + n] = c;
    }
  }
  const A = Float64Array.from({ length: N }, (_, n) => -(n + 1));
  return { L, N, x, delta, B, C, skip, A };
}

/** Zero-order hold for A, Euler for B (as Mamba): Ā = exp(Δ·A), B̄x = Δ·B·x. */
function discretise(inp: SsmInputs, t: number, d: number, n: number): [number, number] {
  const dt = inp.delta[t * CHANNELS + d]!;
  return [Math.exp(dt * inp.A[n]!), dt * inp.B[t * inp.N + n]! * inp.x[t * CHANNELS + d]!];
}

function readout(inp: SsmInputs, h: Float64Array, t: number, y: Float64Array): void {
  const { N } = inp;
  for (let d = 0; d < CHANNELS; d++) {
    let acc = inp.skip[d]! * inp.x[t * CHANNELS + d]!;
    for (let n = 0; n < N; n++) acc += inp.C[t * N + n]! * h[d * N + n]!;
    y[t * CHANNELS + d] = acc;
  }
}

/** Sequential recurrence; returns y[t*D + d] and the final state h[d*N + n]. */
export function scanSequential(inp: SsmInputs): { y: Float64Array; h: Float64Array } {
  const { L, N } = inp;
  const h = new Float64Array(CHANNELS * N);
  const y = new Float64Array(L * CHANNELS);
  for (let t = 0; t < L; t++) {
    for (let d = 0; d < CHANNELS; d++) {
      for (let n = 0; n < N; n++) {
        const [a, b] = discretise(inp, t, d, n);
        h[d * N + n] = a * h[d * N + n]! + b;
      }
    }
    readout(inp, h, t, y);
  }
  return { y, h };
}

/** Blelloch exclusive scan per (d, n), padded with the identity (1, 0) to a power of two. */
export function scanParallel(inp: SsmInputs): { y: Float64Array; combines: number } {
  const { L, N } = inp;
  const P = 1 << Math.ceil(Math.log2(Math.max(L, 1)));
  const a = new Float64Array(P);
  const b = new Float64Array(P);
  const hAll = new Float64Array(L * CHANNELS * N);
  let combines = 0;
  for (let d = 0; d < CHANNELS; d++) {
    for (let n = 0; n < N; n++) {
      a.fill(1);
      b.fill(0);
      const elemA = new Float64Array(L);
      const elemB = new Float64Array(L);
      for (let t = 0; t < L; t++) [elemA[t], elemB[t]] = discretise(inp, t, d, n);
      a.set(elemA);
      b.set(elemB);
      // up-sweep: a[r] <- a[l]•a[r]
      for (let stride = 1; stride < P; stride *= 2) {
        for (let r = 2 * stride - 1; r < P; r += 2 * stride) {
          const l = r - stride;
          b[r] = a[r]! * b[l]! + b[r]!;
          a[r] = a[l]! * a[r]!;
          combines++;
        }
      }
      // down-sweep: exclusive prefixes
      a[P - 1] = 1;
      b[P - 1] = 0;
      for (let stride = P / 2; stride >= 1; stride /= 2) {
        for (let r = 2 * stride - 1; r < P; r += 2 * stride) {
          const l = r - stride;
          const la = a[l]!;
          const lb = b[l]!;
          a[l] = a[r]!;
          b[l] = b[r]!;
          // prefix(r) = prefix(l_old_parent) • left subtree total
          b[r] = la * b[r]! + lb;
          a[r] = a[r]! * la;
          combines++;
        }
      }
      for (let t = 0; t < L; t++) hAll[(t * CHANNELS + d) * N + n] = elemA[t]! * b[t]! + elemB[t]!;
    }
  }
  const y = new Float64Array(L * CHANNELS);
  for (let t = 0; t < L; t++) readout(inp, hAll.subarray(t * CHANNELS * N, (t + 1) * CHANNELS * N), t, y);
  return { y, combines };
}

/** LTI view: Δ, B, C frozen at their time means; recurrence vs convolution over the first T steps. */
export function ltiConvolutionGap(inp: SsmInputs): number {
  const { L, N } = inp;
  const T = Math.min(L, LTI_STEPS);
  const mean = (arr: Float64Array, stride: number, k: number): number => {
    let s = 0;
    for (let t = 0; t < L; t++) s += arr[t * stride + k]!;
    return s / L;
  };
  const Bm = Float64Array.from({ length: N }, (_, n) => mean(inp.B, N, n));
  const Cm = Float64Array.from({ length: N }, (_, n) => mean(inp.C, N, n));
  let gap = 0;
  for (let d = 0; d < CHANNELS; d++) {
    const dt = mean(inp.delta, CHANNELS, d);
    const aBar = Float64Array.from({ length: N }, (_, n) => Math.exp(dt * inp.A[n]!));
    const K = new Float64Array(T);
    for (let n = 0; n < N; n++) {
      let pow = dt * Bm[n]! * Cm[n]!;
      for (let k = 0; k < T; k++) {
        K[k] = K[k]! + pow;
        pow *= aBar[n]!;
      }
    }
    const h = new Float64Array(N);
    for (let t = 0; t < T; t++) {
      const xt = inp.x[t * CHANNELS + d]!;
      let rec = inp.skip[d]! * xt;
      for (let n = 0; n < N; n++) {
        h[n] = aBar[n]! * h[n]! + dt * Bm[n]! * xt;
        rec += Cm[n]! * h[n]!;
      }
      let conv = inp.skip[d]! * xt;
      for (let k = 0; k <= t; k++) conv += K[k]! * inp.x[(t - k) * CHANNELS + d]!;
      gap = Math.max(gap, Math.abs(rec - conv));
    }
  }
  return gap;
}

export default defineKernel({
  id: 'ssm/scan',
  version: 2,
  informative: {
    max_abs_diff_parallel: 'rounding-level gap between the Blelloch scan and the sequential recurrence inside the kernel; y, h and retention are recomputed by the tests',
    max_abs_diff_lti_conv: 'rounding-level gap between the LTI recurrence and its convolution form inside the kernel; bounded by a fixed tolerance in the tests',
  },
  input: 'query',
  summary: 'Mamba selective scan: Blelloch parallel scan checked against the sequential recurrence and the LTI convolution',
  technique: 'selective state-space scan (Mamba, S4D-real A), work-efficient parallel prefix scan',
  references: ['arXiv:2312.00752', 'arXiv:2206.11893', 'CMU-CS-90-190'],
  honesty: 'The scan algorithms are real; the input sequence and projection weights are seeded synthetic draws, not a trained model.',
  params: {
    seq_len: int(1, 4096, 64).description('sequence length (steps of the scan)'),
    state_dim: int(1, 32, 8).description('state dimension N per channel'),
  },
  worstCase: { seq_len: 4096, state_dim: 32 },
  run({ seq_len: L, state_dim: N }, rng) {
    const inp = makeInputs(L, N, rng.stream('x'), rng.stream('weights'));
    const seq = scanSequential(inp);
    const par = scanParallel(inp);
    let maxAbsY = 0;
    let diff = 0;
    for (let i = 0; i < seq.y.length; i++) {
      maxAbsY = Math.max(maxAbsY, Math.abs(seq.y[i]!));
      diff = Math.max(diff, Math.abs(seq.y[i]! - par.y[i]!));
    }
    const channel0 = Float64Array.from({ length: L }, (_, t) => seq.y[t * CHANNELS]!);
    const series = sampleSeries(channel0);
    const meanDelta: number[] = [];
    const retention: number[] = [];
    for (let d = 0; d < CHANNELS; d++) {
      let sd = 0;
      let sr = 0;
      for (let t = 0; t < L; t++) {
        sd += inp.delta[t * CHANNELS + d]!;
        sr += Math.exp(-inp.delta[t * CHANNELS + d]!); // slowest mode, A_0 = -1
      }
      meanDelta.push(sd / L);
      retention.push(sr / L);
    }
    let stateNorm = 0;
    for (const v of seq.h) stateNorm += v * v;
    const ltiGap = ltiConvolutionGap(inp);
    return {
      constants: { channels: CHANNELS, lti_steps: Math.min(L, LTI_STEPS), A: 'A_n = -(n+1)' },
      result: {
        y_sample: series.values,
        y_sample_index: series.index,
        y_digest: series.digest,
        max_abs_y: maxAbsY,
        max_abs_diff_parallel: diff,
        max_abs_diff_lti_conv: ltiGap,
        scan_depth: 2 * Math.ceil(Math.log2(L)),
        combine_ops: par.combines,
        sequential_ops: L * CHANNELS * N,
        mean_delta: meanDelta,
        retention,
        state_norm_final: Math.sqrt(stateNorm),
      },
      checks: {
        parallel_matches_sequential: diff <= 1e-12 * Math.max(1, maxAbsY),
        lti_conv_matches_recurrence: ltiGap <= 1e-10 * Math.max(1, maxAbsY),
      },
    };
  },
});
