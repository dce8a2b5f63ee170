/**
 * Sparse mixture-of-experts routing. Token choice: softmax router, top-k with renormalised gates
 * (Shazeer et al., arXiv:1701.06538), expert capacity C = ⌈1.25·T·k/E⌉ with over-capacity
 * assignments dropped in GShard's priority order (arXiv:2006.16668), the Switch load-balancing
 * loss E·Σ f_e P_e (arXiv:2101.03961) and the ST-MoE router z-loss (arXiv:2202.08906); against
 * expert-choice routing, each expert taking its top-⌊T·k/E⌋ tokens (arXiv:2202.09368).
 * Design: kernels-b §15.
 */
import { defineKernel } from '../kernel-def.js';
import { int } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

export const D_MODEL = 16;
export const TOPICS = 4;
export const TOKEN_NOISE = 0.5;
export const CAPACITY_FACTOR = 1.25;
/** The routing table lists the first tokens only; router_probs is listed when T ≤ this and T·E ≤ PROBS_LIMIT. */
export const TABLE_TOKENS = 256;
const PROBS_LIMIT = 4096;

/** Draw order, stream `tokens`: TOPICS·d means, then per token its topic int(TOPICS) and d normals. */
export function drawTokens(T: number, rng: Rng): { x: Float64Array; topic: Int32Array } {
  const mu = rng.normals(TOPICS * D_MODEL);
  const x = new Float64Array(T * D_MODEL);
  const topic = new Int32Array(T);
  for (let t = 0; t < T; t++) {
    const c = rng.int(TOPICS);
    topic[t] = c;
    const noise = rng.normals(D_MODEL, TOKEN_NOISE);
    for (let i = 0; i < D_MODEL; i++) x[t * D_MODEL + i] = mu[c * D_MODEL + i]! + noise[i]!;
  }
  return { x, topic };
}

/** Draw order, stream `router`: W (d×E, row-major) then E expert maps (d×d each), all N(0, 1/d). */
export function drawRouter(E: number, rng: Rng): { W: Float64Array; We: Float64Array } {
  const sd = 1 / Math.sqrt(D_MODEL);
  return { W: rng.normals(D_MODEL * E, sd), We: rng.normals(E * D_MODEL * D_MODEL, sd) };
}

export interface Routing {
  T: number;
  E: number;
  k: number;
  capacity: number;
  logits: Float64Array;
  probs: Float64Array;
  /** chosen[t*k + r], rank r = 0 first */
  chosen: Int32Array;
  gates: Float64Array;
  accepted: Uint8Array;
  loadPre: number[];
  loadPost: number[];
  dropped: number;
  f: number[];
  P: number[];
  auxLoss: number;
  zLoss: number;
  entropyMean: number;
}

/** Token-choice routing of x (T×d) with router W (d×E). */
export function routeTokenChoice(x: Float64Array, W: Float64Array, T: number, E: number, k: number, capacityFactor = CAPACITY_FACTOR): Routing {
  const d = D_MODEL;
  const logits = new Float64Array(T * E);
  const probs = new Float64Array(T * E);
  const chosen = new Int32Array(T * k);
  const gates = new Float64Array(T * k);
  let zSum = 0;
  let hSum = 0;
  const taken = new Uint8Array(E);
  for (let t = 0; t < T; t++) {
    const lo = t * E;
    for (let i = 0; i < d; i++) {
      const xi = x[t * d + i]!;
      const wo = i * E;
      for (let e = 0; e < E; e++) logits[lo + e] = logits[lo + e]! + xi * W[wo + e]!;
    }
    let mx = -Infinity;
    for (let e = 0; e < E; e++) mx = Math.max(mx, logits[lo + e]!);
    let sum = 0;
    let pl = 0;
    for (let e = 0; e < E; e++) {
      const q = Math.exp(logits[lo + e]! - mx);
      probs[lo + e] = q;
      sum += q;
    }
    const lse = mx + Math.log(sum);
    zSum += lse * lse;
    for (let e = 0; e < E; e++) {
      const p = probs[lo + e]! / sum;
      probs[lo + e] = p;
      pl += p * logits[lo + e]!;
    }
    hSum += lse - pl; // H = −Σ p ln p = lse − Σ p·logit
    // top-k by (p descending, expert ascending): k selection passes
    const row = probs.subarray(t * E, (t + 1) * E);
    taken.fill(0);
    let sel = 0;
    for (let r = 0; r < k; r++) {
      let best = -1;
      for (let e = 0; e < E; e++) if (!taken[e] && (best < 0 || row[e]! > row[best]!)) best = e;
      taken[best] = 1;
      chosen[t * k + r] = best;
      sel += row[best]!;
    }
    for (let r = 0; r < k; r++) gates[t * k + r] = row[chosen[t * k + r]!]! / sel;
  }
  const capacity = Math.ceil((capacityFactor * T * k) / E);
  const loadPre = new Array<number>(E).fill(0);
  const loadPost = new Array<number>(E).fill(0);
  const accepted = new Uint8Array(T * k);
  // GShard priority: every token's first choice in token order, then every second choice, ...
  for (let r = 0; r < k; r++) {
    for (let t = 0; t < T; t++) {
      const e = chosen[t * k + r]!;
      loadPre[e]!++;
      if (loadPost[e]! < capacity) {
        loadPost[e]!++;
        accepted[t * k + r] = 1;
      }
    }
  }
  const post = loadPost.reduce((a, b) => a + b, 0);
  const f = loadPre.map((n) => n / (T * k));
  const P = Array.from({ length: E }, (_, e) => {
    let s = 0;
    for (let t = 0; t < T; t++) s += probs[t * E + e]!;
    return s / T;
  });
  let aux = 0;
  for (let e = 0; e < E; e++) aux += f[e]! * P[e]!;
  return { T, E, k, capacity, logits, probs, chosen, gates, accepted, loadPre, loadPost, dropped: T * k - post, f, P, auxLoss: E * aux, zLoss: zSum / T, entropyMean: hSum / T };
}

/** Expert choice: each expert takes its top-C′ tokens by p_t[e] (ties to the lower token id), C′ = ⌊T·k/E⌋. */
export function routeExpertChoice(probs: Float64Array, T: number, E: number, k: number): { capacity: number; picks: number[][]; loads: number[]; tokensUnrouted: number; maxExpertsPerToken: number } {
  const capacity = Math.floor((T * k) / E);
  const perToken = new Int32Array(T);
  const picks: number[][] = [];
  const col = new Float64Array(T);
  const sorted = new Float64Array(T);
  for (let e = 0; e < E; e++) {
    for (let t = 0; t < T; t++) col[t] = probs[t * E + e]!;
    const chosen: number[] = [];
    if (capacity > 0) {
      // the C′-th largest value; take every token above it, then ties in token order
      sorted.set(col);
      sorted.sort();
      const thr = sorted[T - capacity]!;
      for (let t = 0; t < T; t++) if (col[t]! > thr) chosen.push(t);
      for (let t = 0; t < T && chosen.length < capacity; t++) if (col[t] === thr) chosen.push(t);
      chosen.sort((a, b) => a - b);
    }
    for (const t of chosen) perToken[t]!++;
    picks.push(chosen);
  }
  let unrouted = 0;
  let maxPer = 0;
  for (let t = 0; t < T; t++) {
    if (perToken[t] === 0) unrouted++;
    maxPer = Math.max(maxPer, perToken[t]!);
  }
  return { capacity, picks, loads: picks.map((p) => p.length), tokensUnrouted: unrouted, maxExpertsPerToken: maxPer };
}

export default defineKernel({
  id: 'moe/route',
  version: 1,
  input: 'query',
  summary: 'Sparse MoE routing: top-k token choice with GShard capacity dropping, Switch aux loss and router z-loss, against expert-choice routing',
  technique: 'softmax top-k token-choice routing with expert capacity, load-balancing and z losses; expert-choice routing',
  references: ['arXiv:1701.06538', 'arXiv:2006.16668', 'arXiv:2101.03961', 'arXiv:2202.08906', 'arXiv:2202.09368'],
  honesty: 'The routing, capacity dispatch, losses and expert outputs are computed exactly; the token representations, router and expert weights are seeded synthetic draws, not a trained model.',
  params: {
    tokens: int(1, 2048, 64).description('tokens routed'),
    experts: int(1, 64, 8).description('experts'),
    topk: int(1, 8, 2).description('experts chosen per token (at most experts)'),
  },
  rules: ['topk must not exceed experts'],
  constraints: (p) => (p.topk > p.experts ? [{ param: 'topk', msg: 'topk must not exceed experts' }] : []),
  worstCase: { tokens: 2048, experts: 64, topk: 8 },
  run({ tokens: T, experts: E, topk: k }, rng) {
    // draw order: tokens (stream `tokens`, see drawTokens); router and expert maps (stream `router`, see drawRouter)
    const { x, topic } = drawTokens(T, rng.stream('tokens'));
    const { W, We } = drawRouter(E, rng.stream('router'));
    const r = routeTokenChoice(x, W, T, E, k);
    const d = D_MODEL;
    // expert outputs y_t = Σ_accepted g·W_e x_t
    const y = new Float64Array(d);
    let normSum = 0;
    let normMax = 0;
    let fullyDropped = 0;
    for (let t = 0; t < T; t++) {
      y.fill(0);
      let any = false;
      for (let q = 0; q < k; q++) {
        if (!r.accepted[t * k + q]) continue;
        any = true;
        const e = r.chosen[t * k + q]!;
        const g = r.gates[t * k + q]!;
        const base = e * d * d;
        for (let i = 0; i < d; i++) {
          let s = 0;
          for (let j = 0; j < d; j++) s += We[base + i * d + j]! * x[t * d + j]!;
          y[i] = y[i]! + g * s;
        }
      }
      if (!any) fullyDropped++;
      let nn = 0;
      for (let i = 0; i < d; i++) nn += y[i]! * y[i]!;
      const norm = Math.sqrt(nn);
      normSum += norm;
      normMax = Math.max(normMax, norm);
    }
    const meanLoad = (T * k) / E;
    let varLoad = 0;
    for (const n of r.loadPre) varLoad += (n - meanLoad) ** 2;
    const ec = routeExpertChoice(r.probs, T, E, k);
    const shown = Math.min(T, TABLE_TOKENS);
    const listProbs = T <= TABLE_TOKENS && T * E <= PROBS_LIMIT;
    return {
      constants: { d_model: D_MODEL, topics: TOPICS, token_noise: TOKEN_NOISE, capacity_factor: CAPACITY_FACTOR, routing_tokens_shown: shown, load_cv: 'population std / mean of load_pre' },
      result: {
        capacity: r.capacity,
        topics: Array.from(topic.subarray(0, shown)),
        routing: Array.from({ length: shown }, (_, t) => ({
          token: t,
          experts: Array.from(r.chosen.subarray(t * k, (t + 1) * k)),
          probs: Array.from(r.chosen.subarray(t * k, (t + 1) * k), (e) => r.probs[t * E + e]!),
          gates: r.gates.subarray(t * k, (t + 1) * k),
          accepted: Array.from(r.accepted.subarray(t * k, (t + 1) * k), (a) => a === 1),
        })),
        router_probs: listProbs ? Array.from({ length: T }, (_, t) => r.probs.subarray(t * E, (t + 1) * E)) : null,
        load_pre: r.loadPre,
        load_post: r.loadPost,
        dropped: r.dropped,
        tokens_fully_dropped: fullyDropped,
        f: r.f,
        P: r.P,
        aux_loss: r.auxLoss,
        z_loss: r.zLoss,
        router_entropy_mean: r.entropyMean,
        load_cv: Math.sqrt(varLoad / E) / meanLoad,
        output_norm_mean: normSum / T,
        output_norm_max: normMax,
        expert_choice: { capacity: ec.capacity, loads: ec.loads, tokens_unrouted: ec.tokensUnrouted, max_experts_per_token: ec.maxExpertsPerToken },
      },
      checks: {
        load_post_within_capacity: r.loadPost.every((n) => n <= r.capacity),
        entropy_within_ln_E: r.entropyMean <= Math.log(E) + 1e-12,
      },
    };
  },
});
