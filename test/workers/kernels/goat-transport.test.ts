import { expect } from 'chai';
import goat from '../../../workers/kernels/goat-transport.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

describe('kernel goat/transport', () => {
  it('Sinkhorn conserves the column marginals exactly, the dual rises and the row error falls (4 seeds, 3 regs)', () => {
    for (let seed = 0; seed < 4; seed++) for (const reg of [0.1, 1, 3]) {
      const r = runRaw(goat, { seed: String(seed), ...q({ reg, iters: 60 }) }).result as any;
      expect(r.final_col_error).to.be.at.most(1e-12);
      const dual = r.dual_curve as number[];
      for (let i = 1; i < dual.length; i++) expect(dual[i]).to.be.at.least(dual[i - 1]! - 1e-12);
      const rows = r.row_error_curve as number[];
      for (let i = 1; i < rows.length; i++) expect(rows[i]).to.be.at.most(rows[i - 1]! + 1e-12);
      const mass = (r.plan as number[][]).flat().reduce((a, b) => a + b, 0);
      expect(mass).to.be.closeTo(1, 1e-9);
    }
  });

  it('the first half-step is softmax/n_q; GOAT rows sum to 1 and equal softmax times the prior, renormalised', () => {
    const r = runRaw(goat, {}).result as any;
    expect(r.first_half_step_vs_softmax).to.be.at.most(1e-15);
    expect(r.final_row_error).to.be.below(1e-12);
    const S = r.scores as number[];
    for (let i = 0; i < r.goat_rows.length; i++) {
      const w = Array.from({ length: 16 }, (_, j) => r.prior[j] * Math.exp(S[i * 16 + j]!));
      const z = w.reduce((a, b) => a + b, 0);
      w.forEach((x, j) => expect(r.goat_rows[i][j]).to.be.closeTo(x / z, 1e-12));
    }
  });

  it('a very high temperature gives the independent coupling; keys are bounded', () => {
    const r = runRaw(goat, q({ reg: 100, n_q: 8, n_k: 8 })).result as any;
    for (const row of r.plan) for (const p of row) expect(Math.abs(p - 1 / 64) / (1 / 64)).to.be.below(0.1);
    expect(runBody(goat, { seed: '1' })).to.equal(runBody(goat, { seed: '1' }));
    expect(runBody(goat, { seed: '1' })).to.not.equal(runBody(goat, { seed: '2' }));
    expect(rejects(goat, { reg: '0.001' })).to.deep.equal(['reg:number.min']);
    expect(rejects(goat, { n_q: '65' })).to.deep.equal(['n_q:number.max']);
  });
});
