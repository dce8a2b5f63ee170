import { expect } from 'chai';
import slide, { decompose } from '../../../workers/kernels/slidesparse-pack.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

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

  it('is deterministic, seed-sensitive and bounded', () => {
    expect(runBody(slide, { seed: '1' })).to.equal(runBody(slide, { seed: '1' }));
    expect(runBody(slide, { seed: '1' })).to.not.equal(runBody(slide, { seed: '2' }));
    expect(rejects(slide, { big_n: '1' })).to.deep.equal(['big_n:number.min']);
    expect(rejects(slide, { blocks: '513' })).to.deep.equal(['blocks:number.max']);
  });
});
