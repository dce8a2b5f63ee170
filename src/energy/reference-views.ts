/**
 * /energy/jtoken and /energy/kvcache. Published figures are kept apart from anything this process
 * measures; the receipt example is produced by running the /energy/receipt kernel itself in the
 * pool, so the two endpoints cannot disagree.
 */
import { GENESIS, HASH_FORMULA, METHOD } from '../lib/energy-receipt.js';
import type { WorkerPool } from '../platform/pool.js';
import { q, type Quantity } from './quantity.js';
import { ENERGY_SOURCES } from './sources.js';
import { RECEIPT_PATH } from './chain.js';
import { API } from '../isomorphic/api.js';

/** /energy/receipt's documented defaults: the example is what a call without parameters answers. */
export const RECEIPT_DEFAULTS = { seed: 42, tokens: 512, power_w: 350, latency_s: 0.02, grid_gco2_per_kwh: 480 };

/** The kernel's own body for its defaults, run in the pool like any request (1024 normals and a hash). */
export async function receiptDefaultsExample(pool: WorkerPool) {
  const { value } = await pool.run<string>({ kind: 'kernel', id: 'energy/receipt', params: { ...RECEIPT_DEFAULTS }, requestLabel: null });
  const res = (JSON.parse(value) as { result: { hash: string; prev_hash: string; nominal: Record<string, number> } }).result;
  return {
    params: RECEIPT_DEFAULTS,
    computed_by: `${RECEIPT_PATH} kernel run with its defaults`,
    energy_j: q(res.nominal.energy_j!, 'J', 'computed'),
    j_per_token: q(res.nominal.j_per_token!, 'J/token', 'computed'),
    energy_kwh: q(res.nominal.energy_kwh!, 'kWh', 'computed'),
    co2_g: q(res.nominal.co2_g!, 'gCO2e', 'computed'),
    receipt_hash: res.hash,
    prev_hash: res.prev_hash,
  };
}

export const PUBLISHED_REFERENCES = [
  {
    source: 'Samsi et al., From Words to Watts: Benchmarking the Energy Costs of LLM Inference (arXiv:2310.03003)',
    model: 'LLaMA-65B',
    hardware: 'NVIDIA V100 and A100 GPUs',
    j_per_token_low: q(3, 'J/token', 'published'),
    j_per_token_high: q(4, 'J/token', 'published'),
    url: ENERGY_SOURCES.samsi.url,
    basis: 'published' as const,
  },
  {
    source: 'Chung et al., The ML.ENERGY Benchmark (arXiv:2505.06371) and leaderboard v3.0',
    model: 'open LLMs served with vLLM',
    hardware: 'NVIDIA H100 and B200 GPUs',
    finding: 'per-response energy is dominated by output length; no single J/token figure is quoted here',
    url: ENERGY_SOURCES.mlenergy.url,
    basis: 'published' as const,
  },
];

export function jtokenBody(example: Awaited<ReturnType<typeof receiptDefaultsExample>>, jPerRequest: Quantity, topRoutes: unknown[], generatedAt: string) {
  return {
    schema: 'svc.energy-jtoken/v1',
    generated_at: generatedAt,
    published_references: PUBLISHED_REFERENCES,
    this_service: { llm: false, j_marginal_per_request: jPerRequest, by_route_top: topRoutes },
    receipt_formula: {
      energy_j: 'power_w x latency_s x tokens (latency_s = seconds per generated token)',
      j_per_token: 'power_w x latency_s',
      kwh: 'energy_j / 3.6e6',
      gco2: 'kwh x grid_gco2_per_kwh',
      method: METHOD,
      hash: HASH_FORMULA,
      genesis: GENESIS,
    },
    // the /energy/receipt kernel run at its default inputs: every figure in it is computed
    defaults_example: { basis: 'computed', ...example },
    honesty: 'This service runs no language model: per-token figures are published references or the receipt formula applied to caller inputs, never measurements of this process.',
    limits: [{ code: 'NO_LLM', detail: 'No tokens are generated here; j_marginal_per_request is a CPU-model figure per HTTP request.' }],
    sources: [ENERGY_SOURCES.samsi, ENERGY_SOURCES.mlenergy],
  };
}

/** Model configs as published on their Hugging Face config.json pages. */
export const KV_MODELS = [
  { id: 'Llama-3.1-8B', layers: 32, kv_heads: 8, head_dim: 128, source: 'https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json' },
  { id: 'Llama-3.1-70B', layers: 80, kv_heads: 8, head_dim: 128, source: 'https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json' },
  { id: 'Mistral-7B-v0.1', layers: 32, kv_heads: 8, head_dim: 128, source: 'https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json' },
];
export const KV_PRECISIONS: Record<string, number> = { fp16: 2, bf16: 2, fp8: 1, int4: 0.5 };
export const KV_CONTEXTS = [2048, 8192, 32768, 131072];

/** bytes = 2 (K and V) × layers × kv_heads × head_dim × bytes_per_element × tokens × batch. */
export const kvBytes = (m: { layers: number; kv_heads: number; head_dim: number }, bytesPerElement: number, tokens: number, batch = 1): number => 2 * m.layers * m.kv_heads * m.head_dim * bytesPerElement * tokens * batch;

export function kvcacheBody(generatedAt: string) {
  const ref = KV_MODELS[0]!;
  const h2o = { seq_len: 1024, budget: 256 };
  return {
    schema: 'svc.energy-kvcache/v1',
    generated_at: generatedAt,
    basis: 'model',
    formula: 'bytes = 2 x layers x kv_heads x head_dim x bytes_per_element x tokens x batch (KV heads, not query heads: GQA)',
    precisions: Object.fromEntries(Object.entries(KV_PRECISIONS).map(([k, v]) => [k, q(v, 'B/element', 'published')])),
    reference_models: KV_MODELS.map((m) => ({ id: m.id, layers: q(m.layers, 'layers', 'published'), kv_heads: q(m.kv_heads, 'heads', 'published'), head_dim: q(m.head_dim, 'elements', 'published'), source: m.source })),
    table: KV_MODELS.flatMap((m) =>
      Object.entries(KV_PRECISIONS).map(([p, b]) => ({
        model: m.id,
        precision: p,
        bytes_per_token: q(kvBytes(m, b, 1), 'B/token', 'model'),
        totals_at: Object.fromEntries(KV_CONTEXTS.map((n) => [String(n), q(kvBytes(m, b, n), 'B', 'model')])),
      })),
    ),
    h2o_default: {
      link: `${API}/kvcache/h2o-evict (interface 4.3 defaults)`,
      model: ref.id,
      precision: 'bf16',
      seq_len: q(h2o.seq_len, 'tokens', 'input'),
      budget: q(h2o.budget, 'tokens', 'input'),
      retained_fraction: q(h2o.budget / h2o.seq_len, 'ratio', 'model', 'budget / seq_len'),
      bytes_saved: q(kvBytes(ref, 2, h2o.seq_len - h2o.budget), 'B', 'model', 'kv bytes of the evicted seq_len - budget tokens'),
    },
    honesty: 'Arithmetic on published model configurations; no model is loaded and nothing here is measured.',
    limits: [{ code: 'NO_MODEL_LOADED', detail: 'The table sizes caches for reference models; this service holds no KV cache.' }],
    sources: [ENERGY_SOURCES.kvArithmetic],
  };
}
