/**
 * `/sement/estimate`: semantic entropy over K sampled answers (Kuhn, Gal & Farquhar, ICLR 2023;
 * Farquhar et al., Nature 2024): greedy bidirectional-entailment clustering, then discrete,
 * Miller–Madow and likelihood semantic entropy, against the lexical and true entropies. The
 * clustering rule and `threshold` are those of `/sement/info` (workers/lib/semantic-entropy.ts).
 * Design: kernels-b §4.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import { EMBED_DIM, MEANING_BETA, PARAPHRASE_NOISE, PARAPHRASE_WEIGHTS, PARAPHRASES, semanticEntropyRun } from '../lib/semantic-entropy.js';

export default defineKernel({
  id: 'sement/estimate',
  version: 1,
  input: 'query',
  summary: 'Semantic entropy of sampled answers: greedy entailment clustering, discrete / Miller–Madow / likelihood SE, ARI against true meanings',
  technique: 'semantic entropy over greedy bidirectional-entailment clusters (cosine stand-in for NLI)',
  references: ['arXiv:2302.09664', 'doi:10.1038/s41586-024-07421-0'],
  honesty:
    'The clustering and estimators are real; the answers, their embeddings and likelihoods are seeded synthetic draws, and entailment is simulated by cosine similarity, not an NLI model.',
  // K is capped at 256 so that per-sample arrays stay within the 256-entry body rule
  params: {
    K: int(2, 256, 40).description('answers sampled'),
    n_clusters: int(1, 50, 5).description('true meanings among the answers'),
    threshold: num(-1, 1, 0.6).description('entailment score above which two answers share a meaning'),
  },
  worstCase: { K: 256, n_clusters: 50, threshold: 1 },
  run({ K, n_clusters: C, threshold }, rng) {
    // draws: stream `meanings` (C×16 prototype normals, C logits, C×3×16 paraphrase normals);
    // stream `samples` (K uniforms, inverse CDF over q)
    const r = semanticEntropyRun(rng.stream('meanings'), rng.stream('samples'), K, C, threshold);
    return {
      constants: { embed_dim: EMBED_DIM, paraphrases: PARAPHRASES, paraphrase_weights: PARAPHRASE_WEIGHTS, meaning_beta: MEANING_BETA, paraphrase_noise: PARAPHRASE_NOISE },
      result: {
        samples: r.answers.map((a) => ({ meaning: a.meaning, paraphrase: a.paraphrase, string: a.string, loglik: a.loglik, embedding: a.embedding })),
        clusters: r.clusters,
        cluster_sizes: r.clusters.map((c) => c.length),
        se_discrete: r.se_discrete,
        se_discrete_mm: r.se_miller_madow,
        se_likelihood: r.se_likelihood,
        lexical_entropy: r.lexical_entropy,
        true_semantic_entropy: r.true_semantic_entropy,
        max_entropy: r.max_entropy,
        n_clusters_found: r.clusters.length,
        purity: r.purity,
        ari: r.ari,
        pi: r.dist.pi,
        info_route: '/api/svc/v1/sement/info',
      },
      checks: {
        se_le_lexical: r.se_discrete <= r.lexical_entropy + 1e-12,
        se_le_ln_found: r.se_discrete <= Math.log(r.clusters.length) + 1e-12,
        se_le_ln_k: r.se_discrete <= r.max_entropy + 1e-12,
      },
    };
  },
});
