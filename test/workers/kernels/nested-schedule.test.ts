import { expect } from 'chai';
import nested from '../../../workers/kernels/nested-schedule.js';
import { rejects, runBody, runRaw } from '../../helpers/kernels.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

describe('kernel nested/schedule', () => {
  it('level ℓ updates floor(ticks/base^ℓ) times at ticks C−1, 2C−1, …; levels slower than the stream never move', () => {
    const r = runRaw(nested, q({ levels: 6, ticks: 100, base: 3 })).result as any;
    for (const lv of r.per_level) {
      expect(lv.updates).to.equal(Math.floor(100 / 3 ** lv.level));
      expect(lv.first_update_ticks).to.deep.equal(Array.from({ length: Math.min(8, lv.updates) }, (_, k) => (k + 1) * 3 ** lv.level - 1));
      if (3 ** lv.level > 100) expect(lv.total_param_change).to.equal(0);
    }
    const every = runRaw(nested, q({ base: 1, ticks: 10 })).result as any;
    for (const lv of every.per_level) expect(lv.updates).to.equal(10);
  });

  it('losses are quadratic in drift: L(3δ) − 3L(2δ) + 3L(δ) − L(0) = 0 for a fixed seed', () => {
    const L = (drift: number) => (runRaw(nested, q({ drift, ticks: 300 })).result as any).final_loss as number;
    const d = 0.02;
    const third = L(3 * d) - 3 * L(2 * d) + 3 * L(d) - L(0);
    expect(Math.abs(third)).to.be.at.most(1e-9 * Math.max(1, L(3 * d)));
  });

  it('without drift the memories converge (final loss < 1e-20); a single level equals its own baseline exactly', () => {
    expect((runRaw(nested, q({ drift: 0, ticks: 512 })).result as any).final_loss).to.be.below(1e-20);
    const one = runRaw(nested, q({ levels: 1 })).result as any;
    expect(one.steady_mse).to.equal(one.steady_mse_single_level);
    // the note's prototype reported ~30 % lower steady MSE with 5 levels; here the two are within a few
    // per cent across seeds, so no direction is claimed (see README)
  });

  it('is deterministic, seed-sensitive and bounded', () => {
    expect(runBody(nested, { seed: '1' })).to.equal(runBody(nested, { seed: '1' }));
    expect(runBody(nested, { seed: '1' })).to.not.equal(runBody(nested, { seed: '2' }));
    expect(rejects(nested, { levels: '13' })).to.deep.equal(['levels:number.max']);
    expect(rejects(nested, { eta0: '0' })).to.deep.equal(['eta0:number.min']);
  });
});
