import { expect } from 'chai';
import repair, { stretchBound } from '../../../workers/kernels/fgbrain-repair.js';
import { eigenvaluesBelow, priceDag } from '../../helpers/fgbrain-reference.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

/** All-pairs shortest paths among living nodes by Floyd–Warshall (Infinity when unreachable). */
function floyd(adj: boolean[][], alive: boolean[]): number[][] {
  const n = adj.length;
  const d = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (!alive[i] || !alive[j] ? Infinity : i === j ? 0 : adj[i]![j] ? 1 : Infinity)));
  for (let k = 0; k < n; k++) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (d[i]![k]! + d[k]![j]! < d[i]![j]!) d[i]![j] = d[i]![k]! + d[k]![j]!;
  return d;
}

/** Components (in order of their smallest id) and the diameter of the first largest one. */
function shape(adj: boolean[][], alive: boolean[]) {
  const d = floyd(adj, alive);
  const comps: number[][] = [];
  const seen = new Set<number>();
  for (let i = 0; i < adj.length; i++) {
    if (!alive[i] || seen.has(i)) continue;
    const c = d[i]!.flatMap((x, j) => (x < Infinity ? [j] : []));
    c.forEach((j) => seen.add(j));
    comps.push(c);
  }
  const largest = comps.reduce((a, c) => (c.length > a.length ? c : a), [] as number[]);
  return { components: comps.length, diameter: Math.max(0, ...largest.flatMap((i) => largest.map((j) => d[i]![j]!))) };
}

/** Independent reference of kernels-a 2.1 on an adjacency matrix, distances by Floyd–Warshall. */
function reference(seed: number, n: number, m: number, lesion: number[] | null, heal: boolean) {
  const dag = priceDag(seed, n, m);
  const lesions = lesion ?? dag.indeg.map((d, i) => [d, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 3).map(([, i]) => i);
  const adj = Array.from({ length: n }, () => new Array<boolean>(n).fill(false));
  dag.deps.forEach((list, t) => list.forEach((j) => (adj[t]![j] = adj[j]![t] = true)));
  const alive = new Array<boolean>(n).fill(true);
  const before = shape(adj, alive);
  const steps = lesions.map((v) => {
    const dBefore = floyd(adj, alive);
    const nb = adj[v]!.flatMap((e, u) => (e && alive[u] ? [u] : []));
    alive[v] = false;
    for (let u = 0; u < n; u++) adj[v]![u] = adj[u]![v] = false;
    const added: number[][] = [];
    const gain = new Array<number>(n).fill(0);
    if (heal) {
      for (let i = 0; i < nb.length; i++) for (const c of [2 * i + 1, 2 * i + 2]) {
        if (c >= nb.length || adj[nb[i]!]![nb[c]!]) continue;
        adj[nb[i]!]![nb[c]!] = adj[nb[c]!]![nb[i]!] = true;
        added.push([nb[i]!, nb[c]!]);
        addAt(gain, nb[i]!);
        addAt(gain, nb[c]!);
      }
    }
    const dAfter = floyd(adj, alive);
    let worst = 0;
    let cut = 0;
    for (let a = 0; a < n; a++) for (let b = a + 1; b < n; b++) {
      if (!alive[a] || !alive[b] || dBefore[a]![b] === Infinity) continue;
      if (dAfter[a]![b] === Infinity) cut++;
      else worst = Math.max(worst, dAfter[a]![b]! - dBefore[a]![b]!);
    }
    return { lesion: v, neighbours: nb, added_edges: added, max_new_edges_per_node: Math.max(0, ...gain), worst_stretch: worst, stretch_bound: nb.length >= 2 ? 2 * Math.floor(Math.log2(nb.length)) - 2 : 0, pairs_disconnected: cut };
  });
  const ids = alive.flatMap((a, i) => (a ? [i] : []));
  const L = ids.map((i) => ids.map((j) => (i === j ? ids.filter((k) => adj[i]![k]).length : adj[i]![j] ? -1 : 0)));
  const fullL = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? dag.deps[i]!.length + dag.indeg[i]! : dag.deps[i]!.includes(j) || dag.deps[j]!.includes(i) ? -1 : 0)));
  return { lesions, steps, before, after: shape(adj, alive), L, fullL, edgesAdded: steps.reduce((s, x) => s + x.added_edges.length, 0) };
}

/** λ2 checked as an eigenvalue: with c zero eigenvalues, λ2 is 0 when c ≥ 2, else exactly one eigenvalue lies below it. */
function expectLambda2(L: number[][], lambda2: number, components: number) {
  if (components >= 2) return expect(Math.abs(lambda2)).to.be.below(1e-9);
  expect(lambda2).to.be.above(1e-9);
  expect(eigenvaluesBelow(L, lambda2 - 1e-7)).to.equal(1);
  expect(eigenvaluesBelow(L, lambda2 + 1e-7)).to.be.at.least(2);
}

describe('kernel fgbrain/repair', () => {
  it('every reported value recomputed by an independent reference (adjacency matrix, Floyd–Warshall, inertia-checked λ2)', () => {
    for (const [seed, n, m, lesion, heal] of [[42, 48, 2, null, true], [5, 20, 1, [0, 3, 7], true], [9, 30, 3, [1, 2, 4, 8, 0], true], [5, 20, 1, [0, 3, 7], false], [1, 20, 1, [0, 1], false], [2, 64, 4, null, true]] as const) {
      const r = runRaw(repair, { seed, n, m, lesion, heal: heal ? 'forgiving-tree' : 'none' }).result as any;
      const ref = reference(seed, n, m, lesion as number[] | null, heal);
      const unhealed = reference(seed, n, m, lesion as number[] | null, false);
      expect(r.lesion_effective).to.deep.equal(ref.lesions);
      expect(r.steps).to.deep.equal(ref.steps);
      expect(r.before).to.deep.include(ref.before);
      expectLambda2(ref.fullL, r.before.lambda2, ref.before.components);
      expect(r.after_healed).to.deep.include({ ...ref.after, total_edges_added: ref.edgesAdded });
      expectLambda2(ref.L, r.after_healed.lambda2, ref.after.components);
      expect(r.after_unhealed).to.deep.equal(unhealed.after);
    }
    // precondition of the case [1, 20, 1, [0, 1], none]: the component of the smallest id is not the largest
    const split = reference(1, 20, 1, [0, 1], false);
    expect([split.after.components, split.after.diameter]).to.deep.equal([5, 4]);
  });

  it('healing keeps the graph connected, adds ≤ 3 edges per node per deletion and respects the stretch bound (30 runs)', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const m of [1, 2, 3]) {
        const r = runRaw(repair, { seed, m, lesion: [0, 3, 5, 7] }).result as any;
        expect(r.before.components).to.equal(1);
        expect(r.after_healed.components).to.equal(1);
        for (const step of r.steps) {
          expect(step.pairs_disconnected).to.equal(0);
          expect(step.max_new_edges_per_node).to.be.at.most(3);
          expect(step.worst_stretch).to.be.at.most(step.stretch_bound);
          expect(step.stretch_bound).to.equal(stretchBound(step.neighbours.length));
          // the added edges are exactly the heap-layout tree among the neighbours (minus existing ones)
          for (const [a, b] of step.added_edges) {
            const i = step.neighbours.indexOf(a);
            const j = step.neighbours.indexOf(b);
            expect([2 * i + 1, 2 * i + 2]).to.include(j);
          }
        }
        // spectral consistency: λ2 > 0 exactly when connected
        expect(r.after_healed.lambda2 > 1e-9).to.equal(r.after_healed.components === 1);
      }
    }
  });

  it('healing matters: on a tree (m = 1) deleting internal nodes disconnects the unhealed graph only', () => {
    const r = runRaw(repair, { m: 1 }).result as any;
    expect(r.after_unhealed.components).to.be.greaterThan(1);
    expect(r.after_healed.components).to.equal(1);
    const none = runRaw(repair, { m: 1, heal: 'none' }).result as any;
    expect(none.after_healed.components).to.equal(none.after_unhealed.components);
    expect(none.after_healed.total_edges_added).to.equal(0);
  });

  it('defaults to the three largest in-degrees; validates lesions', () => {
    const r = runRaw(repair, {}).result as any;
    expect(r.lesion_effective).to.have.length(3);
    expect(stretchBound(1)).to.equal(0);
    expect(stretchBound(8)).to.equal(4);
    expect(rejects(repair, { n: 16, lesion: [20] })).to.deep.equal(['lesion:constraint']);
    expect(rejects(repair, { lesion: [1, 1] })).to.deep.equal(['lesion.1:array.unique']);
    expect(rejects(repair, { heal: 'magic' })).to.deep.equal(['heal:any.only']);
  });
});
