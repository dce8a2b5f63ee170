/**
 * Hopfield associative memory (Hopfield 1982; capacity ≈ 0.138·N, Amit, Gutfreund & Sompolinsky
 * 1985): Hebbian storage W = (1/N)·Σ ξξᵀ with zero diagonal, optionally masked by the fgbrain
 * graph; asynchronous sign updates with an incremental field; the energy −½·sᵀWs never rises.
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, undirected } from '../lib/fgbrain.js';
import { int, num, oneOf } from '../../src/lib/params.js';
import { GRAPH_DOC } from './fgbrain-graph.js';
import type { Rng } from '../../src/lib/prng.js';

export const CRITICAL_LOAD = 0.138;

/** ±1 patterns, pattern-major: −1 when u < 0.5. */
export function drawPatterns(rng: Rng, p: number, n: number): Int8Array[] {
  return Array.from({ length: p }, () => Int8Array.from({ length: n }, () => (rng.next() < 0.5 ? -1 : 1)));
}

/** Hebbian weights (row-major), zero diagonal, masked to `adj` when given. */
export function hebbian(patterns: Int8Array[], n: number, adj: number[][] | null): Float64Array {
  const w = new Float64Array(n * n);
  for (const xi of patterns) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) w[i * n + j] = w[i * n + j]! + (xi[i]! * xi[j]!) / n;
  if (adj) {
    const keep = new Uint8Array(n * n);
    adj.forEach((list, i) => list.forEach((j) => (keep[i * n + j] = 1)));
    for (let k = 0; k < n * n; k++) if (!keep[k]) w[k] = 0;
  }
  return w;
}

export function energy(w: Float64Array, s: Int8Array, n: number): number {
  let e = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) e += w[i * n + j]! * s[i]! * s[j]!;
  return -0.5 * e;
}

export default defineKernel({
  id: 'fgbrain/memory',
  version: 1,
  input: 'request',
  summary: 'Hopfield associative memory on the fgbrain neurons: Hebbian storage, asynchronous recall of corrupted cues, energy descent',
  technique: 'Hopfield network with Hebbian outer-product storage and asynchronous updates',
  references: ['doi:10.1073/pnas.79.8.2554', 'doi:10.1103/PhysRevLett.55.1530'],
  honesty: 'Storage, recall and the energy are real; the patterns and corruptions are seeded synthetic draws.',
  params: {
    neurons: int(16, 128, 64).description('neurons of the Hopfield network (at most 96 in graph mode)'),
    patterns: int(1, 32, 4).description('patterns stored by the Hebbian rule'),
    corruption: num(0, 0.5, 0.2).description('fraction of a cue flipped before recall'),
    max_sweeps: int(1, 50, 20).description('most asynchronous update sweeps of a recall'),
    connectivity: oneOf(['full', 'graph'], 'full').description('full: all-to-all weights; graph: only along the dependency DAG'),
    m: int(1, 4, 2).description(GRAPH_DOC.m),
  },
  rules: ['neurons must be at most 96 in graph mode'],
  constraints: (p) => (p.connectivity === 'graph' && p.neurons > 96 ? [{ param: 'neurons', msg: 'neurons must be at most 96 in graph mode' }] : []),
  worstCase: { neurons: 128, patterns: 32, corruption: 0.5, max_sweeps: 50 },
  run(p, rng) {
    const n = p.neurons;
    // draws, stream `fgbrain/memory`: patterns (pattern-major), then per pattern the flipped positions
    const mem = rng.shared('fgbrain/memory');
    const patterns = drawPatterns(mem, p.patterns, n);
    const adj = p.connectivity === 'graph' ? undirected(buildSubstrate(n, p.m, rng.shared('fgbrain/graph'))) : null;
    const w = hebbian(patterns, n, adj);
    let synapses = 0;
    for (let k = 0; k < n * n; k++) if (w[k] !== 0) synapses++;
    const flips = Math.round(p.corruption * n);
    const recalls = patterns.map((xi, mu) => {
      const s = Int8Array.from(xi);
      for (const i of mem.sample(n, flips)) s[i] = -s[i]! as -1 | 1;
      const overlap = (v: Int8Array): number => v.reduce((a, x, i) => a + x * xi[i]!, 0) / n;
      const before = overlap(s);
      const h = new Float64Array(n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) h[i] = h[i]! + w[i * n + j]! * s[j]!;
      const energies: number[] = [];
      let sweeps = 0;
      let converged = false;
      while (sweeps < p.max_sweeps) {
        sweeps++;
        let flipped = 0;
        for (let i = 0; i < n; i++) {
          if (h[i] !== 0 && Math.sign(h[i]!) !== s[i]) {
            s[i] = -s[i]! as -1 | 1;
            flipped++;
            for (let k = 0; k < n; k++) h[k] = h[k]! + 2 * s[i]! * w[k * n + i]!;
          }
        }
        energies.push(energy(w, s, n));
        if (flipped === 0) {
          converged = true;
          break;
        }
      }
      return { pattern: mu, flipped: flips, overlap_before: before, overlap_after: overlap(s), sweeps, converged, energy: energies, final_state: Array.from(s).map((x) => (x > 0 ? '+' : '-')).join('') };
    });
    return {
      constants: { critical_load: CRITICAL_LOAD },
      result: {
        load: { alpha: p.patterns / n, critical: CRITICAL_LOAD },
        patterns: patterns.map((xi) => Array.from(xi).map((x) => (x > 0 ? '+' : '-')).join('')),
        recalls,
        summary: { perfect: recalls.filter((r) => r.overlap_after === 1).length, mean_overlap_after: recalls.reduce((a, r) => a + r.overlap_after, 0) / recalls.length },
        connectivity: { mode: p.connectivity, synapses: synapses / 2 },
      },
    };
  },
});
