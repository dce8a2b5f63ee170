import { expect } from 'chai';
import agentcoh from '../../../workers/kernels/agentcoh-sync.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

const VS = [0.05, 0.1, 0.25, 0.5];

/** Independent MESI model: per-artifact maps of agent → state, full scans, SWMR asserted after every step. */
function referenceMesi(seed: number, n: number, m: number, steps: number) {
  const rng = new RngStreams(seed, 'agentcoh/sync');
  const sz = rng.stream('sizes');
  const sizes = Array.from({ length: m }, () => 200 + Math.floor(sz.next() * 1801));
  const opsRng = rng.stream('ops');
  const ops = Array.from({ length: steps }, () => ({ g: Math.floor(opsRng.next() * n), a: Math.floor(opsRng.next() * m), u: opsRng.next() }));
  return {
    sizes,
    writesPer: VS.map((V) => Array.from({ length: m }, (_, a) => ops.filter((o) => o.a === a && o.u < V).length)),
    rows: VS.map((V) => {
      const st: string[][] = Array.from({ length: m }, () => new Array<string>(n).fill('I'));
      const ver: number[][] = Array.from({ length: m }, () => new Array<number>(n).fill(0));
      const latest = new Array<number>(m).fill(0);
      const c = { tokens: 0, fetches: 0, write_backs: 0, invalidations: 0, hits: 0, reads: 0, writes: 0, swmr: 0, stale: 0 };
      for (const { g, a, u } of ops) {
        const row = st[a]!;
        if (u >= V) {
          c.reads++;
          if (row[g] !== 'I') {
            c.hits++;
            if (ver[a]![g] !== latest[a]) c.stale++;
          } else {
            for (let h = 0; h < n; h++) {
              if (row[h] === 'M') {
                c.tokens += sizes[a]!;
                c.write_backs++;
                row[h] = 'S';
              }
              if (row[h] === 'E') row[h] = 'S';
            }
            const others = row.some((s, h) => h !== g && s !== 'I');
            c.tokens += sizes[a]!;
            c.fetches++;
            row[g] = others ? 'S' : 'E';
            ver[a]![g] = latest[a]!;
          }
        } else {
          c.writes++;
          if (row[g] === 'M' || row[g] === 'E') c.hits++;
          else {
            if (row[g] === 'I') {
              if (row.some((s, h) => h !== g && s === 'M')) {
                c.tokens += sizes[a]!;
                c.write_backs++;
              }
              c.tokens += sizes[a]!;
              c.fetches++;
            }
            for (let h = 0; h < n; h++) {
              if (h !== g && row[h] !== 'I') {
                row[h] = 'I';
                c.invalidations++;
              }
            }
          }
          row[g] = 'M';
          latest[a]!++;
          ver[a]![g] = latest[a]!;
        }
        // SWMR over every artifact, every step
        for (let b = 0; b < m; b++) {
          const ms = st[b]!.filter((s) => s === 'M').length;
          const valid = st[b]!.filter((s) => s !== 'I').length;
          if (ms > 1 || (ms === 1 && valid > 1)) c.swmr++;
        }
      }
      return c;
    }),
  };
}

describe('kernel agentcoh/sync', () => {
  it('matches an independent MESI re-simulation counter for counter, with SWMR and freshness at every step', () => {
    for (const [seed, n, m, steps] of [[42, 6, 5, 400], [3, 12, 2, 1500], [9, 2, 7, 300]] as const) {
      const r = runRaw(agentcoh, { seed, agents: n, artifacts: m, steps }).result as any;
      const ref = referenceMesi(seed, n, m, steps);
      expect(r.sizes).to.deep.equal(ref.sizes);
      expect(r.by_write_fraction).to.have.length(VS.length);
      r.by_write_fraction.forEach((row: any, i: number) => {
        const c = ref.rows[i]!;
        expect(row.V).to.equal(VS[i]);
        // accounting fields from the re-simulation and the drawn operations
        expect(row.writes_per_artifact).to.deep.equal(ref.writesPer[i]);
        const sum = ref.sizes.reduce((a, b) => a + b, 0);
        expect(row.tokens_broadcast).to.equal(steps * n * sum);
        expect(row.bound_tokens).to.equal(ref.writesPer[i]!.reduce((acc, w, a) => acc + n * ref.sizes[a]! * (1 + w), 0));
        expect(row.savings).to.be.closeTo(1 - c.tokens / (steps * n * sum), 1e-15);
        expect([row.tokens_mesi, row.fetches, row.write_backs, row.invalidations, row.hits, row.reads, row.writes]).to.deep.equal([c.tokens, c.fetches, c.write_backs, c.invalidations, c.hits, c.reads, c.writes]);
        expect(c.swmr).to.equal(0);
        expect(c.stale).to.equal(0);
        expect([row.swmr_violations, row.stale_reads, row.stale_copies, row.max_staleness, row.version_regressions]).to.deep.equal([0, 0, 0, 0, 0]);
      });
    }
  });

  it('stays within the accounting bound; broadcast is n·S·Σ|D_a| exactly', () => {
    const r = runRaw(agentcoh, { seed: 5, agents: 10, artifacts: 4, steps: 2000 }).result as any;
    const sum = r.sizes.reduce((a: number, b: number) => a + b, 0);
    for (const row of r.by_write_fraction) {
      expect(row.tokens_broadcast).to.equal(10 * 2000 * sum);
      const bound = row.writes_per_artifact.reduce((acc: number, w: number, a: number) => acc + 10 * r.sizes[a] * (1 + w), 0);
      expect(row.bound_tokens).to.equal(bound);
      expect(row.tokens_mesi).to.be.at.most(bound);
      expect(row.savings).to.be.closeTo(1 - row.tokens_mesi / row.tokens_broadcast, 1e-15);
      expect(row.reads + row.writes).to.equal(2000);
    }
  });

  it('savings are non-increasing in the write fraction (seeds 0…49, common random numbers)', () => {
    for (let seed = 0; seed < 50; seed++) {
      const rows = (runRaw(agentcoh, { seed }).result as any).by_write_fraction;
      for (let i = 1; i < rows.length; i++) expect(rows[i].savings).to.be.at.most(rows[i - 1].savings);
    }
  });

  it('with one agent: no invalidations or write-backs, tokens = sizes of the distinct artifacts touched', () => {
    const seed = 17;
    const r = runRaw(agentcoh, { seed, agents: 1, artifacts: 20, steps: 30 }).result as any;
    const ops = new RngStreams(seed, 'agentcoh/sync').stream('ops');
    const touched = new Set<number>();
    for (let s = 0; s < 30; s++) {
      ops.next();
      touched.add(Math.floor(ops.next() * 20));
      ops.next();
    }
    const expected = [...touched].reduce((acc, a) => acc + r.sizes[a], 0);
    for (const row of r.by_write_fraction) {
      expect(row.invalidations).to.equal(0);
      expect(row.write_backs).to.equal(0);
      expect(row.tokens_mesi).to.equal(expected);
    }
  });

  it('reports a trace head at V = 0.25 consistent with the protocol', () => {
    const r = runRaw(agentcoh).result as any;
    expect(r.trace_head).to.have.length(32);
    for (const row of r.trace_head) {
      if (row.tokens > 0) expect(row.state_before).to.equal('I');
      if (row.op === 'write') expect(row.state_after).to.equal('M');
      else expect(['S', 'E', 'M']).to.include(row.state_after);
    }
  });
});
