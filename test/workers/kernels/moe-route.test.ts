import { expect } from 'chai';
import moe, { D_MODEL, drawRouter, drawTokens, routeTokenChoice } from '../../../workers/kernels/moe-route.js';
import { RngStreams } from '../../../workers/lib/prng.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

/** Router probabilities recomputed from the seeded inputs with a plain softmax. */
function referenceProbs(seed: number, T: number, E: number): number[][] {
  const rng = new RngStreams(seed, 'moe/route');
  const { x } = drawTokens(T, rng.stream('tokens'));
  const { W } = drawRouter(E, rng.stream('router'));
  return Array.from({ length: T }, (_, t) => {
    const h = Array.from({ length: E }, (_, e) => {
      let s = 0;
      for (let i = 0; i < D_MODEL; i++) s += x[t * D_MODEL + i]! * W[i * E + e]!;
      return s;
    });
    const ex = h.map((v) => Math.exp(v));
    const z = ex.reduce((a, b) => a + b, 0);
    return ex.map((v) => v / z);
  });
}

describe('kernel moe/route', () => {
  it('picks the true top-k of the router, with gates ≥ 0 summing to 1', () => {
    for (const [seed, T, E, k] of [[42, 64, 8, 2], [3, 50, 5, 5], [9, 30, 16, 3]] as const) {
      const r = runRaw(moe, { seed, tokens: T, experts: E, topk: k }).result as any;
      const probs = referenceProbs(seed, T, E);
      r.router_probs.forEach((row: Float64Array, t: number) => row.forEach((p, e) => expect(p).to.be.closeTo(probs[t]![e]!, 1e-12)));
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
      const held = new Array(E).fill(0);
      const accepted = r.routing.map(() => new Array(k).fill(false));
      for (let rank = 0; rank < k; rank++) {
        for (let t = 0; t < T; t++) {
          const e = r.routing[t].experts[rank];
          if (held[e] < C) {
            held[e]++;
            accepted[t][rank] = true;
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

  it('drops nothing when every token goes to every expert', () => {
    const r = runRaw(moe, { seed: 3, tokens: 100, experts: 4, topk: 4 }).result as any;
    expect(r.dropped).to.equal(0);
    expect(r.load_pre).to.deep.equal([100, 100, 100, 100]);
    expect(r.load_cv).to.equal(0);
  });

  it('is deterministic in seed and sensitive to it', () => {
    expect(runBody(moe, { seed: 8 })).to.equal(runBody(moe, { seed: 8 }));
    expect(runBody(moe, { seed: 8 })).to.not.equal(runBody(moe, { seed: 9 }));
  });

  it('refuses out-of-range, malformed and inconsistent parameters', () => {
    expect(rejects(moe, { tokens: '0', experts: '0', topk: '0' })).to.deep.equal(['tokens:number.min', 'experts:number.min', 'topk:number.min']);
    expect(rejects(moe, { tokens: '2049', experts: '65', topk: '9' })).to.deep.equal(['tokens:number.max', 'experts:number.max', 'topk:number.max']);
    expect(rejects(moe, { topk: 'two' })).to.deep.equal(['topk:qint.parse']);
    expect(rejects(moe, { experts: '2', topk: '3' })).to.deep.equal(['topk:constraint']);
    expect(rejects(moe, { experts: '8', topk: '8' })).to.deep.equal([]);
  });
});
