import { expect } from 'chai';
import steer from '../../../workers/kernels/steering-sweep.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinear } from '../../helpers/linear-solve.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

/** CAA + LDA probe + sweep from the note, with nested arrays and Gauss–Jordan elimination. */
function reference(seed: number, n: number, m: number, S: number, cMax: number, kappa: number) {
  const rng = new RngStreams(seed, 'steering/sweep');
  const vec = (label: string) => {
    const s = rng.stream(label);
    return Array.from({ length: n }, () => s.normal());
  };
  const mu = vec('mu');
  const raw = vec('delta');
  const dl = Math.hypot(...raw);
  const delta = raw.map((x) => x / dl);
  const cloud = (label: string, sign: number) => {
    const s = rng.stream(label);
    return Array.from({ length: m }, () => Array.from({ length: n }, (_, i) => mu[i]! + (sign * delta[i]!) / 2 + 0.5 * s.normal()));
  };
  const P = cloud('pos', 1);
  const N = cloud('neg', -1);
  const mean = (X: number[][]) => Array.from({ length: n }, (_, i) => X.reduce((a, r) => a + r[i]!, 0) / m);
  const mp = mean(P);
  const mn = mean(N);
  const v = mp.map((x, i) => x - mn[i]!);
  const vn = Math.hypot(...v);
  const vh = v.map((x) => x / vn);
  const C = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => {
    let s = 0;
    for (const [X, c] of [[P, mp], [N, mn]] as const) for (const r of X) s += (r[i]! - c[i]!) * (r[j]! - c[j]!);
    return s / (2 * m - 2) + (i === j ? 0.1 : 0);
  }));
  const w = solveLinear(C, v);
  const b = -w.reduce((a, x, i) => a + x * (mp[i]! + mn[i]!) / 2, 0);
  const sig = (z: number) => 1 / (1 + Math.exp(-z));
  const rate = (X: number[][], c: number) => X.reduce((a, h) => a + sig(h.reduce((s, x, i) => s + w[i]! * (x + c * vh[i]!), b)), 0) / m;
  const p0 = rate(N, 0);
  const sweep = Array.from({ length: S }, (_, k) => {
    const c = -cMax + (2 * cMax * k) / (S - 1);
    const r = rate(N, c);
    const proj = N.reduce((a, h) => a + h.reduce((s, x, i) => s + vh[i]! * (x + c * vh[i]!), 0), 0) / m;
    const ratio = N.reduce((a, h) => a + Math.hypot(...h.map((x, i) => x + c * vh[i]!)) / Math.hypot(...h), 0) / m;
    return { c, rate: r, proj, ratio, utility: r - p0 - kappa * c * c };
  });
  const cos = v.reduce((a, x, i) => a + x * delta[i]!, 0) / vn;
  return { v, w, b, delta, p0, pos: rate(P, 0), sweep, cos, align: w.reduce((a, x, i) => a + x * v[i]!, 0) };
}

const close = (a: number, b: number, tol = 1e-9) => expect(Math.abs(a - b)).to.be.at.most(tol * Math.max(1, Math.abs(b)));

/** c* recomputed from the table with the note's tie rule. */
function argmax(sweep: any[]): number {
  return sweep.reduce((best, s) => (s.utility > best.utility || (s.utility === best.utility && (Math.abs(s.c) < Math.abs(best.c) || (Math.abs(s.c) === Math.abs(best.c) && s.c < best.c))) ? s : best)).c;
}

describe('kernel steering/sweep', () => {
  it('matches an independent CAA vector, LDA probe and sweep', () => {
    for (const [seed, n, m, S, cMax, kappa] of [[42, 32, 24, 21, 6, 0.08], [5, 7, 3, 6, 2.5, 0.3], [9, 2, 2, 2, 1, 0], [13, 64, 100, 11, 10, 0.01]] as const) {
      const r = runRaw(steer, q({ seed, dim: n, cluster: m, sweep_points: S, c_max: cMax, kappa })).result as any;
      const ref = reference(seed, n, m, S, cMax, kappa);
      close(r.steering_vector_norm, Math.hypot(...ref.v));
      ref.w.forEach((x, i) => close(r.probe_weights[i], x, 1e-8));
      close(r.cos_to_true_direction, ref.cos);
      close(r.probe_alignment, ref.align, 1e-8);
      close(r.p0, ref.p0);
      close(r.positive_baseline, ref.pos);
      close(r.probe_bias, ref.b, 1e-8);
      ref.v.forEach((x, i) => close(r.steering_vector[i], x, 1e-12));
      ref.delta.forEach((x, i) => close(r.true_direction[i], x, 1e-12));
      const best = argmax(r.sweep);
      close(r.c_star, best, 1e-12);
      close(r.utility_star, r.sweep.find((x: any) => x.c === best).utility, 1e-12);
      expect(r.sweep.length).to.equal(S);
      r.sweep.forEach((s: any, k: number) => {
        close(s.c, ref.sweep[k]!.c, 1e-12);
        close(s.behaviour_rate, ref.sweep[k]!.rate);
        close(s.mean_projection, ref.sweep[k]!.proj);
        close(s.norm_ratio, ref.sweep[k]!.ratio);
        close(s.utility, ref.sweep[k]!.utility);
      });
    }
  });

  it('behaviour rate is non-decreasing in c and strictly increasing away from saturation; projections shift by exactly c', () => {
    for (let seed = 0; seed < 10; seed++) {
      for (const over of [{}, { dim: 100, cluster: 5, c_max: 20, sweep_points: 101 }, { dim: 3, cluster: 200, sweep_points: 8, c_max: 0.5 }] as Record<string, number>[]) {
        const r = runRaw(steer, q({ seed, ...over })).result as any;
        expect(r.probe_alignment).to.be.above(0);
        const sw = r.sweep as any[];
        for (let k = 1; k < sw.length; k++) {
          expect(sw[k].behaviour_rate).to.be.at.least(sw[k - 1].behaviour_rate);
          const lo = sw[k - 1].behaviour_rate;
          if (lo >= 1e-6 && sw[k].behaviour_rate <= 1 - 1e-6) expect(sw[k].behaviour_rate).to.be.above(lo);
        }
        // mean_projection(c) − c is the same for every c (and equals the c = 0 value on odd grids)
        const base = sw[0].mean_projection - sw[0].c;
        for (const s of sw) expect(Math.abs(s.mean_projection - s.c - base)).to.be.at.most(1e-9 * Math.max(1, Math.abs(s.c)));
        for (const s of sw) expect(s.norm_ratio).to.be.above(0);
        if (sw.length % 2 === 1) {
          const mid = sw[(sw.length - 1) / 2];
          expect(mid.c).to.equal(0);
          expect(mid.behaviour_rate).to.equal(r.p0);
          expect(mid.norm_ratio).to.be.closeTo(1, 1e-15);
          expect(mid.utility).to.equal(0);
        }
      }
    }
  });

  it('utility and c* are recomputable; kappa = 0 gives c_max; c* ≥ 0 and non-increasing in kappa', () => {
    const kappas = [0, 0.01, 0.04, 0.08, 0.2, 1, 10];
    for (let seed = 0; seed < 10; seed++) {
      let prev = Infinity;
      for (const kappa of kappas) {
        const r = runRaw(steer, q({ seed, kappa })).result as any;
        for (const s of r.sweep) close(s.utility, s.behaviour_rate - r.p0 - kappa * s.c * s.c, 1e-12);
        expect(r.c_star).to.equal(argmax(r.sweep));
        expect(r.utility_star).to.equal(r.sweep.find((s: any) => s.c === r.c_star).utility);
        expect(r.c_star).to.be.at.least(0).and.at.most(prev);
        if (kappa === 0) expect(r.c_star).to.equal(6);
        prev = r.c_star;
      }
    }
    // the note's prototype sequence at defaults
    expect([0, 0.01, 0.04, 0.08, 0.2, 1].map((kappa) => (runRaw(steer, q({ kappa })).result as any).c_star)).to.deep.equal([6, 1.8, 1.8, 1.2, 1.2, 0.6]);
  });

  it('[trend] the CAA vector aligns better with the true direction as the clusters grow; positives score above negatives (10 seeds)', () => {
    let rising = 0;
    let separated = 0;
    for (let seed = 0; seed < 10; seed++) {
      const cos = [4, 16, 64, 256].map((cluster) => (runRaw(steer, q({ seed, cluster })).result as any).cos_to_true_direction as number);
      if (cos.every((x, i) => i === 0 || x > cos[i - 1]!)) rising++;
      const r = runRaw(steer, q({ seed })).result as any;
      if (r.positive_baseline > 0.5 && r.p0 < 0.5) separated++;
    }
    expect(rising).to.be.at.least(8);
    expect(separated).to.be.at.least(9);
  });
});
