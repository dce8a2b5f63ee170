import { expect } from 'chai';
import hrm from '../../../workers/kernels/hrm-solve.js';
import { RngStreams } from '../../../src/lib/prng.js';
import { runRaw } from '../../helpers/kernels.js';
import { solveLinear } from '../../helpers/linear-solve.js';

const q = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));
const MU = 0.1;

/** The system rebuilt from the note: MGS of the `basis` draws, λ evenly in [1, 2], b from `b`. */
function system(seed: number, n: number) {
  const rng = new RngStreams(seed, 'hrm/solve');
  const bs = rng.stream('basis');
  const A = Array.from({ length: n }, () => Array.from({ length: n }, () => bs.normal()));
  const cols: number[][] = [];
  for (let j = 0; j < n; j++) {
    const v = A.map((row) => row[j]!);
    for (const c of cols) {
      const p = c.reduce((s, x, k) => s + x * v[k]!, 0);
      c.forEach((x, k) => (v[k]! -= p * x));
    }
    const len = Math.hypot(...v);
    cols.push(v.map((x) => x / len));
  }
  const lam = Array.from({ length: n }, (_, i) => (n === 1 ? 1 : 1 + i / (n - 1)));
  const M = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => cols.reduce((s, c, k) => s + c[i]! * lam[k]! * c[j]!, 0)));
  const bStream = rng.stream('b');
  const b = Array.from({ length: n }, () => bStream.normal());
  return { M, b };
}

const nrm = (v: number[]) => Math.hypot(...v);
const mv = (M: number[][], x: number[]) => M.map((row) => row.reduce((s, v, k) => s + v * x[k]!, 0));

/** The two-timescale iteration written directly from the note. */
function reference(seed: number, p: { dim: number; n_cycles: number; t_low: number; lr: number; h_gain: number; tol: number }) {
  const { M, b } = system(seed, p.dim);
  let zL = new Array<number>(p.dim).fill(0);
  let zH = new Array<number>(p.dim).fill(0);
  const trace: { rel: number; first: number; last: number; ratio: number | null }[] = [];
  let halted: number | null = null;
  for (let k = 1; k <= p.n_cycles; k++) {
    const gs: number[] = [];
    for (let t = 0; t < p.t_low; t++) {
      const g = mv(M, zL).map((x, i) => x - b[i]! + MU * (zL[i]! - zH[i]!));
      gs.push(nrm(g));
      zL = zL.map((x, i) => x - p.lr * g[i]!);
    }
    zH = zH.map((x, i) => x + p.h_gain * (zL[i]! - x));
    const rel = nrm(mv(M, zH).map((x, i) => x - b[i]!)) / nrm(b);
    const ratios = gs.slice(1).map((x, t) => x / gs[t]!);
    trace.push({ rel, first: gs[0]!, last: gs.at(-1)!, ratio: ratios.length ? Math.max(...ratios) : null });
    if (rel <= p.tol) {
      halted = k;
      break;
    }
  }
  const xs = solveLinear(M, b);
  return { trace, halted, err: nrm(zH.map((x, i) => x - xs[i]!)) / nrm(xs), xs, zH, b };
}

const DEFAULTS = { dim: 12, n_cycles: 16, t_low: 8, lr: 0.55, h_gain: 0.32, tol: 0.02 };
const close = (a: number, b: number) => expect(Math.abs(a - b)).to.be.at.most(1e-9 * Math.max(1, Math.abs(b)));

describe('kernel hrm/solve', () => {
  it('matches an independent iteration and an independent linear solve', () => {
    for (const [seed, over] of [[42, {}], [7, { dim: 5, t_low: 3, h_gain: 0.8, tol: 1e-6, n_cycles: 60 }], [3, { dim: 1, lr: 0.3 }], [11, { dim: 30, t_low: 1, n_cycles: 40 }]] as const) {
      const p = { ...DEFAULTS, ...over };
      const r = runRaw(hrm, q({ seed, ...p })).result as any;
      const ref = reference(seed, p);
      expect(r.halted_at).to.equal(ref.halted);
      expect(r.cycles_run).to.equal(ref.trace.length);
      expect(r.steps_total).to.equal(ref.trace.length * p.t_low);
      expect([r.trace.length, r.x_star.length, r.z_h.length, r.b.length, r.eigenvalues.length]).to.deep.equal([ref.trace.length, p.dim, p.dim, p.dim, p.dim]);
      expect(r.error_to_reference_reason).to.equal(null); // b ≠ 0 in every case here
      r.trace.forEach((row: any, k: number) => {
        expect(row.cycle).to.equal(k + 1);
        close(row.rel_residual, ref.trace[k]!.rel);
        close(row.l_residual_first, ref.trace[k]!.first);
        close(row.l_residual_last, ref.trace[k]!.last);
        if (ref.trace[k]!.ratio === null) expect(row.l_ratio_max).to.equal(null);
        else close(row.l_ratio_max, ref.trace[k]!.ratio!);
      });
      close(r.error_to_reference, ref.err);
      close(r.final_rel_residual, ref.trace.at(-1)!.rel);
      const n = ref.trace.length;
      if (n >= 2) close(r.residual_ratio_last, ref.trace[n - 1]!.rel / ref.trace[n - 2]!.rel);
      else expect(r.residual_ratio_last).to.equal(null);
      Array.from(r.x_star as ArrayLike<number>).forEach((x, i) => close(x, ref.xs[i]!));
      Array.from(r.z_h as ArrayLike<number>).forEach((x, i) => close(x, ref.zH[i]!));
      Array.from(r.b as ArrayLike<number>).forEach((x, i) => close(x, ref.b[i]!));
      Array.from(r.eigenvalues as ArrayLike<number>).forEach((x, i) => close(x, p.dim === 1 ? 1 : 1 + i / (p.dim - 1)));
    }
  });

  it('rates are the closed forms; L residuals contract by at most rho_L per step within every cycle', () => {
    // configurations whose L residuals stay far above the float64 floor (~1e-15, where rounding noise
    // makes ratios meaningless, e.g. t_low = 32 at lr = 0.55)
    for (const over of [{}, { lr: 0.9, t_low: 12 }, { lr: 0.2, h_gain: 0.9, tol: 1e-6, n_cycles: 40 }, { dim: 40, t_low: 12 }, { dim: 64, lr: 0.05, t_low: 32 }]) {
      const p = { ...DEFAULTS, ...over };
      const r = runRaw(hrm, q(p)).result as any;
      const rhoL = Math.max(Math.abs(1 - p.lr * (1 + MU)), Math.abs(1 - p.lr * (2 + MU)));
      expect(r.rho_L).to.be.closeTo(rhoL, 1e-15);
      expect(r.rho_H).to.be.closeTo(1 - p.h_gain / (1 + MU), 1e-15);
      for (const row of r.trace) {
        expect(row.l_residual_last).to.be.above(1e-11);
        expect(row.l_ratio_max).to.be.at.most(r.rho_L + 1e-12);
        expect(row.l_residual_last).to.be.at.most(row.l_residual_first * r.rho_L ** (p.t_low - 1) * (1 + 1e-9));
      }
    }
    const def = runRaw(hrm).result as any;
    expect(def.rho_L).to.be.closeTo(0.395, 1e-12);
    expect(def.rho_H).to.be.closeTo(0.709, 1e-3);
  });

  it('halting implies residual ≤ tol and error ≤ κ·tol = 2·tol; larger tol never halts later', () => {
    for (let seed = 0; seed < 10; seed++) {
      let prevHalt = Infinity;
      for (const tol of [1e-8, 1e-4, 1e-3, 0.01, 0.02, 0.1, 0.5, 1]) {
        const r = runRaw(hrm, q({ seed, tol, n_cycles: 80 })).result as any;
        if (r.halted_at !== null) {
          expect(r.final_rel_residual).to.be.at.most(tol);
          expect(r.error_to_reference).to.be.at.most(2 * tol);
          expect(r.trace.at(-1).rel_residual).to.equal(r.final_rel_residual);
          r.trace.slice(0, -1).forEach((row: any) => expect(row.rel_residual).to.be.above(tol));
        }
        const h = r.halted_at ?? Infinity;
        expect(h).to.be.at.most(prevHalt);
        prevHalt = h;
      }
    }
    expect((runRaw(hrm).result as any).halted_at).to.equal(11);
  });

  it('[trend] hierarchical convergence: L residual spikes after every H update; the cycle ratio approaches rho_H (10 seeds)', () => {
    let spiking = 0;
    let nearRho = 0;
    for (let seed = 0; seed < 10; seed++) {
      const r = runRaw(hrm, q({ seed })).result as any;
      expect(r.rho_L ** (DEFAULTS.t_low - 1)).to.be.below(r.rho_H);
      const t = r.trace as any[];
      if (t.slice(1).every((row, k) => row.l_residual_first > t[k]!.l_residual_last)) spiking++;
      const long = runRaw(hrm, q({ seed, tol: 1e-12, n_cycles: 60 })).result as any;
      if (Math.abs(long.residual_ratio_last - long.rho_H) < 0.02) nearRho++;
    }
    expect(spiking).to.be.at.least(9);
    expect(nearRho).to.be.at.least(9);
  });
});
