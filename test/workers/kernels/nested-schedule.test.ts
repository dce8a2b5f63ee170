import { expect } from 'chai';
import nested from '../../../workers/kernels/nested-schedule.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { sampledIndex } from '../../helpers/series-digest.js';
import { runRaw } from '../../helpers/kernels.js';
import { addAt, at } from '../../helpers/indexed.js';

/**
 * Independent reference (kernels-c §8): θ_0 from stream theta0, ξ_t from stream walk; every
 * gradient is kept, and level ℓ applies −η_ℓ·(sum of the last C_ℓ gradients) at ticks t with
 * (t+1) mod C_ℓ = 0 (no running accumulator). Stops after the first loss above 1e12.
 */
function reference(seed: number, levels: number, ticks: number, base: number, eta0: number, decay: number, drift: number) {
  const rng = new RngStreams(seed, 'nested/schedule');
  const t0 = rng.stream('theta0');
  const walk = rng.stream('walk');
  const theta = Array.from({ length: 8 }, () => t0.normal());
  const mem = Array.from({ length: levels }, () => new Array<number>(8).fill(0));
  const grads: number[][] = [];
  const losses: number[] = [];
  const change = new Array<number>(levels).fill(0);
  for (let t = 0; t < ticks; t++) {
    const g = theta.map((th, k) => mem.reduce((s, m) => s + m[k]!, 0) - th);
    const loss = g.reduce((s, v) => s + v * v, 0) / 2;
    losses.push(loss);
    if (loss > 1e12) return { losses, change, diverged: true };
    grads.push(g);
    for (let l = 0; l < levels; l++) {
      const C = base ** l;
      if ((t + 1) % C !== 0) continue;
      const eta = eta0 * decay ** l;
      const step = new Array<number>(8).fill(0);
      for (let s = t - C + 1; s <= t; s++) for (let k = 0; k < 8; k++) addAt(step, k, eta * grads[s]![k]!);
      for (let k = 0; k < 8; k++) addAt(at(mem, l), k, -step[k]!);
      addAt(change, l, Math.hypot(...step));
    }
    for (let k = 0; k < 8; k++) addAt(theta, k, drift * walk.normal());
  }
  return { losses, change, diverged: false };
}
const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
const close = (a: number, b: number, what: string) => expect(a, what).to.be.closeTo(b, 1e-9 * Math.max(1, Math.abs(b)));

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

describe('kernel nested/schedule', () => {
  it('every reported value recomputed by the independent reference (losses, steady MSEs, parameter change, rates)', () => {
    for (const [seed, levels, ticks, base, eta0, decay, drift] of [[42, 5, 200, 2, 0.6, 0.5, 0.01], [7, 3, 97, 3, 0.3, 0.8, 0.2], [1, 4, 600, 2, 0.5, 0.25, 0.05]] as const) {
      const r = runRaw(nested, q({ seed, levels, ticks, base, eta0, decay, drift })).result as any;
      const ref = reference(seed, levels, ticks, base, eta0, decay, drift);
      const single = reference(seed, 1, ticks, base, eta0, decay, drift);
      expect(r.diverged).to.equal(false);
      expect(r.per_level).to.have.length(levels);
      r.per_level.forEach((lv: any, l: number) => {
        expect([lv.level, lv.chunk]).to.deep.equal([l, base ** l]);
        close(lv.eta, eta0 * decay ** l, 'eta');
        close(lv.total_param_change, ref.change[l]!, `change ${l}`);
      });
      expect(r.loss_curve_ticks).to.deep.equal(sampledIndex(ticks));
      expect(r.loss_curve.length).to.equal(Math.min(256, ticks));
      r.loss_curve.forEach((v: number, i: number) => close(v, ref.losses[r.loss_curve_ticks[i]]!, `loss ${i}`));
      expect(r.loss_curve_ticks.at(-1)).to.equal(ticks - 1);
      close(r.final_loss, ref.losses.at(-1)!, 'final');
      close(r.steady_mse, mean(ref.losses.slice(Math.floor(ticks / 2))), 'steady');
      close(r.steady_mse_single_level, mean(single.losses.slice(Math.floor(ticks / 2))), 'single');
    }
  });

  it('a divergent schedule stops at the first loss above 1e12 and says so', () => {
    // base 1: every level steps every tick, Σ η_ℓ ≈ 2·2 = 4 > 2, so the error grows ×3 per tick
    const r = runRaw(nested, q({ seed: 5, levels: 12, ticks: 500, base: 1, eta0: 2, decay: 0.5 })).result as any;
    const ref = reference(5, 12, 500, 1, 2, 0.5, 0.01);
    expect(ref.diverged).to.equal(true);
    expect(r.diverged).to.equal(true);
    expect(r.loss_curve.length).to.equal(ref.losses.length);
    close(r.final_loss, ref.losses.at(-1)!, 'final');
    expect(r.final_loss).to.be.above(1e12);
    close(r.steady_mse, mean(ref.losses.slice(Math.floor(ref.losses.length / 2))), 'steady');
    r.per_level.forEach((lv: any, l: number) => expect(lv.updates).to.equal(ref.losses.length - 1, `updates ${l}`));
  });

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
});
