/**
 * `/sement/info`: the method card of semantic entropy (Kuhn, Gal & Farquhar 2023; Farquhar et al.,
 * Nature 2024) with a worked example computed by the same module `/sement/estimate` uses
 * (workers/lib/semantic-entropy.ts), so the card is never a constant. Design: kernels-a §1.13.
 */
import { defineKernel } from '../kernel-def.js';
import { int, num } from '../../src/lib/params.js';
import { EMBED_DIM, MATCH_TOL, MEANING_BETA, PARAPHRASE_NOISE, PARAPHRASE_WEIGHTS, PARAPHRASES, semanticEntropyRun } from '../lib/semantic-entropy.js';

export const ESTIMATE_DEFAULTS = { K: 40, n_clusters: 5, threshold: 0.6 };

export default defineKernel({
  id: 'sement/info',
  version: 1,
  input: 'query',
  summary: 'Semantic entropy method card with a worked example: greedy bidirectional-entailment clustering and entropy over meanings',
  technique: 'semantic entropy (discrete, likelihood-weighted, Miller–Madow) over greedy entailment clusters',
  references: ['arXiv:2302.09664', 'doi:10.1038/s41586-024-07421-0'],
  honesty:
    'The clustering rule and estimators are real; the answers are seeded synthetic draws with embeddings, and entailment is simulated by cosine similarity, not an NLI model.',
  params: {
    K: int(2, 200, 40).description('answers sampled in the worked example'),
    n_clusters: int(1, 20, 5).description('distinct meanings among the answers (at most K)'),
    threshold: num(-1, 1, 0.6).description('entailment score above which two answers share a meaning'),
  },
  rules: ['n_clusters must be <= K'],
  constraints: (p) => (p.n_clusters > p.K ? [{ param: 'n_clusters', msg: 'n_clusters must be <= K' }] : []),
  worstCase: { K: 200, n_clusters: 20, threshold: 1 },
  run({ K, n_clusters: C, threshold }, rng) {
    // draws: stream `meanings` (prototypes, meaning logits, paraphrase noise), stream `samples` (K uniforms)
    const r = semanticEntropyRun(rng.stream('meanings'), rng.stream('samples'), K, C, threshold);
    const distinct = new Map<string, Float64Array>();
    for (const a of r.answers) if (!distinct.has(a.string)) distinct.set(a.string, a.embedding);
    return {
      constants: { embed_dim: EMBED_DIM, paraphrases: PARAPHRASES, paraphrase_weights: PARAPHRASE_WEIGHTS, meaning_beta: MEANING_BETA, paraphrase_noise: PARAPHRASE_NOISE, match_tolerance: MATCH_TOL },
      result: {
        method: {
          name: 'semantic entropy',
          estimators: [
            'discrete: -sum (n_c/K) ln(n_c/K) over clusters',
            'likelihood-weighted: p_c proportional to the summed sequence probability of the unique answers in c',
            'Miller-Madow: discrete + (C_found - 1)/(2K)',
          ],
          clustering: 'greedy bidirectional entailment (first-member)',
          entailment_model: 'cosine >= threshold (simulated); identical strings always match',
          threshold_meaning: 'two answers share a meaning iff same string or cosine(embedding_a, embedding_b) >= threshold - 1e-12',
          generator: 'meanings pi = softmax(1.5 z); 3 paraphrases per meaning with weights (3,2,1)/6; embedding = unit(mu_c + 0.15 xi)',
          flags: 'high semantic entropy suggests confabulation',
          defaults: ESTIMATE_DEFAULTS,
        },
        bounds: { se_min: 0, se_max: Math.log(K) },
        example: {
          samples: r.answers.map((a) => ({ meaning: a.meaning, paraphrase: a.paraphrase, string: a.string, loglik: a.loglik })),
          strings: [...distinct].map(([string, embedding]) => ({ string, embedding })),
          clusters: r.clusters.map((c) => ({ size: c.length, members: c })),
          n_clusters_found: r.clusters.length,
          se_discrete: r.se_discrete,
          se_weighted: r.se_likelihood,
          se_miller_madow: r.se_miller_madow,
          lexical_entropy: r.lexical_entropy,
          true_entropy: r.true_semantic_entropy,
          pi: r.dist.pi,
          purity: r.purity,
          ari: r.ari,
        },
        estimate_route: '/api/svc/v1/sement/estimate',
      },
      checks: {
        se_le_lexical: r.se_discrete <= r.lexical_entropy + 1e-12,
        se_le_ln_found: r.se_discrete <= Math.log(r.clusters.length) + 1e-12,
      },
    };
  },
});
