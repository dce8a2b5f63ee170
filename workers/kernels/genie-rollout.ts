/**
 * Genie latent-action world model (Bruce et al. 2024, arXiv:2402.15391): a latent action model infers
 * a discrete action (a small VQ codebook) from consecutive frames, a dynamics model rolls the world
 * forward from past frames and an action, and controllability is measured by Δ_t PSNR (generation
 * with the inferred actions versus random actions). Design: kernels-c §12.
 *
 * Here the world is linear in a latent state (z' = ρRz + e_a, R orthogonal) observed through a
 * tanh decoder; the encoder is the least-squares inverse of that decoder (normal equations factored
 * once), so every quantity below has a closed form a test can check.
 */
import { defineKernel } from '../kernel-def.js';
import { cholesky, choleskySolve, gramSchmidt, type Matrix } from '../lib/linalg.js';
import { sampleSeries } from '../../src/lib/numbers.js';
import { int, num } from '../../src/lib/params.js';

const FRAME_NOISE = 0.01;
const PEAK = 2; // frames live in [−1, 1]
/** atanh is evaluated on frames clipped to ±(1 − CLIP_EPS): noise can push a saturated pixel past ±1. */
const CLIP_EPS = 1e-6;
const DELTA_SCALE = 1e-3;
const CONFUSION_MAX_ACTIONS = 16;

/** z_{t+1} = ρ·R·z_t + e_{a_t}; returns the (T+1)×D states row by row. */
export function rollout(z0: ArrayLike<number>, R: Float64Array, rho: number, codebook: Float64Array, actions: ArrayLike<number>, D: number): Float64Array {
  const T = actions.length;
  const Z = new Float64Array((T + 1) * D);
  for (let i = 0; i < D; i++) Z[i] = z0[i]!;
  for (let t = 0; t < T; t++) {
    const a = actions[t]!;
    for (let i = 0; i < D; i++) {
      let s = 0;
      for (let j = 0; j < D; j++) s += R[i * D + j]! * Z[t * D + j]!;
      Z[(t + 1) * D + i] = rho * s + codebook[a * D + i]!;
    }
  }
  return Z;
}

/** Solves A x = b (n×n, row-major) by Gaussian elimination with partial pivoting. */
export function solveLinear(a: Float64Array, b: ArrayLike<number>, n: number): Float64Array {
  const M = Float64Array.from(a);
  const x = Float64Array.from(b as ArrayLike<number>);
  for (let k = 0; k < n; k++) {
    let piv = k;
    for (let i = k + 1; i < n; i++) if (Math.abs(M[i * n + k]!) > Math.abs(M[piv * n + k]!)) piv = i;
    if (piv !== k) {
      for (let j = 0; j < n; j++) {
        const tmp = M[k * n + j]!;
        M[k * n + j] = M[piv * n + j]!;
        M[piv * n + j] = tmp;
      }
      const tb = x[k]!;
      x[k] = x[piv]!;
      x[piv] = tb;
    }
    for (let i = k + 1; i < n; i++) {
      const f = M[i * n + k]! / M[k * n + k]!;
      if (f === 0) continue;
      for (let j = k; j < n; j++) M[i * n + j] = M[i * n + j]! - f * M[k * n + j]!;
      x[i] = x[i]! - f * x[k]!;
    }
  }
  for (let i = n - 1; i >= 0; i--) {
    let s = x[i]!;
    for (let j = i + 1; j < n; j++) s -= M[i * n + j]! * x[j]!;
    x[i] = s / M[i * n + i]!;
  }
  return x;
}

function vnorm(v: ArrayLike<number>, off: number, D: number): number {
  let s = 0;
  for (let i = 0; i < D; i++) s += v[off + i]! * v[off + i]!;
  return Math.sqrt(s);
}

/** Frame = tanh(G·z) for z = Z[zOff…zOff+D), G is P×D row-major. */
function decodeInto(G: Float64Array, P: number, D: number, Z: Float64Array, zOff: number, out: Float64Array, outOff: number): void {
  for (let p = 0; p < P; p++) {
    let s = 0;
    const g = p * D;
    for (let j = 0; j < D; j++) s += G[g + j]! * Z[zOff + j]!;
    out[outOff + p] = Math.tanh(s);
  }
}

export default defineKernel({
  id: 'genie/rollout',
  version: 1,
  input: 'query',
  summary: 'Genie-style latent action model: VQ action inference from frames, controllable rollout, Δ PSNR against random actions, and closed-form contraction probes',
  technique: 'latent-action world model (Genie): VQ latent actions, dynamics rollout, Δt PSNR',
  references: ['arXiv:2402.15391'],
  honesty: 'The rollouts, least-squares encoder, VQ action inference and PSNR are computed; the world (a contracting rotation with a tanh decoder) and the codebook are seeded synthetic stand-ins for learned networks.',
  params: {
    dim: int(2, 32, 8).description('frame (latent) dimension'),
    n_actions: int(2, 64, 6).description('latent actions of the VQ codebook'),
    horizon: int(1, 1024, 32).description('rollout steps'),
    rho: num(0, 0.999, 0.85).description('contraction factor of the dynamics'),
  },
  worstCase: { dim: 32, n_actions: 64, horizon: 1024, rho: 0.999 },
  run({ dim: D, n_actions: A, horizon: H, rho }, rng) {
    // draw order, one stream each: G 2D×D (`decoder`), Gaussian D×D for R (`rotation`), codebook A×D
    // (`codebook`), z_0 (`z0`), true actions (`actions`), frame noise (H+1)×2D (`frame_noise`),
    // random actions (`random`), perturbation Δ (`delta`)
    const P = 2 * D;
    const G = rng.stream('decoder').normals(P * D, 1 / Math.sqrt(D));
    const R = gramSchmidt({ rows: D, cols: D, data: rng.stream('rotation').normals(D * D) }).q.data;
    const codebook = rng.stream('codebook').normals(A * D);
    for (let k = 0; k < A; k++) {
      const nk = vnorm(codebook, k * D, D);
      for (let i = 0; i < D; i++) codebook[k * D + i] = codebook[k * D + i]! / nk;
    }
    const z0 = rng.stream('z0').normals(D);
    const actRng = rng.stream('actions');
    const actions = Int32Array.from({ length: H }, () => actRng.int(A));
    const Z = rollout(z0, R, rho, codebook, actions, D);
    const noise = rng.stream('frame_noise');
    const frames = new Float64Array((H + 1) * P);
    for (let t = 0; t <= H; t++) {
      decodeInto(G, P, D, Z, t * D, frames, t * P);
      for (let p = 0; p < P; p++) frames[t * P + p] = frames[t * P + p]! + FRAME_NOISE * noise.normal();
    }

    // latent action model: ẑ_t = argmin ‖G z − atanh(clip x_t)‖, GᵀG factored once
    const gtg: Matrix = { rows: D, cols: D, data: new Float64Array(D * D) };
    for (let i = 0; i < D; i++) for (let j = 0; j < D; j++) {
      let s = 0;
      for (let p = 0; p < P; p++) s += G[p * D + i]! * G[p * D + j]!;
      gtg.data[i * D + j] = s;
    }
    const L = cholesky(gtg);
    const GT = new Float64Array(D * P);
    for (let p = 0; p < P; p++) for (let j = 0; j < D; j++) GT[j * P + p] = G[p * D + j]!;
    const Zhat = new Float64Array((H + 1) * D);
    const rhs = new Float64Array(D);
    const yv = new Float64Array(P);
    const lim = 1 - CLIP_EPS;
    for (let t = 0; t <= H; t++) {
      for (let p = 0; p < P; p++) yv[p] = Math.atanh(Math.max(-lim, Math.min(lim, frames[t * P + p]!)));
      for (let j = 0; j < D; j++) {
        let s = 0;
        for (let p = 0; p < P; p++) s += GT[j * P + p]! * yv[p]!;
        rhs[j] = s;
      }
      Zhat.set(choleskySolve(L, rhs), t * D);
    }
    const inferred = new Int32Array(H);
    const resid = new Float64Array(D);
    for (let t = 0; t < H; t++) {
      for (let i = 0; i < D; i++) {
        let s = 0;
        for (let j = 0; j < D; j++) s += R[i * D + j]! * Zhat[t * D + j]!;
        resid[i] = Zhat[(t + 1) * D + i]! - rho * s;
      }
      let best = 0;
      let bestD = Infinity;
      for (let k = 0; k < A; k++) {
        let d = 0;
        for (let i = 0; i < D; i++) {
          const e = resid[i]! - codebook[k * D + i]!;
          d += e * e;
        }
        if (d < bestD) {
          bestD = d;
          best = k;
        }
      }
      inferred[t] = best;
    }
    let correct = 0;
    for (let t = 0; t < H; t++) if (inferred[t] === actions[t]) correct++;

    // controllable generation from z_0: inferred actions vs random actions, PSNR per step t = 1..H
    const randRng = rng.stream('random');
    const randomActions = Int32Array.from({ length: H }, () => randRng.int(A));
    const psnrOf = (acts: Int32Array) => {
      const Zg = rollout(z0, R, rho, codebook, acts, D);
      const pred = new Float64Array(P);
      const out = new Float64Array(H);
      for (let t = 1; t <= H; t++) {
        decodeInto(G, P, D, Zg, t * D, pred, 0);
        let mse = 0;
        for (let p = 0; p < P; p++) {
          const e = pred[p]! - frames[t * P + p]!;
          mse += e * e;
        }
        mse /= P;
        out[t - 1] = 10 * Math.log10((PEAK * PEAK) / Math.max(mse, Number.MIN_VALUE));
      }
      return out;
    };
    const psnrInf = psnrOf(inferred);
    const psnrRand = psnrOf(randomActions);
    const mean = (v: Float64Array) => v.reduce((s, x) => s + x, 0) / v.length;
    let deltaPsnr = 0;
    for (let t = 0; t < H; t++) deltaPsnr += psnrInf[t]! - psnrRand[t]!;
    deltaPsnr /= H;

    // probe 1: two trajectories from z_0 and z_0 + Δ under the same actions. The map is affine, so their
    // difference obeys δ_{t+1} = ρRδ_t exactly; it is propagated directly because subtracting two
    // rollouts loses every digit once ρ^t‖Δ‖ falls below ~1e-16‖z_t‖ (the direct difference is a check).
    const delta = rng.stream('delta').normals(D, DELTA_SCALE);
    const d0 = vnorm(delta, 0, D);
    const noActions = new Int32Array(H);
    const zeroBook = new Float64Array(A * D);
    const tangent = rollout(delta, R, rho, zeroBook, noActions, D);
    const ratio = Float64Array.from({ length: H + 1 }, (_, t) => vnorm(tangent, t * D, D) / d0);
    const zPerturbed = rollout(z0.map((v, i) => v + delta[i]!), R, rho, codebook, actions, D);
    let directDev = 0;
    for (let t = 0; t <= H; t++) {
      let s = 0;
      for (let i = 0; i < D; i++) s += (zPerturbed[t * D + i]! - Z[t * D + i]! - tangent[t * D + i]!) ** 2;
      directDev = Math.max(directDev, Math.sqrt(s) / d0);
    }

    // probe 2: constant action a_0 from z_0 and its fixed point z* = (I − ρR)⁻¹ e_a
    const aConst = actions[0]!;
    const IminusRhoR = new Float64Array(D * D);
    for (let i = 0; i < D; i++) for (let j = 0; j < D; j++) IminusRhoR[i * D + j] = (i === j ? 1 : 0) - rho * R[i * D + j]!;
    const zStar = solveLinear(IminusRhoR, codebook.subarray(aConst * D, aConst * D + D), D);
    const Zc = rollout(z0, R, rho, codebook, new Int32Array(H).fill(aConst), D);
    const distTo = (off: number) => {
      let s = 0;
      for (let i = 0; i < D; i++) s += (Zc[off + i]! - zStar[i]!) ** 2;
      return Math.sqrt(s);
    };

    const norms = Float64Array.from({ length: H + 1 }, (_, t) => vnorm(Z, t * D, D));
    const confusion = A <= CONFUSION_MAX_ACTIONS ? Array.from({ length: A }, () => new Array<number>(A).fill(0)) : null;
    if (confusion) for (let t = 0; t < H; t++) confusion[actions[t]!]![inferred[t]!]!++;
    const normSeries = sampleSeries(norms);
    const ratioSeries = sampleSeries(ratio);
    const trueSeries = sampleSeries(actions);
    const infSeries = sampleSeries(inferred);
    const psnrInfSeries = sampleSeries(psnrInf);
    const psnrRandSeries = sampleSeries(psnrRand);
    return {
      constants: { frame_channels: P, frame_noise: FRAME_NOISE, psnr_peak_to_peak: PEAK, clip_eps: CLIP_EPS, delta_scale: DELTA_SCALE, decoder_sd: '1/sqrt(dim)', confusion_max_actions: CONFUSION_MAX_ACTIONS },
      result: {
        z0,
        action_accuracy: correct / H,
        confusion,
        delta_psnr: deltaPsnr,
        psnr_inferred_mean: mean(psnrInf),
        psnr_random_mean: mean(psnrRand),
        psnr_inferred: psnrInfSeries.values,
        psnr_random: psnrRandSeries.values,
        psnr_index: psnrInfSeries.index.map((i) => i + 1),
        state_norms: normSeries.values,
        state_norms_index: normSeries.index,
        state_norms_digest: normSeries.digest,
        divergence_ratio: ratioSeries.values,
        divergence_ratio_index: ratioSeries.index,
        fixed_point: { action: aConst, z_star: zStar },
        fixed_point_distance: { start: distTo(0), end: distTo(H * D) },
        true_actions: trueSeries.values,
        inferred_actions: infSeries.values,
        actions_index: trueSeries.index,
        actions_digest: { true: trueSeries.digest, inferred: infSeries.digest },
      },
      checks: {
        divergence_direct_minus_tangent_max: directDev,
        fixed_point_end_minus_closed_form: distTo(H * D) - rho ** H * distTo(0),
      },
    };
  },
});
