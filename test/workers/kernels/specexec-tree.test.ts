import { expect } from 'chai';
import spec, { makeModels, type MarkovModels } from '../../../workers/kernels/specexec-tree.js';
import { RngStreams } from '../../../workers/lib/prng.js';
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
});
