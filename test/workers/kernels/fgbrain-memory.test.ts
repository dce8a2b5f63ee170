import { expect } from 'chai';
import memory from '../../../workers/kernels/fgbrain-memory.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const toSigns = (s: string): number[] => [...s].map((c) => (c === '+' ? 1 : -1));

/** Weights rebuilt in the test from the returned patterns (full connectivity). */
function weights(patterns: number[][], n: number): number[][] {
  const w = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const xi of patterns) for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) w[i]![j]! += (xi[i]! * xi[j]!) / n;
  return w;
}

describe('kernel fgbrain/memory', () => {
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

  it('graph mode keeps synapses on graph edges only; bounds and constraints hold', () => {
    // with an odd number of patterns no Hebbian sum can cancel: every off-diagonal weight is nonzero
    const full = runRaw(memory, { patterns: 5 }).result as any;
    const graph = runRaw(memory, { patterns: 5, connectivity: 'graph' }).result as any;
    expect(full.connectivity.synapses).to.equal((64 * 63) / 2);
    expect(graph.connectivity.synapses).to.be.at.most(63 * 2); // at most the graph's edge count (n−1)·m
    expect(graph.connectivity.synapses).to.be.below(full.connectivity.synapses);
    expect(runBody(memory, { seed: 2 })).to.equal(runBody(memory, { seed: 2 }));
    expect(rejects(memory, { connectivity: 'mesh' })).to.deep.equal(['connectivity:any.only']);
    expect(rejects(memory, { connectivity: 'graph', neurons: 128 })).to.deep.equal(['neurons:constraint']);
    expect(rejects(memory, { corruption: 0.6 })).to.deep.equal(['corruption:number.max']);
  });
});
