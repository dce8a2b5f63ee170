/**
 * Self-healing after lesions with the Forgiving Tree's per-deletion reconstruction tree (Hayes,
 * Rustagi, Saia & Trehan, PODC 2008, arXiv:0802.3267): a deleted node's living neighbours N are
 * joined in heap layout (N[i]–N[2i+1], N[i]–N[2i+2]), which keeps the graph connected, adds at most
 * 3 edges per node per deletion and stretches distances by at most 2⌊log₂k⌋ − 2 (kernels-a 2.1).
 * Simplified: the "will"/helper machinery bounding the cumulative degree growth is omitted.
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, undirected } from '../lib/fgbrain.js';
import { jacobiEigen, zeros } from '../lib/linalg.js';
import { Joi, int, oneOf, typed } from '../../src/lib/params.js';
import { GRAPH_DOC } from './fgbrain-graph.js';

type Graph = Set<number>[];

function bfs(g: Graph, alive: Uint8Array, src: number): Int32Array {
  const d = new Int32Array(g.length).fill(-1);
  d[src] = 0;
  const q = [src];
  for (let h = 0; h < q.length; h++) for (const v of g[q[h]!]!) if (alive[v] && d[v] === -1) { d[v] = d[q[h]!]! + 1; q.push(v); }
  return d;
}

function allPairs(g: Graph, alive: Uint8Array): Int32Array[] {
  return Array.from({ length: g.length }, (_, s) => (alive[s] ? bfs(g, alive, s) : new Int32Array(g.length).fill(-1)));
}

function componentsAndDiameter(g: Graph, alive: Uint8Array): { components: number; diameter: number } {
  const seen = new Uint8Array(g.length);
  let components = 0;
  let diameter = 0;
  let largest: number[] = [];
  for (let s = 0; s < g.length; s++) {
    if (!alive[s] || seen[s]) continue;
    components++;
    const d = bfs(g, alive, s);
    const members = [...d.keys()].filter((i) => d[i]! >= 0);
    members.forEach((i) => (seen[i] = 1));
    if (members.length > largest.length) largest = members;
  }
  for (const s of largest) diameter = Math.max(diameter, ...bfs(g, alive, s).filter((x) => x >= 0));
  return { components, diameter };
}

function lambda2(g: Graph, alive: Uint8Array): number {
  const ids = [...alive.keys()].filter((i) => alive[i]);
  const pos = new Map(ids.map((id, k) => [id, k]));
  const L = zeros(ids.length, ids.length);
  ids.forEach((id, k) => {
    for (const v of g[id]!) if (alive[v]) {
      L.data[k * ids.length + k] = L.data[k * ids.length + k]! + 1;
      L.data[k * ids.length + pos.get(v)!] = -1;
    }
  });
  return ids.length > 1 ? jacobiEigen(L).values[1]! : 0;
}

export const stretchBound = (k: number): number => (k >= 2 ? 2 * Math.floor(Math.log2(k)) - 2 : 0);

export default defineKernel({
  id: 'fgbrain/repair',
  version: 1,
  input: 'request',
  summary: 'Self-healing after lesions: Forgiving-Tree reconstruction trees keep the graph connected with bounded degree growth and stretch',
  technique: 'Forgiving Tree per-deletion reconstruction (balanced heap-layout tree among the deleted node’s neighbours)',
  references: ['arXiv:0802.3267', 'arXiv:0902.2501'],
  honesty: 'The healing rule and all measurements are real; the graph is synthetic, and the cumulative-degree ("will") machinery of the full Forgiving Tree is omitted (the bound is per deletion).',
  params: {
    // capped at 64 (the note leaves it open): at 96 the worst case measured 80–140 ms here
    n: int(8, 64, 48).description(GRAPH_DOC.n),
    m: int(1, 4, 2).description(GRAPH_DOC.m),
    lesion: typed<number[] | null>(Joi.array().items(Joi.number().integer().min(0).max(63)).min(1).max(8).unique().allow(null).default(null)).description('node ids to delete, in order (1–8 distinct ids below n; null: drawn from the seed)'),
    heal: oneOf(['forgiving-tree', 'none'], 'forgiving-tree').description('forgiving-tree: reconstruct each deletion with a Forgiving Tree; none: delete only'),
  },
  rules: ['every lesion id must be below n'],
  constraints: (p) => ((p.lesion ?? []).some((v) => v >= p.n) ? [{ param: 'lesion', msg: 'every lesion id must be below n' }] : []),
  worstCase: { n: 64, m: 4, lesion: [0, 1, 2, 3, 4, 5, 6, 7] },
  run(p, rng) {
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    // default lesions: the 3 largest in-degrees, ties to the smaller id
    const lesions = p.lesion ?? [...s.indeg.keys()].sort((a, b) => s.indeg[b]! - s.indeg[a]! || a - b).slice(0, 3);
    const base = undirected(s).map((l) => new Set(l));
    // `measure`: distances before/after each deletion (only the reported, healed variant needs them)
    const run = (heal: boolean, measure: boolean) => {
      const g: Graph = base.map((x) => new Set(x));
      const alive = new Uint8Array(p.n).fill(1);
      const steps = lesions.map((v) => {
        const before = measure ? allPairs(g, alive) : null;
        const nb = [...g[v]!].filter((u) => alive[u]).sort((a, b) => a - b);
        alive[v] = 0;
        for (const u of nb) g[u]!.delete(v);
        g[v]!.clear();
        const added: [number, number][] = [];
        const gained = new Map<number, number>();
        if (heal) {
          nb.forEach((a, i) => {
            for (const c of [2 * i + 1, 2 * i + 2]) {
              const b = nb[c];
              if (b === undefined || g[a]!.has(b)) continue;
              g[a]!.add(b);
              g[b]!.add(a);
              added.push([a, b]);
              gained.set(a, (gained.get(a) ?? 0) + 1);
              gained.set(b, (gained.get(b) ?? 0) + 1);
            }
          });
        }
        let worst = 0;
        let disconnected = 0;
        if (before) {
          const after = allPairs(g, alive);
          for (let a = 0; a < p.n; a++) for (let b = a + 1; b < p.n; b++) {
            if (!alive[a] || !alive[b] || before[a]![b]! < 0) continue;
            if (after[a]![b]! < 0) disconnected++;
            else worst = Math.max(worst, after[a]![b]! - before[a]![b]!);
          }
        }
        return { lesion: v, neighbours: nb, added_edges: added, max_new_edges_per_node: Math.max(0, ...gained.values()), worst_stretch: worst, stretch_bound: stretchBound(nb.length), pairs_disconnected: disconnected };
      });
      return { g, alive, steps };
    };
    const healed = run(p.heal === 'forgiving-tree', true);
    const unhealed = run(false, false);
    const all = new Uint8Array(p.n).fill(1);
    const before = { ...componentsAndDiameter(base, all), lambda2: lambda2(base, all) };
    const afterHealed = componentsAndDiameter(healed.g, healed.alive);
    return {
      result: {
        lesion_effective: lesions,
        steps: healed.steps,
        before,
        after_healed: { ...afterHealed, lambda2: lambda2(healed.g, healed.alive), total_edges_added: healed.steps.reduce((a, x) => a + x.added_edges.length, 0) },
        after_unhealed: componentsAndDiameter(unhealed.g, unhealed.alive),
      },
    };
  },
});
