/**
 * DeepSeek Multi-head Latent Attention (DeepSeek-V2, arXiv:2405.04434 §2.1): keys and values are
 * cached as one low-rank latent c_t = W^DKV·h_t plus a decoupled RoPE key shared by all heads.
 * At inference W^UK is absorbed into the query (q̃ = W^UKᵀ·q^C) and W^UV into the output, so
 * attention runs on the cached latents directly. Both paths are computed here and compared.
 * RoPE: Su et al. 2021, arXiv:2104.09864. Design: kernels-c §21.
 */
import { defineKernel, type ParamValues } from '../kernel-def.js';
import { attendRow } from '../lib/attention.js';
import { entropy } from '../lib/linalg.js';
import { evenlySpaced } from '../../src/lib/numbers.js';
import { int } from '../../src/lib/params.js';
import type { Rng, RngStreams } from '../../src/lib/prng.js';

const D_MODEL = 32;
const ROPE_BASE = 10000;
const QUERIES = 4;
const SAMPLE_DIMS = 8;

const mlaParams = {
  seq_len: int(1, 256, 128).description('sequence length (tokens)'),
  n_heads: int(1, 16, 8).description('attention heads'),
  d_head: int(4, 64, 64).description('head width (a multiple of 4: the RoPE part is d_head/4)').meta({ jsonSchema: { multipleOf: 4 } }),
  d_latent: int(1, 256, 128).description('width of the latent KV'),
};

export type MlaParams = Omit<ParamValues<typeof mlaParams>, 'seed'>;

/** Rotary position embedding of x (even length) at position pos: pair (2m, 2m+1) turns by pos·base^(−2m/d). */
export function rope(x: ArrayLike<number>, pos: number, base = ROPE_BASE): Float64Array {
  const d = x.length;
  const out = new Float64Array(d);
  for (let m = 0; m < d / 2; m++) {
    const theta = pos * base ** ((-2 * m) / d);
    const c = Math.cos(theta);
    const s = Math.sin(theta);
    const a = x[2 * m]!;
    const b = x[2 * m + 1]!;
    out[2 * m] = a * c - b * s;
    out[2 * m + 1] = a * s + b * c;
  }
  return out;
}

/** Row-major rows×cols Gaussian matrix scaled by 1/√cols (fan-in). */
function weights(rng: Rng, rows: number, cols: number): Float64Array {
  return rng.normals(rows * cols, 1 / Math.sqrt(cols));
}

/** y = M·x for row-major M (rows×cols), reading x at an offset. */
function mv(M: Float64Array, rows: number, cols: number, x: ArrayLike<number>, xOff = 0, mOff = 0): Float64Array {
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    const o = mOff + r * cols;
    for (let c = 0; c < cols; c++) s += M[o + c]! * x[xOff + c]!;
    y[r] = s;
  }
  return y;
}

/** The seeded model: hidden states and projections, each from its own stream (row-major). */
export function mlaModel(p: MlaParams, rng: RngStreams) {
  const { seq_len: L, n_heads: H, d_head: dh, d_latent: dc } = p;
  const dr = dh / 2;
  return {
    h: rng.stream('h').normals(L * D_MODEL),
    wDKV: weights(rng.stream('w_dkv'), dc, D_MODEL),
    wUK: weights(rng.stream('w_uk'), H * dh, dc), // head h: rows h·dh … h·dh+dh−1
    wUV: weights(rng.stream('w_uv'), H * dh, dc),
    wQC: weights(rng.stream('w_qc'), H * dh, D_MODEL),
    wQR: weights(rng.stream('w_qr'), H * dr, D_MODEL),
    wKR: weights(rng.stream('w_kr'), dr, D_MODEL),
  };
}

/** C6 rows: r_k = floor((k+1)·L/Q) − 1, with Q = min(4, L) so every row is distinct. */
export function evaluatedRows(L: number): number[] {
  return evenlySpaced(L, Math.min(QUERIES, L));
}

export default defineKernel({
  id: 'mla/latent-compress',
  version: 2,
  informative: {
    max_abs_diff_naive_vs_absorbed: 'rounding-level gap between the absorbed and decompressed attention paths inside the kernel; head 0 and the attention entropy are recomputed by the tests',
  },
  input: 'query',
  summary: 'Multi-head Latent Attention: latent KV cache with decoupled RoPE, absorbed vs decompressed attention and cache accounting',
  technique: 'DeepSeek-V2 multi-head latent attention with weight absorption',
  references: ['arXiv:2405.04434', 'arXiv:2104.09864'],
  honesty: 'Both attention paths and the cache/FLOP accounting are computed; hidden states and projections are seeded Gaussian draws, not a trained model.',
  params: mlaParams,
  worstCase: { seq_len: 256, n_heads: 16, d_head: 64, d_latent: 256 },
  rules: ['d_head must be a multiple of 4'],
  constraints: (p) => (p.d_head % 4 ? [{ param: 'd_head', msg: 'd_head must be a multiple of 4' }] : []),
  run(p, rng) {
    const { seq_len: L, n_heads: H, d_head: dh, d_latent: dc } = p;
    const dr = dh / 2; // even because d_head is a multiple of 4
    const m = mlaModel(p, rng);
    const scale = 1 / Math.sqrt(dh + dr);
    const rows = evaluatedRows(L);
    const last = rows.at(-1)!;

    // the cache: latent c_t and the shared rotated key k^R_t, for every token up to the last query
    const C = new Float64Array((last + 1) * dc);
    const KR = new Float64Array((last + 1) * dr);
    for (let t = 0; t <= last; t++) {
      C.set(mv(m.wDKV, dc, D_MODEL, m.h, t * D_MODEL), t * dc);
      KR.set(rope(mv(m.wKR, dr, D_MODEL, m.h, t * D_MODEL), t), t * dr);
    }

    const queryParts = (head: number, i: number) => ({
      qC: mv(m.wQC, dh, D_MODEL, m.h, i * D_MODEL, head * dh * D_MODEL),
      qR: rope(mv(m.wQR, dr, D_MODEL, m.h, i * D_MODEL, head * dr * D_MODEL), i),
    });

    // absorbed path: every head, every evaluated query
    const absorbed = new Float64Array(H * rows.length * dh);
    const scores = new Float64Array(L);
    let entropySum = 0;
    rows.forEach((i, qi) => {
      for (let head = 0; head < H; head++) {
        const { qC, qR } = queryParts(head, i);
        const qT = new Float64Array(dc); // q̃ = W^UK_hᵀ·q^C
        for (let r = 0; r < dh; r++) {
          const w = qC[r]!;
          const o = (head * dh + r) * dc;
          for (let c = 0; c < dc; c++) qT[c] = qT[c]! + w * m.wUK[o + c]!;
        }
        let max = -Infinity;
        for (let j = 0; j <= i; j++) {
          let s = 0;
          for (let c = 0; c < dc; c++) s += qT[c]! * C[j * dc + c]!;
          for (let c = 0; c < dr; c++) s += qR[c]! * KR[j * dr + c]!;
          scores[j] = s * scale;
          if (scores[j]! > max) max = scores[j]!;
        }
        let sum = 0;
        for (let j = 0; j <= i; j++) sum += (scores[j] = Math.exp(scores[j]! - max));
        const cHat = new Float64Array(dc);
        for (let j = 0; j <= i; j++) {
          const a = (scores[j] = scores[j]! / sum);
          for (let c = 0; c < dc; c++) cHat[c] = cHat[c]! + a * C[j * dc + c]!;
        }
        entropySum += entropy(scores.subarray(0, i + 1));
        absorbed.set(mv(m.wUV, dh, dc, cHat, 0, head * dh * dc), (head * rows.length + qi) * dh);
      }
    });

    // naive path on the checked heads: decompress k_j = [W^UK c_j ; k^R_j] and v_j = W^UV c_j
    const checked = H > 1 ? [0, H - 1] : [0];
    let maxDiff = 0;
    for (const head of checked) {
      const K = new Float64Array((last + 1) * (dh + dr));
      const V = new Float64Array((last + 1) * dh);
      for (let j = 0; j <= last; j++) {
        K.set(mv(m.wUK, dh, dc, C, j * dc, head * dh * dc), j * (dh + dr));
        K.set(KR.subarray(j * dr, (j + 1) * dr), j * (dh + dr) + dh);
        V.set(mv(m.wUV, dh, dc, C, j * dc, head * dh * dc), j * dh);
      }
      const out = new Float64Array(dh);
      rows.forEach((i, qi) => {
        const { qC, qR } = queryParts(head, i);
        const q = new Float64Array(dh + dr);
        q.set(qC);
        q.set(qR, dh);
        attendRow(q, 0, K, V, i, dh + dr, dh, scale, out, 0);
        for (let r = 0; r < dh; r++) maxDiff = Math.max(maxDiff, Math.abs(out[r]! - absorbed[(head * rows.length + qi) * dh + r]!));
      });
    }

    // accounting per token (cache entries) and per decoded token at context L (2 FLOPs per MAC)
    const cache = { mla: dc + dr, mha: 2 * H * dh, mqa: 2 * dh };
    const naiveFlops = 2 * (2 * H * L * dc * dh + H * L * (dh + dr) + H * L * dh);
    const absorbedFlops = 2 * (H * dh * dc + H * L * (dc + dr) + H * L * dc + H * dc * dh);
    return {
      constants: { d_model: D_MODEL, d_rope: dr, rope_base: ROPE_BASE, queries: QUERIES, weight_init: 'N(0, 1/fan_in)', causal: true,
        flops_basis: 'one decoded token at context seq_len, 2 FLOPs per MAC; naive re-decompresses K and V from the latent cache' },
      result: {
        kv_cache_per_token: cache,
        compression_vs_mha: cache.mha / cache.mla,
        compression_vs_mqa: cache.mqa / cache.mla,
        max_abs_diff_naive_vs_absorbed: maxDiff,
        heads_checked: checked,
        queries_evaluated: rows,
        attention_entropy_mean: entropySum / (H * rows.length),
        flops_per_decoded_token: { naive: naiveFlops, absorbed: absorbedFlops, context: L },
        output_sample: rows.map((_, qi) => Array.from(absorbed.subarray(qi * dh, qi * dh + Math.min(SAMPLE_DIMS, dh)))),
      },
      checks: { absorbed_matches_naive: maxDiff <= 1e-12 },
    };
  },
});
