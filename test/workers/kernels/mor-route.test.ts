import { expect } from 'chai';
import mor, { routeExpertChoice } from '../../../workers/kernels/mor-route.js';
import { canonicalJson, roundNumber, sha256Hex } from '../../../src/lib/numbers.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runBody, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const D = 16;

/** The documented draw order, restated: h from `h`, W from `block`, router vectors from `router`. */
function draws(seed: number, N: number, R: number) {
  const rng = new RngStreams(seed, 'mor/route');
  const sd = 1 / Math.sqrt(D);
  return { N, R, h: rng.stream('h').normals(N * D), W: rng.stream('block').normals(D * D, sd), wr: rng.stream('router').normals(R * D, sd) };
}

/**
 * Independent reference. Tokens do not interact inside the block, so each token's trajectory
 * (state and router score at every step, as if it survived) is computed alone, one token at a
 * time; the routing then only compares those per-step scores, by a full sort per step.
 */
function reference(inp: ReturnType<typeof draws>) {
  const { N, R, W, wr } = inp;
  const traj: number[][][] = []; // traj[t][r] = state before step r+1
  const scores: number[][] = [];
  for (let t = 0; t < N; t++) {
    let x = Array.from(inp.h.subarray(t * D, (t + 1) * D));
    const st = [x];
    const sc: number[] = [];
    for (let r = 0; r < R; r++) {
      const z = x.reduce((a, v, i) => a + wr[r * D + i]! * v, 0);
      const s = 1 / (1 + Math.exp(-z));
      sc.push(s);
      const y = x.map((_, i) => Math.tanh(x.reduce((a, v, j) => a + W[i * D + j]! * v, 0)));
      x = x.map((v, i) => v + s * y[i]!);
      st.push(x);
    }
    traj.push(st);
    scores.push(sc);
  }
  let active = Array.from({ length: N }, (_, t) => t);
  const depth = new Array<number>(N).fill(0);
  const margins: (number | null)[] = [];
  for (let r = 1; r <= R; r++) {
    const k = Math.ceil((N * (R - r + 1)) / R);
    const ranked = [...active].sort((a, b) => (scores[b]![r - 1]! > scores[a]![r - 1]! ? 1 : scores[b]![r - 1]! < scores[a]![r - 1]! ? -1 : a - b));
    margins.push(k < ranked.length ? scores[ranked[k - 1]!]![r - 1]! - scores[ranked[k]!]![r - 1]! : null);
    active = ranked.slice(0, k);
    for (const t of active) depth[t]!++;
  }
  const states = depth.map((dt, t) => traj[t]![dt]!);
  return { depth, states, margins };
}

describe('kernel mor/route', () => {
  it('final states, depths and score margins equal an independent per-token reference (1e-12)', () => {
    for (const [seed, N, R] of [[1, 37, 5], [2, 128, 4], [3, 10, 16], [4, 1, 3], [5, 200, 7]] as const) {
      const inp = draws(seed, N, R);
      const got = routeExpertChoice(inp);
      const ref = reference(inp);
      expect(Array.from(got.depths)).to.deep.equal(ref.depth);
      for (let t = 0; t < N; t++) for (let i = 0; i < D; i++) expect(Math.abs(got.states[t * D + i]! - ref.states[t]![i]!)).to.be.at.most(1e-12);
      got.margins.forEach((m, r) => (ref.margins[r] === null ? expect(m).to.equal(null) : expect(m).to.be.closeTo(ref.margins[r]!, 1e-12)));
      const out = runRaw(mor, { seed: String(seed), num_tokens: String(N), max_recursion: String(R) }).result as any;
      expect(out.depths).to.deep.equal(ref.depth.slice(0, 256));
      expect(out.state_digest).to.equal(sha256Hex(canonicalJson(Array.from(got.states, (v) => roundNumber(v)))));
      // the body's margins are the reference's; the ratios come from the capacities ⌈N(R−r+1)/R⌉ (R need not divide N)
      expect(out.score_margin).to.have.length(R);
      out.score_margin.forEach((m: number | null, r: number) => (ref.margins[r] === null ? expect(m).to.equal(null) : expect(m).to.be.closeTo(ref.margins[r]!, 1e-12)));
      const caps = Array.from({ length: R }, (_, r) => Math.ceil((N * (R - r)) / R));
      const sumK = caps.reduce((a, b) => a + b, 0);
      const sumK2 = caps.reduce((a, b) => a + b * b, 0);
      expect([out.compute_ratio, out.kv_cache_ratio]).to.deep.equal([sumK / (N * R), sumK / (N * R)]);
      expect(out.attention_pair_ratio).to.equal(sumK2 / (N * N * R));
      expect(out.block_applications).to.deep.equal({ mor: sumK, vanilla: N * R });
      expect(out.attention_pairs).to.deep.equal({ mor: sumK2, vanilla: N * N * R });
    }
  });

  it('nested active sets: active_counts = capacities = ceil(N(R−r+1)/R), histogram = k_r − k_{r+1}, Σ depth = Σ k_r', () => {
    for (const [N, R] of [[128, 4], [100, 7], [2048, 16], [5, 16], [1, 1], [33, 1]] as const) {
      const r = runRaw(mor, { num_tokens: String(N), max_recursion: String(R), seed: String(N + R) }).result as any;
      const k = Array.from({ length: R }, (_, i) => Math.ceil((N * (R - i)) / R));
      expect(r.capacities).to.deep.equal(k);
      expect(r.active_counts).to.deep.equal(k);
      expect(r.depth_histogram).to.deep.equal(k.map((v, i) => v - (k[i + 1] ?? 0)));
      const sumK = k.reduce((a, b) => a + b, 0);
      expect(r.mean_depth).to.be.closeTo(sumK / N, 1e-12);
      // the depth list (first 256) agrees with the histogram when it covers every token
      if (N <= 256) {
        const h = new Array<number>(R).fill(0);
        for (const dt of r.depths) addAt(h, dt - 1);
        expect(h).to.deep.equal(r.depth_histogram);
        // A_r ⊆ A_{r−1}: tokens with depth ≥ r are exactly |A_r| many
        for (let s = 1; s <= R; s++) expect(r.depths.filter((dt: number) => dt >= s).length).to.equal(k[s - 1]);
      }
      for (const m of r.score_margin) if (m !== null) expect(m).to.be.at.least(0);
      expect(r.score_margin[0]).to.equal(null); // step 1 keeps every token
    }
  });

  it('closed forms: compute_ratio = (R+1)/(2R), attention_pair_ratio = (R+1)(2R+1)/(6R²) when R | N; R = 1 gives ratios 1', () => {
    const d = runRaw(mor).result as any;
    expect(d.compute_ratio).to.equal(0.625);
    expect(d.kv_cache_ratio).to.equal(0.625);
    expect(d.attention_pair_ratio).to.equal(0.46875);
    for (const [N, R] of [[96, 3], [2048, 16], [60, 5]] as const) {
      const r = runRaw(mor, { num_tokens: String(N), max_recursion: String(R) }).result as any;
      expect(r.compute_ratio).to.be.closeTo((R + 1) / (2 * R), 1e-15);
      expect(r.attention_pair_ratio).to.be.closeTo(((R + 1) * (2 * R + 1)) / (6 * R * R), 1e-15);
    }
    const one = runRaw(mor, { num_tokens: '50', max_recursion: '1' }).result as any;
    expect(one.depths.every((x: number) => x === 1)).to.equal(true);
    expect([one.compute_ratio, one.kv_cache_ratio, one.attention_pair_ratio]).to.deep.equal([1, 1, 1]);
  });

  it('token choice has no capacity: its histogram is argmax(U·h_0) recomputed, sums to N and is imbalanced over 10 seeds', () => {
    let imbalanced = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(mor, { seed: String(seed), num_tokens: '512', max_recursion: '8' }).result as any;
      const h = r.token_choice.depth_histogram as number[];
      expect(h.reduce((a, b) => a + b, 0)).to.equal(512);
      // the documented draws: U (8×d, N(0, 1/d)) from stream `tc`, each token to its argmax row
      const { h: h0 } = draws(seed, 512, 8);
      const U = new RngStreams(seed, 'mor/route').stream('tc').normals(8 * D, 1 / Math.sqrt(D));
      const expected = new Array(8).fill(0);
      for (let t = 0; t < 512; t++) {
        const z = Array.from({ length: 8 }, (_, k) => U.subarray(k * D, (k + 1) * D).reduce((acc, u, i) => acc + u * h0[t * D + i]!, 0));
        expected[z.indexOf(Math.max(...z))]++;
      }
      expect(h).to.deep.equal(expected);
      expect(r.token_choice.imbalance).to.be.closeTo(Math.max(...h) / 64, 1e-12);
      if (r.token_choice.imbalance > 1.2) imbalanced++;
    }
    expect(imbalanced).to.be.at.least(8);
  });

  it('another seed gives other states and depths', () => {
    const a = JSON.parse(runBody(mor, { seed: '1' }));
    const b = JSON.parse(runBody(mor, { seed: '2' }));
    expect(a.result.state_digest).to.not.equal(b.result.state_digest);
    expect(a.result.depths).to.not.deep.equal(b.result.depths);
  });
});
