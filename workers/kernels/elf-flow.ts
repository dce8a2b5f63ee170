/**
 * Embedded Language Flows (Hu et al. 2026, arXiv:2605.10938): flow matching in token-embedding
 * space on the rectified-flow path z_t = t·x + (1−t)·ε with x-prediction, Euler sampling and
 * decoding to tokens only at the last step (flow matching: Lipman et al., arXiv:2210.02747).
 * The data law is the vocabulary itself, point masses e_v with prior π, so the Bayes-optimal
 * x-predictor is the posterior mean x̂(z,t) = Σ_v w_v e_v, w ∝ π_v·N(z; t·e_v, (1−t)²I) — the
 * function ELF's denoiser learns, here in closed form. Design: kernels-b §12.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { entropy } from '../lib/linalg.js';

/** Particles listed in full (z0, z1, final weights); tokens and distances are listed for all. */
export const PARTICLES_SHOWN = 48;

export interface Vocab {
  V: number;
  dim: number;
  /** e[v*dim + i] = √dim·unit(N(0, I)) */
  e: Float64Array;
  /** eT[i*V + v] = e[v*dim + i] */
  eT: Float64Array;
  pi: Float64Array;
  logPi: Float64Array;
}

/** Draw order, stream `vocab`: V embeddings (dim normals each), then V prior logits. */
export function drawVocab(V: number, dim: number, rng: Rng): Vocab {
  const e = new Float64Array(V * dim);
  for (let v = 0; v < V; v++) {
    const g = rng.normals(dim);
    let nn = 0;
    for (const x of g) nn += x * x;
    const scale = Math.sqrt(dim) / Math.sqrt(nn);
    for (let i = 0; i < dim; i++) e[v * dim + i] = g[i]! * scale;
  }
  const logits = rng.normals(V);
  let mx = -Infinity;
  for (const l of logits) mx = Math.max(mx, l);
  let sum = 0;
  for (const l of logits) sum += Math.exp(l - mx);
  const logPi = Float64Array.from(logits, (l) => l - mx - Math.log(sum));
  const pi = Float64Array.from(logPi, (l) => Math.exp(l));
  const eT = new Float64Array(V * dim);
  for (let v = 0; v < V; v++) for (let i = 0; i < dim; i++) eT[i * V + v] = e[v * dim + i]!;
  return { V, dim, e, eT, pi, logPi };
}

export interface FlowOut {
  z1: Float64Array;
  weights: Float64Array;
  entropies: Float64Array;
  pathLength: number;
}

/** One of the first particles, listed in full. */
export interface ShownParticle {
  /** the noise the flow starts from (t = 0) */
  z0: Float64Array;
  /** where the Euler integration ends (t = 1) */
  z1: Float64Array;
  /** the decoded token: the nearest embedding to z1 */
  token: number;
  /** the distance from z1 to that embedding */
  dist: number;
  /** the posterior weights over the vocabulary at the last Euler step */
  final_weights: Float64Array;
}

/** Posterior weights over the vocabulary at (z, t): softmax of ln π_v − ‖z − t e_v‖²/(2(1−t)²). */
export function posteriorWeights(voc: Vocab, z: ArrayLike<number>, t: number, out = new Float64Array(voc.V)): Float64Array {
  const { V, dim, e, logPi } = voc;
  const inv = 1 / (2 * (1 - t) * (1 - t));
  let mx = -Infinity;
  for (let v = 0; v < V; v++) {
    let d2 = 0;
    for (let i = 0; i < dim; i++) {
      const diff = z[i]! - t * e[v * dim + i]!;
      d2 += diff * diff;
    }
    const l = logPi[v]! - d2 * inv;
    out[v] = l;
    if (l > mx) mx = l;
  }
  let s = 0;
  for (let v = 0; v < V; v++) {
    out[v] = Math.exp(out[v]! - mx);
    s += out[v]!;
  }
  for (let v = 0; v < V; v++) out[v] = out[v]! / s;
  return out;
}

/**
 * Euler integration of the x-prediction velocity (x̂ − z)/(1 − t) on the grid t_k = k/steps. The
 * logits use ‖z − t e_v‖² = ‖z‖² − 2t z·e_v + t²·dim (‖e_v‖² = dim for every v), dropping the terms
 * common to all v; `posteriorWeights` is the direct form.
 */
export function integrate(voc: Vocab, z0: ArrayLike<number>, steps: number): FlowOut {
  const { V, dim, e, logPi } = voc;
  const z = Float64Array.from(z0);
  const w = new Float64Array(V);
  const xhat = new Float64Array(dim);
  const entropies = new Float64Array(steps);
  const eT = voc.eT;
  const h = 1 / steps;
  let pathLength = 0;
  for (let k = 0; k < steps; k++) {
    const t = k / steps;
    const c = t / ((1 - t) * (1 - t));
    let mx = -Infinity;
    for (let v = 0; v < V; v++) {
      let d = 0;
      const o = v * dim;
      for (let i = 0; i < dim; i++) d += z[i]! * e[o + i]!;
      const l = logPi[v]! + c * d;
      w[v] = l;
      if (l > mx) mx = l;
    }
    let sum = 0;
    for (let v = 0; v < V; v++) {
      const x = Math.exp(w[v]! - mx);
      w[v] = x;
      sum += x;
    }
    let hw = 0;
    for (let v = 0; v < V; v++) {
      const wv = w[v]! / sum;
      w[v] = wv;
      if (wv > 0) hw -= wv * Math.log(wv);
    }
    for (let i = 0; i < dim; i++) {
      let acc = 0;
      const o = i * V;
      for (let v = 0; v < V; v++) acc += w[v]! * eT[o + v]!;
      xhat[i] = acc;
    }
    entropies[k] = hw;
    const f = h / (1 - t);
    let step2 = 0;
    for (let i = 0; i < dim; i++) {
      const dz = f * (xhat[i]! - z[i]!);
      z[i] = z[i]! + dz;
      step2 += dz * dz;
    }
    pathLength += Math.sqrt(step2);
  }
  return { z1: z, weights: w, entropies, pathLength };
}

/** Nearest embedding (ties to the lower index) and its distance. */
export function decode(voc: Vocab, z: ArrayLike<number>): { token: number; dist: number } {
  let best = 0;
  let bestD = Infinity;
  for (let v = 0; v < voc.V; v++) {
    let d2 = 0;
    for (let i = 0; i < voc.dim; i++) d2 += (z[i]! - voc.e[v * voc.dim + i]!) ** 2;
    if (d2 < bestD) {
      bestD = d2;
      best = v;
    }
  }
  return { token: best, dist: Math.sqrt(bestD) };
}

export default defineKernel({
  id: 'elf/flow',
  version: 1,
  input: 'query',
  summary: 'Embedded Language Flows: rectified-flow Euler sampling in embedding space with the exact posterior-mean x-predictor, decoded at the last step',
  technique: 'continuous flow matching in token-embedding space with x-prediction (ELF), final-step decoding',
  references: ['arXiv:2605.10938', 'arXiv:2210.02747', 'arXiv:2209.03003'],
  honesty: 'The flow, the Bayes-optimal x-predictor and the decoding are computed exactly; the vocabulary embeddings, prior and noise are seeded synthetic draws, not a trained language model.',
  params: {
    dim: int(2, 32, 6).description('embedding dimension'),
    targets: int(2, 32, 4).description('target embeddings (tokens) of the mixture'),
    particles: int(1, 256, 32).description('samples drawn'),
    steps: int(1, 32, 8).description('Euler steps of the flow'),
  },
  worstCase: { dim: 32, targets: 32, particles: 256, steps: 32 },
  run({ dim, targets: V, particles: P, steps }, rng) {
    // draw order: vocabulary (stream `vocab`: embeddings, then prior logits); noise (stream `noise`: dim normals per particle)
    const voc = drawVocab(V, dim, rng.stream('vocab'));
    const noise = rng.stream('noise');
    const entropySum = new Float64Array(steps);
    const counts = new Array<number>(V).fill(0);
    const tokens: number[] = [];
    const dists: number[] = [];
    const shown: ShownParticle[] = [];
    let distSum = 0;
    let straightSum = 0;
    for (let p = 0; p < P; p++) {
      const z0 = noise.normals(dim);
      const out = integrate(voc, z0, steps);
      for (let k = 0; k < steps; k++) entropySum[k] = entropySum[k]! + out.entropies[k]!;
      const { token, dist } = decode(voc, out.z1);
      counts[token]!++;
      tokens.push(token);
      dists.push(dist);
      distSum += dist;
      let chord = 0;
      for (let i = 0; i < dim; i++) chord += (out.z1[i]! - z0[i]!) ** 2;
      straightSum += out.pathLength > 0 ? Math.sqrt(chord) / out.pathLength : 1;
      if (p < PARTICLES_SHOWN) shown.push({ z0, z1: out.z1, token, dist, final_weights: out.weights });
    }
    let tv = 0;
    let chi2 = 0;
    for (let v = 0; v < V; v++) {
      tv += Math.abs(counts[v]! / P - voc.pi[v]!);
      chi2 += (counts[v]! - P * voc.pi[v]!) ** 2 / (P * voc.pi[v]!);
    }
    const oneStep = new Float64Array(dim);
    for (let v = 0; v < V; v++) for (let i = 0; i < dim; i++) oneStep[i] = oneStep[i]! + voc.pi[v]! * voc.e[v * dim + i]!;
    const embeddings = Array.from({ length: V }, (_, v) => voc.e.subarray(v * dim, (v + 1) * dim));
    return {
      constants: { embedding_norm: Math.sqrt(dim), time_grid: 't_k = k/steps', particles_shown: Math.min(P, PARTICLES_SHOWN), decode: 'nearest embedding, ties to the lower index' },
      result: {
        embeddings,
        pi: voc.pi,
        particles: shown,
        tokens,
        final_distances: dists,
        entropy_by_step: Array.from(entropySum, (s) => s / P),
        prior_entropy: entropy(voc.pi),
        mean_final_distance: distSum / P,
        straightness_mean: straightSum / P,
        token_counts: counts,
        tv_vs_prior: tv / 2,
        chi2,
        one_step_point: oneStep,
      },
      checks: {
        start_entropy_equals_prior: Math.abs(entropySum[0]! / P - entropy(voc.pi)) <= 1e-12,
        counts_sum: counts.reduce((a, b) => a + b, 0) === P,
      },
    };
  },
});
