import { expect } from 'chai';
import slide, { decompose } from '../../../workers/kernels/slidesparse-pack.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';

describe('kernel slidesparse/pack', () => {
  it('every (2N−2):2N mask decomposes into 2:4 windows, exhaustively for N ≤ 8', () => {
    for (let N = 2; N <= 8; N++) {
      const width = 2 * N;
      for (let a = 0; a < width; a++) for (let b = a + 1; b < width; b++) {
        const nz = [...Array(width).keys()].filter((i) => i !== a && i !== b);
        const w = decompose(nz, N)!;
        expect(w, `N=${N} drop ${a},${b}`).to.not.equal(null);
        const stored = w.flatMap((x) => x.pos).sort((x, y) => x - y);
        expect(stored).to.deep.equal(nz);
        w.forEach((x, k) => x.pos.forEach((p) => expect(p).to.be.within(2 * k, 2 * k + 3)));
      }
    }
  });

  it('closed forms, compliance and packed == dense over several N', () => {
    for (const N of [2, 3, 4, 8, 16]) {
      const r = runRaw(slide, { big_n: String(N), blocks: '16' }).result as any;
      expect(r.pattern).to.equal(`${2 * N - 2}:${2 * N}`);
      expect(r.expansion_factor).to.be.closeTo((2 * N - 2) / N, 1e-15);
      expect(r.theoretical_speedup).to.be.closeTo(N / (N - 1), 1e-15);
      expect(r.lifted_length).to.equal(16 * 4 * (N - 1));
      expect(r.all_windows_compliant).to.equal(true);
      expect(r.packed_values).to.equal(r.nonzeros).and.equal(8 * 16 * (2 * N - 2));
      expect(r.max_abs_diff_packed_vs_dense).to.be.at.most(1e-12);
      expect(r.retained_energy.slide).to.be.at.least(r.retained_energy.two_four);
    }
  });

  it('every reported value is recomputed: window counts, density, metadata and retained energies from weights redrawn from stream w', () => {
    for (const [seed, N, blocks] of [[42, 4, 8], [3, 3, 5], [9, 2, 16]] as const) {
      const out = runRaw(slide, { seed: String(seed), big_n: String(N), blocks: String(blocks) });
      const r = out.result as any;
      const rows = 8; // the documented row count (constants.rows, checked below)
      expect(out.constants!.rows).to.equal(rows);
      const width = 2 * N;
      const ws = new RngStreams(seed, 'slidesparse/pack').stream('w');
      const W = Array.from({ length: rows * blocks * width }, () => ws.normal());
      // energy kept: (2N−2):2N drops the two smallest |w| per block; 2:4 drops two per group of 4
      const dropTwo = (xs: number[]): number => [...xs].sort((a, b) => Math.abs(a) - Math.abs(b)).slice(2).reduce((a, v) => a + v * v, 0);
      let total = 0;
      let slideE = 0;
      let twoFourE = 0;
      const hist = [0, 0, 0];
      for (let b = 0; b < rows * blocks; b++) {
        const block = W.slice(b * width, (b + 1) * width);
        // the packing written out: drop the two smallest |w|, then each kept position, left to right, goes to
        // the earliest window [2w, 2w + 3] (w = 0 … N − 2) that covers it and holds fewer than two
        const dropped = block.map((v, i) => [Math.abs(v), i] as const).sort((x, y) => x[0] - y[0]).slice(0, 2).map((x) => x[1]);
        const load = new Array<number>(N - 1).fill(0);
        for (let p = 0; p < width; p++) {
          if (dropped.includes(p)) continue;
          const w = [...load.keys()].find((k) => p >= 2 * k && p <= 2 * k + 3 && load[k]! < 2)!;
          load[w] = load[w]! + 1;
        }
        for (const c of load) hist[c] = hist[c]! + 1;
        total += block.reduce((a, v) => a + v * v, 0);
        slideE += dropTwo(block);
        for (let g = 0; g < width; g += 4) {
          const grp = block.slice(g, g + 4);
          twoFourE += grp.length > 2 ? dropTwo(grp) : grp.reduce((a, v) => a + v * v, 0);
        }
      }
      expect(r.retained_energy.slide).to.be.closeTo(slideE / total, 1e-12);
      expect(r.retained_energy.two_four).to.be.closeTo(twoFourE / total, 1e-12);
      expect(r.windows_per_block).to.equal(N - 1);
      expect(r.density).to.be.closeTo((N - 1) / N, 1e-15);
      expect(r.nonzeros).to.equal(rows * blocks * (2 * N - 2));
      expect(r.packed_values).to.equal(r.nonzeros);
      expect(r.metadata_bits).to.equal(2 * r.packed_values);
      // N − 1 windows per block, each holding 0–2 values, together every nonzero once
      const fill = [r.window_fill_histogram[0], r.window_fill_histogram[1], r.window_fill_histogram[2]];
      expect(fill).to.deep.equal(hist);
      expect(fill[0] + fill[1] + fill[2]).to.equal(rows * blocks * (N - 1));
      expect(fill[1] + 2 * fill[2]).to.equal(r.packed_values);
      expect(out.checks).to.deep.equal({ every_nonzero_stored_once: true });
    }
  });
});
