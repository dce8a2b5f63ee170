import { expect } from 'chai';
import moe, { D_MODEL, routeTokenChoice } from '../../../workers/kernels/moe-route.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

/**
 * Inputs drawn again from the documented draw order, without the kernel's draw helpers: stream
 * `tokens` holds 4·16 topic means, then per token its topic int(4) and 16 normals × 0.5; stream
 * `router` holds W (16×E) then E expert maps (16×16), all N(0, 1/16).
 */
function referenceInputs(seed: number, T: number, E: number) {
  const rng = new RngStreams(seed, 'moe/route');
  const ts = rng.stream('tokens');
  const mu = Array.from({ length: 4 * D_MODEL }, () => ts.normal());
  const topic: number[] = [];
  const x = Array.from({ length: T }, () => {
    const c = Math.floor(ts.next() * 4);
    topic.push(c);
    return Array.from({ length: D_MODEL }, (_, i) => mu[c * D_MODEL + i]! + ts.normal() * 0.5);
  });
  const rs = rng.stream('router');
  const W = Array.from({ length: D_MODEL * E }, () => rs.normal() / 4);
  const We = Array.from({ length: E * D_MODEL * D_MODEL }, () => rs.normal() / 4);
  const logits = x.map((xt) => Array.from({ length: E }, (_, e) => xt.reduce((s, v, i) => s + v * W[i * E + e]!, 0)));
  return { x, topic, We, logits };
}

/** Router probabilities recomputed from the seeded inputs with a plain softmax. */
function referenceProbs(seed: number, T: number, E: number): number[][] {
  return referenceInputs(seed, T, E).logits.map((h) => {
    const ex = h.map((v) => Math.exp(v));
    const z = ex.reduce((a, b) => a + b, 0);
    return ex.map((v) => v / z);
  });
}

/** Each token's top-k experts by router probability (ties by the lower expert index), from the reference probabilities. */
const refTopK = (probs: number[][], k: number): number[][] => probs.map((row) => row.map((p, e) => [p, e] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, k).map((o) => o[1]));

describe('kernel moe/route', () => {
  it('every reported value is recomputed: losses, entropy, load statistics, topics and expert output norms', () => {
    for (const [seed, T, E, k] of [[42, 64, 8, 2], [3, 50, 5, 5], [9, 30, 16, 3], [2, 40, 1, 1]] as const) {
      const r = runRaw(moe, { seed, tokens: T, experts: E, topk: k }).result as any;
      const { x, topic, We, logits } = referenceInputs(seed, T, E);
      expect(r.topics).to.deep.equal(topic);
      const lse = logits.map((h) => {
        const m = Math.max(...h);
        return m + Math.log(h.reduce((s, v) => s + Math.exp(v - m), 0));
      });
      const probs = referenceProbs(seed, T, E);
      // router z-loss (ST-MoE): mean over tokens of (log Σ_e exp h_e)²
      expect(r.z_loss).to.be.closeTo(lse.reduce((s, v) => s + v * v, 0) / T, 1e-10);
      const H = probs.map((p) => -p.reduce((s, q) => s + (q > 0 ? q * Math.log(q) : 0), 0));
      expect(r.router_entropy_mean).to.be.closeTo(H.reduce((a, b) => a + b, 0) / T, 1e-10);
      const top = refTopK(probs, k);
      expect(r.routing.map((entry: any) => [entry.token, entry.experts])).to.deep.equal(top.map((ex, t) => [t, ex]));
      const pre = new Array(E).fill(0);
      for (const ex of top) for (const e of ex) pre[e]++;
      expect(r.load_pre).to.deep.equal(pre);
      pre.forEach((n, e) => expect(r.f[e]).to.be.closeTo(n / (T * k), 1e-15));
      const mean = (T * k) / E;
      expect(r.load_cv).to.be.closeTo(Math.sqrt(pre.reduce((s, n) => s + (n - mean) ** 2, 0) / E) / mean, 1e-12);
      expect(r.aux_loss).to.be.closeTo(E * pre.reduce((s, n, e) => s + (n / (T * k)) * (probs.reduce((q, row) => q + row[e]!, 0) / T), 0), 1e-12);
      // y_t = Σ over accepted choices of gate · W_e x_t, gate = p / Σ selected p
      const norms = r.routing.map((entry: any, t: number) => {
        const sel = entry.experts.reduce((s: number, e: number) => s + probs[t]![e]!, 0);
        const y = new Array(D_MODEL).fill(0);
        entry.experts.forEach((e: number, q: number) => {
          expect(entry.probs[q]).to.be.closeTo(probs[t]![e]!, 1e-12);
          expect(entry.gates[q]).to.be.closeTo(probs[t]![e]! / sel, 1e-12);
          if (!entry.accepted[q]) return;
          for (let i = 0; i < D_MODEL; i++) for (let j = 0; j < D_MODEL; j++) y[i] += (probs[t]![e]! / sel) * We[e * D_MODEL * D_MODEL + i * D_MODEL + j]! * x[t]![j]!;
        });
        return Math.hypot(...y);
      });
      expect(r.output_norm_mean).to.be.closeTo(norms.reduce((a: number, b: number) => a + b, 0) / T, 1e-10);
      expect(r.output_norm_max).to.be.closeTo(Math.max(...norms), 1e-10);
    }
  });

  it('picks the true top-k of the router, with gates ≥ 0 summing to 1', () => {
    for (const [seed, T, E, k] of [[42, 64, 8, 2], [3, 50, 5, 5], [9, 30, 16, 3]] as const) {
      const r = runRaw(moe, { seed, tokens: T, experts: E, topk: k }).result as any;
      const probs = referenceProbs(seed, T, E);
      r.router_probs.forEach((row: Float64Array, t: number) => row.forEach((p, e) => expect(p).to.be.closeTo(probs[t]![e]!, 1e-12)));
      expect(r.routing.map((entry: any) => entry.token)).to.deep.equal(Array.from({ length: T }, (_, t) => t));
      expect(r.router_probs).to.have.length(T);
      for (const entry of r.routing) {
        const order = probs[entry.token]!.map((p, e) => [p, e] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
        expect(entry.experts).to.deep.equal(order.slice(0, k).map((o) => o[1]));
        const gates = Array.from(entry.gates as Float64Array);
        expect(gates.every((g) => g >= 0)).to.equal(true);
        expect(gates.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-12);
      }
    }
  });

  it('conserves assignments and reproduces the GShard priority dispatch', () => {
    for (const [seed, T, E, k] of [[1, 200, 8, 2], [2, 256, 4, 3], [5, 100, 16, 1]] as const) {
      const r = runRaw(moe, { seed, tokens: T, experts: E, topk: k }).result as any;
      const C = Math.ceil((1.25 * T * k) / E);
      expect(r.capacity).to.equal(C);
      expect(r.load_pre.reduce((a: number, b: number) => a + b, 0)).to.equal(T * k);
      for (const n of r.load_post) expect(n).to.be.at.most(C);
      expect(r.dropped).to.equal(T * k - r.load_post.reduce((a: number, b: number) => a + b, 0));
      // the dispatch replayed on the reference's top-k choices (not the body's)
      const top = refTopK(referenceProbs(seed, T, E), k);
      expect(r.routing.map((x: any) => x.experts)).to.deep.equal(top);
      const held = new Array(E).fill(0);
      const accepted = top.map(() => new Array(k).fill(false));
      for (let rank = 0; rank < k; rank++) {
        for (let t = 0; t < T; t++) {
          const e = top[t]![rank]!;
          if (held[e] < C) {
            held[e]++;
            accepted[t]![rank] = true;
          }
        }
      }
      expect(r.routing.map((x: any) => x.accepted)).to.deep.equal(accepted);
      expect(r.load_post).to.deep.equal(held);
      expect(r.tokens_fully_dropped).to.equal(accepted.filter((a: boolean[]) => a.every((v) => !v)).length);
    }
  });

  it('aux loss recomputes from f and P; a uniform router gives aux = 1 and z = (ln E)²', () => {
    const r = runRaw(moe, { seed: 4, tokens: 128, experts: 8, topk: 2 }).result as any;
    const probs = referenceProbs(4, 128, 8);
    const P = Array.from({ length: 8 }, (_, e) => probs.reduce((s, row) => s + row[e]!, 0) / 128);
    P.forEach((p, e) => expect(r.P[e]).to.be.closeTo(p, 1e-12));
    r.f.forEach((f: number, e: number) => expect(f).to.equal(r.load_pre[e] / 256));
    expect(r.aux_loss).to.be.closeTo(8 * r.f.reduce((s: number, f: number, e: number) => s + f * r.P[e], 0), 1e-12);
    expect(r.router_entropy_mean).to.be.at.most(Math.log(8));
    for (const E of [1, 3, 8, 64]) {
      const k = Math.min(E, 2);
      const x = new RngStreams(1, 'moe/route').stream('t').normals(40 * D_MODEL);
      const u = routeTokenChoice(x, new Float64Array(D_MODEL * E), 40, E, k);
      expect(u.auxLoss).to.be.closeTo(1, 1e-12);
      expect(u.zLoss).to.be.closeTo(Math.log(E) ** 2, 1e-12);
      expect(u.entropyMean).to.be.closeTo(Math.log(E), 1e-12);
    }
  });

  it('expert choice loads every expert with exactly ⌊T·k/E⌋ tokens; unrouted tokens recompute', () => {
    for (const [seed, T, E, k] of [[42, 64, 8, 2], [6, 90, 7, 3], [8, 10, 8, 1]] as const) {
      const r = runRaw(moe, { seed, tokens: T, experts: E, topk: k }).result as any;
      const C = Math.floor((T * k) / E);
      expect(r.expert_choice.capacity).to.equal(C);
      expect(r.expert_choice.loads).to.deep.equal(new Array(E).fill(C));
      const probs = referenceProbs(seed, T, E);
      const per = new Array(T).fill(0);
      for (let e = 0; e < E; e++) {
        const order = probs.map((row, t) => [row[e]!, t] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
        for (const [, t] of order.slice(0, C)) per[t]++;
      }
      expect(r.expert_choice.tokens_unrouted).to.equal(per.filter((c) => c === 0).length);
      expect(r.expert_choice.max_experts_per_token).to.equal(Math.max(...per));
    }
  });

  it('lists router_probs exactly when T ≤ 256 and T·E ≤ 4096, one row of E per token', () => {
    const at = (tokens: number, experts: number) => (runRaw(moe, { seed: 1, tokens, experts, topk: 1 }).result as any).router_probs;
    const rows = at(256, 16);
    expect(rows).to.have.length(256);
    for (const row of rows) expect(row).to.have.length(16);
    expect(at(257, 8)).to.equal(null);
    expect(at(205, 20)).to.equal(null); // 4100 > 4096
    expect(at(204, 20)).to.have.length(204); // 4080
  });

  it('drops nothing when every token goes to every expert', () => {
    const r = runRaw(moe, { seed: 3, tokens: 100, experts: 4, topk: 4 }).result as any;
    expect(r.dropped).to.equal(0);
    expect(r.load_pre).to.deep.equal([100, 100, 100, 100]);
    expect(r.load_cv).to.equal(0);
    // the kernel's own checks are the two that a wrong dispatch or softmax could fail
    expect(runRaw(moe, { seed: 3 }).checks).to.deep.equal({ load_post_within_capacity: true, entropy_within_ln_E: true });
  });

  it('topk must not exceed experts', () => {
    expect(rejects(moe, { experts: '2', topk: '3' })).to.deep.equal(['topk:constraint']);
    expect(rejects(moe, { experts: '8', topk: '8' })).to.deep.equal([]);
  });
});
