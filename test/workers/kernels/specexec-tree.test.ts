import { expect } from 'chai';
import spec, { makeModels, type MarkovModels } from '../../../workers/kernels/specexec-tree.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

const modelsFor = (seed: number, V: number, sharpness = 2, noise = 1): MarkovModels => makeModels(new RngStreams(seed, 'specexec/tree').stream('models'), V, sharpness, noise);
const raw = (q: Record<string, unknown>): any => runRaw(spec, q).result;

/** Token sequence of every tree node (root path). */
function paths(tree: any[]): number[][] {
  const out: number[][] = [];
  for (const n of tree) out.push(n.parent < 0 ? [n.token] : [...out[n.parent]!, n.token]);
  return out;
}
/** Cumulative log-probability of a sequence after the prompt under a table. */
function seqLogp(m: MarkovModels, table: Float64Array, seq: number[]): number {
  let [a, b] = m.prompt;
  let s = 0;
  for (const t of seq) {
    s += table[(a * m.V + b) * m.V + t]!;
    [a, b] = [b, t];
  }
  return s;
}

describe('kernel specexec/tree', () => {
  it('is the optimal prefix-closed tree: brute force over all 340 sequences (V = 4, D = 4) for 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      const m = modelsFor(seed, 4);
      const all: { seq: number[]; lp: number }[] = [];
      const grow = (seq: number[]): void => {
        if (seq.length) all.push({ seq, lp: seqLogp(m, m.draftLogp, seq) });
        if (seq.length < 4) for (let t = 0; t < 4; t++) grow([...seq, t]);
      };
      grow([]);
      expect(all).to.have.length(340);
      all.sort((x, y) => y.lp - x.lp);
      for (const B of [1, 7, 30, 100]) {
        const r = raw({ seed, vocab: 4, max_depth: 4, budget: B });
        const got = paths(r.tree).map((p) => p.join(','));
        expect(new Set(got)).to.deep.equal(new Set(all.slice(0, B).map((x) => x.seq.join(','))));
        // prefix closed, and the reported log-probabilities recompute from the tables
        r.tree.forEach((n: any, i: number) => {
          const p = paths(r.tree)[i]!;
          if (p.length > 1) expect(got).to.include(p.slice(0, -1).join(','));
          expect(n.draft_logp).to.be.closeTo(seqLogp(m, m.draftLogp, p), 1e-12);
          expect(n.target_logp).to.be.closeTo(seqLogp(m, m.targetLogp, p), 1e-12);
          expect(n.depth).to.equal(p.length);
        });
      }
    }
  });

  it('expected_accepted equals an independent recursion E(node) = Σ_children p(t)·(1 + E(child)), and Monte Carlo agrees within 5 stderr for 10 seeds', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = raw({ seed, trials: 512 });
      const m = modelsFor(seed, 16);
      const kids = new Map<number, any[]>();
      for (const n of r.tree) kids.set(n.parent, [...(kids.get(n.parent) ?? []), n]);
      const E = (id: number, a: number, b: number): number =>
        (kids.get(id) ?? []).reduce((s, c) => s + Math.exp(m.targetLogp[(a * 16 + b) * 16 + c.token]!) * (1 + E(c.id, b, c.token)), 0);
      expect(r.expected_accepted).to.be.closeTo(E(-1, m.prompt[0], m.prompt[1]), 1e-12);
      expect(r.prompt).to.deep.equal(m.prompt);
      // the Monte Carlo walks replayed from stream `trials`: one inverse-CDF target draw per token
      const child = new Map<string, number>(r.tree.map((n: any) => [`${n.parent}:${n.token}`, n.id]));
      const rng = new RngStreams(seed, 'specexec/tree').stream('trials');
      const hist = new Array<number>(r.depth_reached + 1).fill(0);
      for (let k = 0; k < 512; k++) {
        let [a, b] = m.prompt;
        let node = -1;
        let accepted = 0;
        for (;;) {
          const row = Array.from(m.targetP.subarray((a * 16 + b) * 16, (a * 16 + b + 1) * 16));
          let u = rng.next() * row.reduce((x, y) => x + y, 0);
          let tok = 15;
          for (let t = 0; t < 15; t++) {
            u -= row[t]!;
            if (u < 0) {
              tok = t;
              break;
            }
          }
          const next = child.get(`${node}:${tok}`);
          if (next === undefined) break;
          accepted++;
          node = next;
          [a, b] = [b, tok];
        }
        hist[accepted]!++;
      }
      expect(r.mc.histogram).to.deep.equal(hist);
      const mean = hist.reduce((acc, c, k) => acc + c * k, 0) / 512;
      const stderr = Math.sqrt(hist.reduce((acc, c, k) => acc + c * (k - mean) ** 2, 0) / 511 / 512);
      expect(r.mc.mean).to.be.closeTo(mean, 1e-12);
      expect(r.mc.stderr).to.be.closeTo(stderr, 1e-12);
      // the agreement tolerance from the recomputed histogram, never from the kernel's own stderr
      expect(Math.abs(mean - r.expected_accepted)).to.be.at.most(5 * stderr);
      expect(r.tree_size).to.equal(r.tree.length);
      expect(r.depth_reached).to.equal(Math.max(...r.tree.map((n: any) => n.depth)));
      expect(r.draft_mass).to.be.closeTo(r.tree.reduce((acc: number, n: any) => acc + Math.exp(seqLogp(m, m.draftLogp, paths(r.tree)[n.id]!)), 0), 1e-12);
      expect(r.tokens_per_target_call).to.be.closeTo(1 + r.expected_accepted, 1e-12);
    }
  });

  it('is strictly increasing in budget with nested trees, and bounded by min(B, depth_reached)', () => {
    let prev = -1;
    let prevTree: any[] = [];
    for (const B of [1, 4, 16, 64, 256]) {
      const r = raw({ budget: B });
      expect(r.expected_accepted).to.be.above(prev);
      expect(r.tree.slice(0, prevTree.length)).to.deep.equal(prevTree);
      expect(r.expected_accepted).to.be.within(0, Math.min(B, r.depth_reached));
      for (const n of r.tree) if (n.parent >= 0) expect(n.target_logp).to.be.at.most(r.tree[n.parent].target_logp);
      prev = r.expected_accepted;
      prevTree = r.tree;
    }
  });

  it('without draft noise the tree is the top-B target paths and draft_mass = expected_accepted', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = raw({ seed, draft_noise: 0 });
      expect(r.draft_mass).to.be.closeTo(r.expected_accepted, 1e-12);
      const noisy = raw({ seed, draft_noise: 2 });
      expect(noisy.expected_accepted).to.be.at.most(r.expected_accepted + 1e-12);
    }
  });

  it('the kernel checks are all true across vocabularies, budgets and depths', () => {
    for (let seed = 0; seed < 8; seed++) {
      const q = { seed, vocab: [2, 5, 16, 32][seed % 4], budget: [1, 7, 64, 256][seed % 4], max_depth: 1 + seed, trials: 300, draft_noise: seed / 2, sharpness: 1 + (seed % 3) };
      const out = runRaw(spec, q) as any;
      expect(out.checks).to.deep.equal({ mc_within_5_stderr: true, expected_le_min_budget_depth: true, path_probability_monotone: true });
      expect(out.result.mc).to.not.have.property('stderr_reason');
    }
  });

  it('uniform models make every draft score tie: the order is parent id, then token; the heap empties before a large budget', () => {
    // V = 3, flat logits (sharpness 0, no noise): depth 1 is tokens 0, 1, 2, then the children of node 0, then of node 1
    const r = raw({ seed: 1, vocab: 3, budget: 7, max_depth: 2, sharpness: 0, draft_noise: 0, trials: 50 });
    expect(r.tree.map((n: any) => [n.parent, n.token, n.depth])).to.deep.equal([[-1, 0, 1], [-1, 1, 1], [-1, 2, 1], [0, 0, 2], [0, 1, 2], [0, 2, 2], [1, 0, 2]]);
    // the whole depth-2 tree of V = 2 has 2 + 4 nodes; every walk accepts exactly 2 tokens
    const full = raw({ seed: 1, vocab: 2, budget: 256, max_depth: 2, sharpness: 0, draft_noise: 0, trials: 40 });
    expect(full.tree_size).to.equal(6);
    expect(full.depth_reached).to.equal(2);
    expect(full.expected_accepted).to.be.closeTo(2, 1e-12);
    expect(full.mc).to.deep.include({ mean: 2, stderr: 0, histogram: [0, 0, 40] });
    expect((runRaw(spec, { seed: 1, vocab: 2, budget: 256, max_depth: 2, sharpness: 0, draft_noise: 0, trials: 40 }) as any).checks.mc_within_5_stderr).to.equal(true);
  });

  it('one trial has no standard error: stderr null with its reason, and the Monte-Carlo check is null', () => {
    const out = runRaw(spec, { seed: 2, trials: 1 }) as any;
    expect(out.result.mc).to.deep.include({ stderr: null, stderr_reason: 'one trial' });
    expect(out.checks.mc_within_5_stderr).to.equal(null);
    expect(out.result.mc.histogram.reduce((a: number, b: number) => a + b, 0)).to.equal(1);
  });

  it('models from the documented draws: per context V target normals × sharpness, then V noise normals added × draft_noise', () => {
    const [seed, V, sharp, noise] = [3, 3, 1.5, 0.7];
    const m = modelsFor(seed, V, sharp, noise);
    const rs = new RngStreams(seed, 'specexec/tree').stream('models');
    const logSoftmax = (l: number[]): number[] => {
      const lse = Math.log(l.reduce((s, v) => s + Math.exp(v), 0));
      return l.map((v) => v - lse);
    };
    for (let c = 0; c < V * V; c++) {
      const tl = Array.from({ length: V }, () => sharp * rs.normal());
      const nz = Array.from({ length: V }, () => rs.normal());
      logSoftmax(tl).forEach((v, t) => expect(m.targetLogp[c * V + t]).to.be.closeTo(v, 1e-14));
      logSoftmax(tl.map((v, t) => v + noise * nz[t]!)).forEach((v, t) => expect(m.draftLogp[c * V + t]).to.be.closeTo(v, 1e-14));
    }
  });

});
