import { expect } from 'chai';
import ring, { ringRows } from '../../../workers/kernels/ringattn-simulate.js';
import { attendRow } from '../../../workers/lib/attention.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { rejects, runRaw } from '../../helpers/kernels.js';
import { addAt } from '../../helpers/indexed.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
const d = 8;

/** The note's inputs, regenerated: L·d normals per stream, row-major. */
function inputs(seed: number, L: number) {
  const rng = new RngStreams(seed, 'ringattn/simulate');
  return { Q: rng.stream('q').normals(L * d), K: rng.stream('k').normals(L * d), V: rng.stream('v').normals(L * d) };
}

/** Plain softmax attention of row i over keys 0…i (no blocks, no online merge). */
function attention(Q: Float64Array, K: Float64Array, V: Float64Array, i: number): number[] {
  const s = Array.from({ length: i + 1 }, (_, j) => {
    let a = 0;
    for (let c = 0; c < d; c++) a += Q[i * d + c]! * K[j * d + c]!;
    return a / Math.sqrt(d);
  });
  const m = Math.max(...s);
  const w = s.map((x) => Math.exp(x - m));
  const z = w.reduce((a, b) => a + b, 0);
  return Array.from({ length: d }, (_, c) => w.reduce((a, x, j) => a + x * V[j * d + c]!, 0) / z);
}

describe('kernel ringattn/simulate', () => {
  it('the ring output equals full causal attention on every evaluated row (independent reference)', () => {
    for (const [seed, L, P] of [[42, 4096, 8], [5, 1000, 7], [9, 333, 1], [11, 32, 32], [2, 1, 1], [3, 100, 3]] as const) {
      const r = runRaw(ring, q({ seed, seq_len: L, devices: P })).result as any;
      expect(r.max_abs_diff_vs_full).to.be.at.most(1e-12);
      const { Q, K, V } = inputs(seed, L);
      // the documented rows (kernels-c C6 per device block): max(1, ⌊32/P⌋) per block at ⌊(k+1)·b/r⌋ − 1
      const rows: number[] = [];
      for (let p = 0; p < P; p++) {
        const start = Math.floor((p * L) / P);
        const b = Math.floor(((p + 1) * L) / P) - start;
        const rp = Math.min(b, Math.max(1, Math.floor(32 / P)));
        for (let k = 0; k < rp; k++) rows.push(start + Math.floor(((k + 1) * b) / rp) - 1);
      }
      expect(r.row_indices).to.deep.equal(rows);
      expect([r.rows_evaluated, r.output_sample.length]).to.deep.equal([rows.length, rows.length]);
      r.row_indices.forEach((i: number, k: number) => {
        const ref = attention(Q, K, V, i);
        ref.forEach((x, c) => expect(Math.abs(r.output_sample[k][c] - x)).to.be.at.most(1e-12));
      });
      // the reported rows are the ring's own output, bit for bit (not a second full-attention pass)
      const ringOut = ringRows(Q, K, V, L, P, r.row_indices).out;
      expect(r.output_sample.flat()).to.deep.equal(Array.from(ringOut));
      // max_abs_diff_vs_full is the largest gap between those rows and the full causal attention
      // the kernel compares with (lib/attention's attendRow), recomputed exactly, not only bounded
      const full = new Float64Array(d);
      let gap = 0;
      r.row_indices.forEach((i: number, k: number) => {
        attendRow(Q, i * d, K, V, i, d, d, 1 / Math.sqrt(d), full, 0, undefined, 0, new Float64Array(L));
        full.forEach((x, c) => (gap = Math.max(gap, Math.abs(r.output_sample[k][c] - x))));
      });
      expect(r.max_abs_diff_vs_full).to.equal(gap);
      // every evaluated row i on device p merges the p + 1 blocks at or before its own (causal)
      const owner = (i: number): number => r.per_device.findIndex((dev: any) => i >= dev.start && i < dev.end);
      expect(r.block_merges).to.equal(r.row_indices.reduce((acc: number, i: number) => acc + owner(i) + 1, 0));
    }
  });

  it('evaluates max(1, floor(32/P)) rows per device, including the last row of each block', () => {
    for (const [L, P] of [[4096, 8], [8192, 3], [100, 32], [40, 32], [7, 5]] as const) {
      const r = runRaw(ring, q({ seq_len: L, devices: P })).result as any;
      let expected = 0;
      for (const dev of r.per_device) {
        const inBlock = r.row_indices.filter((i: number) => i >= dev.start && i < dev.end);
        expect(inBlock.length).to.equal(Math.min(dev.end - dev.start, Math.max(1, Math.floor(32 / P))));
        expect(inBlock).to.include(dev.end - 1);
        expected += inBlock.length;
      }
      expect(r.rows_evaluated).to.equal(expected);
      expect(r.rows_evaluated).to.be.at.most(32);
    }
  });

  it('a row depends neither on the number of devices nor on later tokens (module and body level)', () => {
    const big = inputs(42, 8192);
    const cut = (a: Float64Array) => a.subarray(0, 4096 * d);
    const rows = [0, 1000, 2047, 4095];
    const a = ringRows(cut(big.Q), cut(big.K), cut(big.V), 4096, 8, rows).out;
    const b = ringRows(big.Q, big.K, big.V, 8192, 3, rows).out;
    a.forEach((x, k) => expect(Math.abs(x - b[k]!)).to.be.at.most(1e-12));
    // rows 255, 511, … are evaluated both at (4096, 8) and at (8192, 16)
    const r1 = runRaw(ring, q({ seq_len: 4096, devices: 8 })).result as any;
    const r2 = runRaw(ring, q({ seq_len: 8192, devices: 16 })).result as any;
    let shared = 0;
    r1.row_indices.forEach((i: number, k: number) => {
      const k2 = r2.row_indices.indexOf(i);
      if (k2 < 0) return;
      shared++;
      r1.output_sample[k].forEach((x: number, c: number) => expect(Math.abs(x - r2.output_sample[k2][c])).to.be.at.most(1e-12));
    });
    expect(shared).to.be.at.least(8);
  });

  it('the schedule is a Latin square; contiguous idle steps are P − 1 − p; one device has no communication', () => {
    for (const [L, P] of [[4096, 8], [1000, 7], [64, 32]] as const) {
      const r = runRaw(ring, q({ seq_len: L, devices: P })).result as any;
      const S = r.schedule as number[][];
      expect(S.length).to.equal(P);
      for (let x = 0; x < P; x++) {
        expect(new Set(S[x]).size).to.equal(P);
        expect(new Set(S.map((row) => row[x])).size).to.equal(P);
        expect(S[x]![0]).to.equal(x); // every device starts with its own block
      }
      expect(r.per_device).to.have.length(P);
      r.per_device.forEach((dev: any, p: number) => expect(dev.idle_steps).to.equal(P - 1 - p));
      expect(r.ring_steps).to.equal(P);
    }
    expect(runRaw(ring, q({ seq_len: 1000, devices: 7 })).checks).to.deep.equal({ ring_equals_full: true, work_matches_direct_count: true });
    const one = runRaw(ring, q({ seq_len: 500, devices: 1 })).result as any;
    expect(one.ring_steps).to.equal(1);
    expect(one.schedule).to.deep.equal([[0]]);
    expect(one.comm_elements_per_device).to.equal(0);
    expect(one.comm_bytes_per_device).to.equal(0);
    expect(one.block_merges).to.equal(one.rows_evaluated);
  });

  it('work sums to L(L+1)/2 in both layouts; imbalances match brute-force counts and their closed forms', () => {
    for (const [L, P] of [[4096, 8], [1000, 7], [8192, 32], [5, 5], [97, 4], [333, 1]] as const) {
      const r = runRaw(ring, q({ seq_len: L, devices: P })).result as any;
      const contiguous = new Array<number>(P).fill(0);
      const striped = new Array<number>(P).fill(0);
      for (let i = 0; i < L; i++) {
        const owner = r.per_device.findIndex((dev: any) => i >= dev.start && i < dev.end);
        addAt(contiguous, owner, i + 1);
        addAt(striped, i % P, i + 1);
      }
      r.per_device.forEach((dev: any, p: number) => {
        expect(dev.work_contiguous).to.equal(contiguous[p]);
        expect(dev.work_striped).to.equal(striped[p]);
        expect(dev.end - dev.start).to.be.within(Math.floor(L / P), Math.ceil(L / P));
      });
      const total = (L * (L + 1)) / 2;
      expect(contiguous.reduce((a, b) => a + b, 0)).to.equal(total);
      expect(r.total_pairs).to.equal(total);
      // communication: device p forwards the K and V of every block it held except at the last step
      const size = (b: number) => r.per_device[b].end - r.per_device[b].start;
      const comm = r.per_device.map((_: any, p: number) => Array.from({ length: P - 1 }, (__, s) => size((((p - s) % P) + P) % P) * 2 * d).reduce((a, b) => a + b, 0));
      r.per_device.forEach((dev: any, p: number) => expect(dev.comm_elements).to.equal(comm[p]));
      expect(r.comm_elements_per_device).to.equal(Math.max(...comm));
      expect(r.comm_bytes_per_device).to.equal(2 * Math.max(...comm));
      // peak: own Q block, the KV block in use and (P > 1) the one arriving
      const bMax = Math.ceil(L / P);
      expect(r.peak_elements_per_device).to.equal(bMax * d + (P > 1 ? 2 : 1) * 2 * bMax * d);
      expect(r.single_device_elements).to.equal(3 * L * d);
      expect(r.imbalance_contiguous).to.be.closeTo(Math.max(...contiguous) / (total / P), 1e-12);
      expect(r.imbalance_striped).to.be.closeTo(Math.max(...striped) / (total / P), 1e-12);
      if (L % P === 0) {
        expect(r.imbalance_striped).to.be.closeTo(1 + (P - 1) / (L + 1), 1e-12);
        // last contiguous block: B(2L − B + 1)/2 pairs, so imbalance = (2L − L/P + 1)/(L + 1) → 2 − 1/P
        expect(r.imbalance_contiguous).to.be.closeTo((2 * L - L / P + 1) / (L + 1), 1e-12);
        expect(r.comm_elements_per_device).to.equal((P - 1) * 2 * (L / P) * d);
      }
    }
    const defaults = runRaw(ring);
    expect(defaults.constants).to.deep.equal({ d, scale: 1 / Math.sqrt(d), causal: true, rows_target: 32, bytes_per_element: 2, layout_executed: 'contiguous' });
    const def = defaults.result as any;
    expect(def.imbalance_contiguous).to.be.closeTo(1.8748, 1e-4);
    expect(def.comm_bytes_per_device).to.equal(2 * def.comm_elements_per_device);
    expect(def.single_device_elements).to.equal(3 * 4096 * d);
    expect(def.peak_elements_per_device).to.equal(5 * 512 * d);
  });

  it('seq_len must be at least devices', () => {
    expect(rejects(ring, { seq_len: '7', devices: '8' })).to.deep.equal(['seq_len:constraint']);
    expect(rejects(ring, { seq_len: '8', devices: '8' })).to.deep.equal([]);
  });
});
