import { expect } from 'chai';
import memory from '../../../workers/kernels/fgbrain-memory.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { priceDag } from '../../helpers/fgbrain-reference.js';
import { rejects, runRaw } from '../../helpers/kernels.js';

/**
 * Independent reference: patterns from the shared stream fgbrain/memory (−1 when u < 0.5), then per
 * pattern the flipped positions (partial Fisher–Yates of the same stream); asynchronous recall with
 * each field recomputed from scratch (no incremental update). n is a power of two, so every weight
 * (a multiple of 1/n) and every field is exact and the h = 0 ties are decided alike.
 */
function reference(seed: number, n: number, P: number, corruption: number, maxSweeps: number, graphM: number | null) {
  const mem = new RngStreams(seed, 'fgbrain/memory').shared('fgbrain/memory');
  const pats = Array.from({ length: P }, () => Array.from({ length: n }, () => (mem.next() < 0.5 ? -1 : 1)));
  let mask: Set<string> | null = null;
  if (graphM !== null) {
    mask = new Set();
    priceDag(seed, n, graphM).deps.forEach((list, t) => list.forEach((j) => (mask!.add(`${t},${j}`), mask!.add(`${j},${t}`))));
  }
  const W = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j || (mask && !mask.has(`${i},${j}`)) ? 0 : pats.reduce((a, xi) => a + xi[i]! * xi[j]!, 0) / n)));
  const E = (s: number[]) => -0.5 * W.reduce((a, row, i) => a + row.reduce((b, w, j) => b + w * s[i]! * s[j]!, 0), 0);
  const flips = Math.round(corruption * n);
  const recalls = pats.map((xi) => {
    const s: number[] = [...xi];
    for (const i of mem.sample(n, flips)) s[i] = -s[i]!;
    const before = s.reduce((a, x, i) => a + x * xi[i]!, 0) / n;
    const energies: number[] = [];
    let sweeps = 0;
    let converged = false;
    while (sweeps < maxSweeps && !converged) {
      sweeps++;
      let changed = 0;
      for (let i = 0; i < n; i++) {
        const h = W[i]!.reduce((a, w, j) => a + w * s[j]!, 0);
        if (h !== 0 && Math.sign(h) !== s[i]) {
          s[i] = -s[i]!;
          changed++;
        }
      }
      energies.push(E(s));
      converged = changed === 0;
    }
    return { before, after: s.reduce((a, x, i) => a + x * xi[i]!, 0) / n, sweeps, converged, energies, state: s.map((x) => (x > 0 ? '+' : '-')).join('') };
  });
  const synapses = W.flat().filter((w) => w !== 0).length / 2;
  return { pats: pats.map((xi) => xi.map((x) => (x > 0 ? '+' : '-')).join('')), recalls, synapses };
}

const toSigns = (s: string): number[] => [...s].map((c) => (c === '+' ? 1 : -1));

/** Weights rebuilt in the test from the returned patterns (full connectivity). */
function weights(patterns: number[][], n: number): number[][] {
  const w = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const xi of patterns) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) w[i]![j]! += (xi[i]! * xi[j]!) / n;
  return w;
}

describe('kernel fgbrain/memory', () => {
  it('every reported value recomputed by the independent reference (patterns, cues, recall, energies, synapses)', () => {
    for (const [seed, n, P, corruption, sweeps, graphM] of [[42, 64, 4, 0.2, 20, null], [1, 32, 6, 0.35, 3, null], [9, 64, 3, 0.25, 20, 2], [4, 16, 2, 0.5, 10, 4], [2, 128, 20, 0.1, 50, null]] as const) {
      const params: Record<string, unknown> = { seed, neurons: n, patterns: P, corruption, max_sweeps: sweeps };
      if (graphM !== null) Object.assign(params, { connectivity: 'graph', m: graphM });
      const r = runRaw(memory, params).result as any;
      const ref = reference(seed, n, P, corruption, sweeps, graphM);
      expect(r.load).to.deep.equal({ alpha: P / n, critical: 0.138 });
      expect(r.patterns).to.deep.equal(ref.pats);
      expect(r.connectivity).to.deep.equal({ mode: graphM === null ? 'full' : 'graph', synapses: ref.synapses });
      expect(r.recalls).to.have.length(ref.recalls.length);
      r.recalls.forEach((rec: any, mu: number) => {
        const x = ref.recalls[mu]!;
        expect(rec).to.deep.include({ pattern: mu, flipped: Math.round(corruption * n), overlap_before: x.before, overlap_after: x.after, sweeps: x.sweeps, converged: x.converged, final_state: x.state });
        expect(rec.energy.length).to.equal(x.energies.length);
        rec.energy.forEach((e: number, k: number) => expect(e).to.be.closeTo(x.energies[k]!, 1e-12));
      });
      const perfect = ref.recalls.filter((x) => x.after === 1).length;
      expect(r.summary.perfect).to.equal(perfect);
      expect(r.summary.mean_overlap_after).to.be.closeTo(ref.recalls.reduce((a, x) => a + x.after, 0) / P, 1e-15);
    }
  });

  it('energy never rises across sweeps, and converged states are fixed points of W rebuilt from the patterns (10 seeds)', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(memory, { seed, patterns: 6, corruption: 0.3 }).result as any;
      const pats = (r.patterns as string[]).map(toSigns);
      const w = weights(pats, 64);
      for (const rec of r.recalls) {
        for (let k = 1; k < rec.energy.length; k++) expect(rec.energy[k]).to.be.at.most(rec.energy[k - 1] + 1e-12);
        if (!rec.converged) continue;
        const s = toSigns(rec.final_state);
        for (let i = 0; i < 64; i++) {
          const h = w[i]!.reduce((a, x, j) => a + x * s[j]!, 0);
          expect(s[i]! * h).to.be.at.least(-1e-12);
        }
        expect(rec.overlap_after).to.be.closeTo(s.reduce((a, x, i) => a + x * pats[rec.pattern]![i]!, 0) / 64, 1e-12);
      }
    }
  });

  it('one stored pattern is always recalled perfectly in two sweeps below 50 % corruption; load below capacity recalls all', () => {
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(memory, { seed, patterns: 1, corruption: 0.45 }).result as any;
      expect(r.recalls[0]).to.include({ overlap_after: 1, sweeps: 2, converged: true });
    }
    const d = runRaw(memory, {}).result as any;
    expect(d.load.alpha).to.equal(4 / 64);
    expect(d.summary.perfect).to.equal(4);
    expect((runRaw(memory, { patterns: 16 }).result as any).summary.mean_overlap_after).to.be.below(1);
  });

  it('graph mode keeps synapses on graph edges only and takes at most 96 neurons; connectivity is full or graph', () => {
    // with an odd number of patterns no Hebbian sum can cancel: every off-diagonal weight is nonzero
    const full = runRaw(memory, { patterns: 5 }).result as any;
    const graph = runRaw(memory, { patterns: 5, connectivity: 'graph' }).result as any;
    expect(full.connectivity.synapses).to.equal((64 * 63) / 2);
    expect(graph.connectivity.synapses).to.be.at.most(63 * 2); // at most the graph's edge count (n−1)·m
    expect(graph.connectivity.synapses).to.be.below(full.connectivity.synapses);
    expect(rejects(memory, { connectivity: 'mesh' })).to.deep.equal(['connectivity:any.only']);
    expect(rejects(memory, { connectivity: 'graph', neurons: 128 })).to.deep.equal(['neurons:constraint']);
    expect(rejects(memory, { connectivity: 'graph', neurons: 97 })).to.deep.equal(['neurons:constraint']);
    expect(rejects(memory, { connectivity: 'graph', neurons: 96 })).to.deep.equal([]);
  });
});
