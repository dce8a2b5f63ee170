/**
 * (1+λ) evolution strategy with Rechenberg's 1/5th success rule (Beyer & Schwefel 2002) evolving
 * the weights of a linear readout; the landscape is least squares, so the exact optimum (Cholesky
 * on AᵀA) bounds every generation from below (kernels-a 2.6).
 */
import { defineKernel } from '../kernel-def.js';
import { cholesky, choleskySolve, zeros } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';

const HISTORY_CAP = 200;

export default defineKernel({
  id: 'fgbrain/evolve',
  version: 1,
  input: 'request',
  summary: '(1+λ)-ES with the 1/5th success rule fitting a linear readout, held to the exact least-squares optimum',
  technique: 'elitist (1+λ) evolution strategy, Rechenberg 1/5th rule step-size adaptation',
  references: ['doi:10.1023/A:1015059928466'],
  honesty: 'The evolution strategy and the least-squares benchmark are real; the design matrix, target and noise are seeded synthetic draws.',
  params: {
    dim: int(2, 32, 16).description('dimension of the linear readout being fitted'),
    samples: int(2, 256, 64).description('training samples (at least dim)'),
    lambda: int(1, 16, 8).description('λ: offspring per generation of the (1+λ)-ES'),
    generations: int(1, 600, 400).description('generations of the evolution strategy'),
    sigma0: num(0.001, 10, 1.0).description('initial mutation step size'),
    noise: num(0, 1, 0.1).description('standard deviation of the target noise'),
  },
  rules: ['samples must be at least dim'],
  constraints: (p) => (p.samples < p.dim ? [{ param: 'samples', msg: 'samples must be at least dim' }] : []),
  worstCase: { dim: 32, samples: 256, lambda: 16, generations: 600 },
  run(p, rng) {
    const { dim, samples } = p;
    // draws, stream `problem`: A row-major, w*, then noise; stream `search`: offspring normals in order
    const prob = rng.stream('problem');
    const A = prob.normals(samples * dim);
    const wStar = prob.normals(dim);
    const y = new Float64Array(samples);
    for (let r = 0; r < samples; r++) {
      let s = 0;
      for (let c = 0; c < dim; c++) s += A[r * dim + c]! * wStar[c]!;
      y[r] = s + p.noise * prob.normal();
    }
    const AtA = zeros(dim, dim);
    const Aty = new Float64Array(dim);
    let yty = 0;
    for (let r = 0; r < samples; r++) {
      yty += y[r]! * y[r]!;
      for (let i = 0; i < dim; i++) {
        Aty[i] = Aty[i]! + A[r * dim + i]! * y[r]!;
        for (let j = 0; j < dim; j++) AtA.data[i * dim + j] = AtA.data[i * dim + j]! + A[r * dim + i]! * A[r * dim + j]!;
      }
    }
    const f = (w: ArrayLike<number>): number => {
      let quad = 0;
      let lin = 0;
      for (let i = 0; i < dim; i++) {
        let row = 0;
        for (let j = 0; j < dim; j++) row += AtA.data[i * dim + j]! * w[j]!;
        quad += w[i]! * row;
        lin += w[i]! * Aty[i]!;
      }
      return (quad - 2 * lin + yty) / samples;
    };
    const wLs = choleskySolve(cholesky(AtA), Aty);
    const fStar = f(wLs);
    const search = rng.stream('search');
    let parent: Float64Array = new Float64Array(dim);
    let fParent = f(parent);
    const fInitial = fParent;
    let sigma = p.sigma0;
    let successes = 0;
    const history: { gen: number; f: number; sigma: number; success: boolean }[] = [];
    for (let g = 1; g <= p.generations; g++) {
      let best = parent;
      let fBest = Infinity;
      for (let k = 0; k < p.lambda; k++) {
        const child = parent.map((x) => x + sigma * search.normal());
        const fc = f(child);
        if (fc < fBest) {
          fBest = fc;
          best = child;
        }
      }
      const success = fBest < fParent;
      if (success) {
        parent = best;
        fParent = fBest;
        successes++;
      }
      sigma *= Math.exp(((success ? 1 : 0) - 0.2) / (0.8 * (1 + dim / 2)));
      history.push({ gen: g, f: fParent, sigma, success });
    }
    const step = Math.max(1, Math.ceil(history.length / HISTORY_CAP));
    const sampled = history.filter((_, i) => i % step === 0 || i === history.length - 1);
    let dist = 0;
    for (let i = 0; i < dim; i++) dist += (parent[i]! - wLs[i]!) ** 2;
    let resid = 0;
    let atyNorm = 0;
    for (let i = 0; i < dim; i++) {
      let row = 0;
      for (let j = 0; j < dim; j++) row += AtA.data[i * dim + j]! * wLs[j]!;
      resid += (row - Aty[i]!) ** 2;
      atyNorm += Aty[i]! ** 2;
    }
    return {
      constants: { one_fifth_target: 0.2, sigma_damping: '0.8·(1 + dim/2)', history_cap: HISTORY_CAP },
      result: {
        f_star: fStar,
        f_initial: fInitial,
        f_final: fParent,
        gap: fInitial > fStar ? (fParent - fStar) / (fInitial - fStar) : 0,
        history: sampled,
        history_truncated: sampled.length < history.length,
        success_rate: successes / p.generations,
        distance_to_optimum: Math.sqrt(dist),
        w_ls: wLs,
      },
      checks: { optimum_residual_rel: Math.sqrt(resid) / Math.max(1e-300, Math.sqrt(atyNorm)), never_below_optimum: history.every((h) => h.f >= fStar - 1e-12) },
    };
  },
});
