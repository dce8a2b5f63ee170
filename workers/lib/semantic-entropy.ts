/**
 * Semantic entropy (Kuhn, Gal & Farquhar, ICLR 2023, arXiv:2302.09664; Farquhar et al., Nature
 * 630:625, 2024), shared by `/sement/info` (method card + worked example) and `/sement/estimate`
 * (kernels-a 1.13, kernels-b 4, reconciled here): one simulated answer distribution, one
 * entailment stand-in, one greedy clustering rule, one set of estimators.
 *
 * Meaning of `threshold`: two answers are bidirectionally equivalent iff they are the same string
 * or the cosine of their embeddings is ≥ threshold − 1e-12 (cosine is symmetric, so both
 * directions agree; the paper's asymmetric NLI entailment is not modelled). The tolerance makes
 * identical strings match even when rounding gives 0.9999999999999999.
 */
import type { Rng } from '../../src/lib/prng.js';
import { cosine, softmax, unit } from './linalg.js';

export const EMBED_DIM = 16;
export const PARAPHRASES = 3;
/** Within-meaning paraphrase weights (3, 2, 1)/6. */
export const PARAPHRASE_WEIGHTS: readonly number[] = [3 / 6, 2 / 6, 1 / 6];
export const MEANING_BETA = 1.5;
export const PARAPHRASE_NOISE = 0.15;
export const MATCH_TOL = 1e-12;

export interface AnswerDistribution {
  /** π_c = softmax(β·z)_c. */
  pi: Float64Array;
  /** e_{c,v} = unit(μ_c + σ·ξ_{c,v}), indexed [c * PARAPHRASES + v]. */
  embeddings: Float64Array[];
  /** q_{c,v} = π_c·w_v, indexed [c * PARAPHRASES + v]. */
  q: Float64Array;
}


/**
 * The simulated answer distribution over C meanings × 3 paraphrases.
 * Draw order on `rng`: prototypes μ_c (C × 16 normals), then z (C normals), then ξ_{c,v}
 * (C × 3 × 16 normals, c-major).
 */
export function answerDistribution(rng: Rng, C: number): AnswerDistribution {
  const protos = Array.from({ length: C }, () => unit(rng.normals(EMBED_DIM)));
  const z = rng.normals(C);
  const pi = softmax(z.map((v) => MEANING_BETA * v));
  const embeddings: Float64Array[] = [];
  const q = new Float64Array(C * PARAPHRASES);
  for (let c = 0; c < C; c++) {
    for (let v = 0; v < PARAPHRASES; v++) {
      const xi = rng.normals(EMBED_DIM);
      embeddings.push(unit(protos[c]!.map((m, d) => m + PARAPHRASE_NOISE * xi[d]!)));
      q[c * PARAPHRASES + v] = pi[c]! * PARAPHRASE_WEIGHTS[v]!;
    }
  }
  return { pi, embeddings, q };
}

export interface Answer {
  meaning: number;
  paraphrase: number;
  /** `c<meaning>-v<paraphrase>`: identical strings share one embedding. */
  string: string;
  /** ln q of the string. */
  loglik: number;
  embedding: Float64Array;
}

export const stringId = (c: number, v: number): string => `c${c}-v${v}`;

/** K i.i.d. answers from q, one uniform each (inverse CDF over the flattened (c, v) table). */
export function sampleAnswers(rng: Rng, dist: AnswerDistribution, K: number): Answer[] {
  const out: Answer[] = [];
  for (let k = 0; k < K; k++) {
    const s = rng.categorical(dist.q);
    const c = Math.floor(s / PARAPHRASES);
    const v = s % PARAPHRASES;
    out.push({ meaning: c, paraphrase: v, string: stringId(c, v), loglik: Math.log(dist.q[s]!), embedding: dist.embeddings[s]! });
  }
  return out;
}

/** The entailment stand-in, both directions (symmetric): same string, or cosine ≥ threshold − 1e-12. */
export function equivalent(a: Pick<Answer, 'string' | 'embedding'>, b: Pick<Answer, 'string' | 'embedding'>, threshold: number): boolean {
  return a.string === b.string || cosine(a.embedding, b.embedding) >= threshold - MATCH_TOL;
}

/**
 * The paper's greedy clustering: answers in order; each joins the first cluster (in creation
 * order) whose first member it is equivalent to, else opens a new cluster. Returns member indices.
 */
export function greedyCluster(answers: readonly Pick<Answer, 'string' | 'embedding'>[], threshold: number): number[][] {
  const clusters: number[][] = [];
  answers.forEach((a, i) => {
    const home = clusters.find((c) => equivalent(answers[c[0]!]!, a, threshold));
    if (home) home.push(i);
    else clusters.push([i]);
  });
  return clusters;
}

/** −Σ p ln p over counts (0 for an empty list). */
export function entropyOfCounts(counts: readonly number[]): number {
  const total = counts.reduce((s, c) => s + c, 0);
  let h = 0;
  for (const c of counts) if (c > 0) h -= (c / total) * Math.log(c / total);
  return h;
}

/** Discrete SE over cluster frequencies. */
export function discreteSE(clusters: readonly number[][]): number {
  return entropyOfCounts(clusters.map((c) => c.length));
}

/** Miller–Madow bias correction: SE_d + (Ĉ − 1)/(2K). */
export function millerMadow(clusters: readonly number[][], K: number): number {
  return discreteSE(clusters) + (clusters.length - 1) / (2 * K);
}

/** Likelihood SE: P(C) = Σ over the unique strings of C of exp(loglik), normalised over clusters. */
export function likelihoodSE(answers: readonly Pick<Answer, 'string' | 'loglik'>[], clusters: readonly number[][]): number {
  const mass = clusters.map((c) => {
    const seen = new Set<string>();
    let m = 0;
    for (const i of c) {
      const a = answers[i]!;
      if (!seen.has(a.string)) {
        seen.add(a.string);
        m += Math.exp(a.loglik);
      }
    }
    return m;
  });
  return entropyOfCounts(mass);
}

/** Entropy of the empirical distribution over distinct strings. */
export function lexicalEntropy(answers: readonly Pick<Answer, 'string'>[]): number {
  const counts = new Map<string, number>();
  for (const a of answers) counts.set(a.string, (counts.get(a.string) ?? 0) + 1);
  return entropyOfCounts([...counts.values()]);
}

/** Cluster label of every answer. */
export function labelsOf(clusters: readonly number[][], n: number): number[] {
  const labels = new Array<number>(n).fill(-1);
  clusters.forEach((c, ci) => c.forEach((i) => (labels[i] = ci)));
  return labels;
}

/** Fraction of items whose cluster's majority true label is theirs. */
export function purity(pred: readonly number[], truth: readonly number[]): number {
  const table = new Map<number, Map<number, number>>();
  pred.forEach((p, i) => {
    const row = table.get(p) ?? new Map<number, number>();
    row.set(truth[i]!, (row.get(truth[i]!) ?? 0) + 1);
    table.set(p, row);
  });
  let hit = 0;
  for (const row of table.values()) hit += Math.max(...row.values());
  return pred.length ? hit / pred.length : 1;
}

/**
 * Adjusted Rand index (Hubert & Arabie 1985) of two labelings of the same items. When both
 * partitions are trivial in the same way (the expected index equals the maximum) it returns 1 if
 * they are identical and 0 otherwise.
 */
export function adjustedRandIndex(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new Error('adjustedRandIndex: labelings differ in length');
  const n = a.length;
  const c2 = (x: number): number => (x * (x - 1)) / 2;
  const joint = new Map<string, number>();
  const ra = new Map<number, number>();
  const rb = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const key = `${a[i]},${b[i]}`;
    joint.set(key, (joint.get(key) ?? 0) + 1);
    ra.set(a[i]!, (ra.get(a[i]!) ?? 0) + 1);
    rb.set(b[i]!, (rb.get(b[i]!) ?? 0) + 1);
  }
  let index = 0;
  for (const v of joint.values()) index += c2(v);
  let sa = 0;
  let sb = 0;
  for (const v of ra.values()) sa += c2(v);
  for (const v of rb.values()) sb += c2(v);
  const total = c2(n);
  const expected = total > 0 ? (sa * sb) / total : 0;
  const max = (sa + sb) / 2;
  if (max === expected) return index === max ? 1 : 0;
  return (index - expected) / (max - expected);
}

export interface SemanticEntropyRun {
  dist: AnswerDistribution;
  answers: Answer[];
  clusters: number[][];
  se_discrete: number;
  se_miller_madow: number;
  se_likelihood: number;
  lexical_entropy: number;
  /** H(π) of the generator over all its meanings. */
  true_semantic_entropy: number;
  /** ln K. */
  max_entropy: number;
  purity: number;
  ari: number;
}

/**
 * One semantic-entropy experiment: the answer distribution from `meanings`, K answers from
 * `samples`, greedy clustering at `threshold`, every estimator and agreement with the true meanings.
 */
export function semanticEntropyRun(meanings: Rng, samples: Rng, K: number, C: number, threshold: number): SemanticEntropyRun {
  const dist = answerDistribution(meanings, C);
  const answers = sampleAnswers(samples, dist, K);
  const clusters = greedyCluster(answers, threshold);
  const pred = labelsOf(clusters, K);
  const truth = answers.map((a) => a.meaning);
  return {
    dist,
    answers,
    clusters,
    se_discrete: discreteSE(clusters),
    se_miller_madow: millerMadow(clusters, K),
    se_likelihood: likelihoodSE(answers, clusters),
    lexical_entropy: lexicalEntropy(answers),
    true_semantic_entropy: entropyOfCounts(Array.from(dist.pi)),
    max_entropy: Math.log(K),
    purity: purity(pred, truth),
    ari: adjustedRandIndex(pred, truth),
  };
}
