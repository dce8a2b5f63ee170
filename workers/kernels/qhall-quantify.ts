/**
 * Quantified hallucination uncertainty from K sampled generations: the INSIDE EigenScore
 * (Chen et al., arXiv:2402.03744) over the feature-centred Gram matrix (computed through the
 * smaller of the K×K and dim×dim forms, Sylvester's identity), the von Neumann entropy of the
 * unit-trace cosine kernel (Kernel Language Entropy, arXiv:2405.20003), semantic Shannon and
 * Rényi-2 entropies of greedy cosine clusters (arXiv:2601.20026 reports a semantic Rényi entropy)
 * and a labelled Hall-style plateau readout ν = ⌊L·h_norm⌋ (an analogy, not physics), with a
 * grounded-versus-confabulating detection AUROC. Design: kernels-b §16.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';
import { jacobiEigen, type Matrix } from '../lib/linalg.js';
import { auroc } from '../lib/ranking.js';

export const SIGMA = 0.35;
export const ALPHA = 1e-3;
export const CLUSTER_COS = 0.55;
export const LEVELS = 8;
export const QUESTIONS = 16;

export interface Generations {
  K: number;
  dim: number;
  latent: Int32Array;
  /** z[j*dim + i] */
  z: Float64Array;
}

/** Prototypes: A·dim normals from `protoRng`; then per generation a = int(A) and dim normals (scaled σ) from `genRng`. */
export function drawGenerations(K: number, dim: number, A: number, protoRng: Rng, genRng: Rng, sigma = SIGMA): Generations {
  const mu = protoRng.normals(A * dim);
  const latent = new Int32Array(K);
  const z = new Float64Array(K * dim);
  for (let j = 0; j < K; j++) {
    const a = genRng.int(A);
    latent[j] = a;
    const xi = genRng.normals(dim);
    for (let i = 0; i < dim; i++) z[j * dim + i] = mu[a * dim + i]! + sigma * xi[i]!;
  }
  return { K, dim, latent, z };
}

function sym(n: number, at: (i: number, j: number) => number): Matrix {
  const m: Matrix = { rows: n, cols: n, data: new Float64Array(n * n) };
  for (let i = 0; i < n; i++) {
    for (let j = i; j < n; j++) {
      const v = at(i, j);
      m.data[i * n + j] = v;
      m.data[j * n + i] = v;
    }
  }
  return m;
}

/** Feature-centred embeddings: each z_j minus its own mean over features (J_d applied per generation). */
function centred(g: Generations): Float64Array {
  const { K, dim, z } = g;
  const c = new Float64Array(K * dim);
  for (let j = 0; j < K; j++) {
    let m = 0;
    for (let i = 0; i < dim; i++) m += z[j * dim + i]!;
    m /= dim;
    for (let i = 0; i < dim; i++) c[j * dim + i] = z[j * dim + i]! - m;
  }
  return c;
}

/** EigenScore through the smaller Gram form; `viaK` forces the K×K matrix (for the Sylvester check). */
export function eigenScore(g: Generations, viaK = false): { score: number; eigenvalues: Float64Array } {
  const { K, dim } = g;
  const c = centred(g);
  if (viaK || K <= dim) {
    const gram = sym(K, (a, b) => {
      let s = 0;
      for (let i = 0; i < dim; i++) s += c[a * dim + i]! * c[b * dim + i]!;
      return s;
    });
    const ev = jacobiEigen(gram).values;
    let s = 0;
    for (const l of ev) s += Math.log(Math.max(l, 0) + ALPHA);
    return { score: s / K, eigenvalues: ev };
  }
  const cov = sym(dim, (a, b) => {
    let s = 0;
    for (let j = 0; j < K; j++) s += c[j * dim + a]! * c[j * dim + b]!;
    return s;
  });
  const ev = jacobiEigen(cov).values;
  let s = (K - dim) * Math.log(ALPHA);
  for (const l of ev) s += Math.log(Math.max(l, 0) + ALPHA);
  return { score: s / K, eigenvalues: ev };
}

function unitRows(g: Generations): Float64Array {
  const { K, dim, z } = g;
  const u = new Float64Array(K * dim);
  for (let j = 0; j < K; j++) {
    let nn = 0;
    for (let i = 0; i < dim; i++) nn += z[j * dim + i]! ** 2;
    const r = Math.sqrt(nn) || 1;
    for (let i = 0; i < dim; i++) u[j * dim + i] = z[j * dim + i]! / r;
  }
  return u;
}

/** KLE von Neumann entropy of ρ = (1/K)[u_i·u_j], via UᵀU/K when K > dim (same nonzero spectrum). */
export function kleVne(g: Generations): { vne: number; spectrum: Float64Array } {
  const { K, dim } = g;
  const u = unitRows(g);
  const m =
    K <= dim
      ? sym(K, (a, b) => {
          let s = 0;
          for (let i = 0; i < dim; i++) s += u[a * dim + i]! * u[b * dim + i]!;
          return s / K;
        })
      : sym(dim, (a, b) => {
          let s = 0;
          for (let j = 0; j < K; j++) s += u[j * dim + a]! * u[j * dim + b]!;
          return s / K;
        });
  const spectrum = jacobiEigen(m).values;
  let vne = 0;
  for (const l of spectrum) if (l > 0) vne -= l * Math.log(l);
  return { vne, spectrum };
}

/** Greedy cosine clustering: each generation joins the most similar existing representative (cos ≥ threshold, ties to the older cluster), else founds a cluster. */
export function greedyClusters(g: Generations, threshold = CLUSTER_COS): number[][] {
  const { K, dim } = g;
  const u = unitRows(g);
  const clusters: number[][] = [];
  for (let j = 0; j < K; j++) {
    let best = -1;
    let bestCos = -Infinity;
    for (let c = 0; c < clusters.length; c++) {
      const rep = clusters[c]![0]!;
      let s = 0;
      for (let i = 0; i < dim; i++) s += u[j * dim + i]! * u[rep * dim + i]!;
      if (s >= threshold && s > bestCos) {
        bestCos = s;
        best = c;
      }
    }
    if (best < 0) clusters.push([j]);
    else clusters[best]!.push(j);
  }
  return clusters;
}

export function clusterEntropies(sizes: number[], K: number): { shannon: number; renyi2: number } {
  let h = 0;
  let s2 = 0;
  for (const n of sizes) {
    const p = n / K;
    if (p > 0) h -= p * Math.log(p);
    s2 += p * p;
  }
  return { shannon: h, renyi2: -Math.log(s2) };
}

export default defineKernel({
  id: 'qhall/quantify',
  version: 1,
  input: 'query',
  summary: 'Sampling-based hallucination uncertainty: INSIDE EigenScore, kernel language entropy, semantic Shannon/Rényi entropies, a plateau readout and detection AUROC',
  technique: 'spectral semantic uncertainty over multiple generations (EigenScore, KLE von Neumann entropy, semantic entropy)',
  references: ['arXiv:2402.03744', 'arXiv:2405.20003', 'arXiv:2601.20026', 'arXiv:2302.09664'],
  honesty: 'The spectral and entropy measures are computed exactly; the generation embeddings are seeded Gaussian clouds around synthetic latent answers, not outputs of a language model, and the plateau readout is a labelled discretisation, not physics.',
  params: {
    generations: int(2, 128, 24).description('sampled generations per question'),
    dim: int(2, 32, 8).description('embedding dimension of a generation'),
    latent_answers: int(1, 16, 3).description('distinct true answers behind the generations'),
  },
  worstCase: { generations: 128, dim: 32, latent_answers: 16 },
  run({ generations: K, dim, latent_answers: A }, rng) {
    // draw order: main question (stream `answers`: prototypes; stream `gens`: latent + noise per generation);
    // question q of the detection experiment: stream `questions/q`, prototypes then generations
    const main = drawGenerations(K, dim, A, rng.stream('answers'), rng.stream('gens'));
    const es = eigenScore(main);
    const kle = kleVne(main);
    const clusters = greedyClusters(main);
    const sizes = clusters.map((c) => c.length);
    const { shannon, renyi2 } = clusterEntropies(sizes, K);
    const hNorm = shannon / Math.log(K);
    const nu = Math.min(LEVELS, Math.floor(LEVELS * hNorm));
    const grounded: number[] = [];
    const confab: number[] = [];
    for (let q = 0; q < QUESTIONS; q++) {
      const stream = rng.stream(`questions/${q}`);
      const gq = drawGenerations(K, dim, q < QUESTIONS / 2 ? 1 : A, stream, stream);
      (q < QUESTIONS / 2 ? grounded : confab).push(eigenScore(gq).score);
    }
    const detectionAuroc = auroc([...confab, ...grounded], [...confab.map(() => 1), ...grounded.map(() => 0)]); // confabulating is the positive class
    let traceRho = 0;
    for (const l of kle.spectrum) traceRho += l;
    return {
      constants: { sigma: SIGMA, alpha: ALPHA, cluster_cos: CLUSTER_COS, levels: LEVELS, questions: QUESTIONS, grounded_latent_answers: 1, centring: 'J_d: each embedding minus its mean over features', clustering: 'cosine of raw embeddings, most similar representative at or above the threshold' },
      result: {
        generations: Array.from({ length: K }, (_, j) => ({ latent: main.latent[j], z: main.z.subarray(j * dim, (j + 1) * dim) })),
        eigenvalues: es.eigenvalues,
        eigenscore: es.score,
        kle_vne: kle.vne,
        kle_spectrum: kle.spectrum,
        clusters,
        cluster_sizes: sizes,
        semantic_entropy: shannon,
        renyi2_entropy: renyi2,
        normalized_entropy: hNorm,
        plateau: { levels: LEVELS, nu, g: nu / LEVELS },
        detection: { eigenscores_grounded: grounded, eigenscores_confab: confab, auroc: detectionAuroc },
      },
      checks: {
        rho_trace: traceRho,
        vne_within_bounds: kle.vne >= -1e-12 && kle.vne <= Math.log(Math.min(K, dim)) + 1e-12,
        entropy_order: renyi2 <= shannon + 1e-12 && shannon <= Math.log(clusters.length) + 1e-12,
      },
    };
  },
});
