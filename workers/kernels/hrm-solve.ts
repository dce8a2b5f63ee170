/**
 * Hierarchical Reasoning Model dynamics (Wang et al. 2025, arXiv:2506.21734): a fast low-level
 * module L takes t_low steps per cycle while a slow high-level module H updates once per cycle from
 * L's final state ("hierarchical convergence": L settles to an H-dependent equilibrium, H moves, L's
 * residual spikes and settles again), halting adaptively when done. Design: kernels-c §6.
 *
 * Concrete task, so the answer is checkable: L runs gradient steps on
 * ½xᵀMx − bᵀx + (μ/2)‖x − z_H‖² for an SPD M (the proximal term conditions L on H) and H moves a
 * fraction h_gain toward L's result: an inexact proximal-point iteration whose only fixed point is
 * x* = M⁻¹b. The paper learns halting with Q-learning; here halting is a residual tolerance.
 */
import { defineKernel } from '../kernel-def.js';
import { cholesky, choleskySolve, gramSchmidt, norm, type Matrix } from '../lib/linalg.js';
import { int, num } from '../../src/lib/params.js';

const MU = 0.1;
const LAMBDA_MIN = 1;
const LAMBDA_MAX = 2;

/** λ_i evenly spaced in [1, 2] (λ = 1 when dim = 1). */
export function hrmEigenvalues(dim: number): Float64Array {
  return Float64Array.from({ length: dim }, (_, i) => (dim === 1 ? LAMBDA_MIN : LAMBDA_MIN + ((LAMBDA_MAX - LAMBDA_MIN) * i) / (dim - 1)));
}

/** g = M z_L − b + μ(z_L − z_H), the gradient of L's proximal problem; returns ‖g‖. */
function lowGradient(M: Float64Array, b: Float64Array, zL: Float64Array, zH: Float64Array, g: Float64Array, n: number): number {
  let sq = 0;
  for (let i = 0; i < n; i++) {
    const row = i * n;
    // two interleaved partial sums halve the floating-point add dependency chain
    let s0 = 0;
    let s1 = 0;
    let k = 0;
    for (; k + 1 < n; k += 2) {
      s0 += M[row + k]! * zL[k]!;
      s1 += M[row + k + 1]! * zL[k + 1]!;
    }
    if (k < n) s0 += M[row + k]! * zL[k]!;
    const s = s0 + s1 - b[i]! + MU * (zL[i]! - zH[i]!);
    g[i] = s;
    sq += s * s;
  }
  return Math.sqrt(sq);
}

export default defineKernel({
  id: 'hrm/solve',
  version: 1,
  input: 'query',
  summary: 'Hierarchical Reasoning Model two-timescale dynamics (fast L steps, slow H updates, residual-based halting) solving an SPD system, with predicted contraction rates',
  technique: 'Hierarchical Reasoning Model (two coupled recurrent modules, hierarchical convergence, adaptive halting)',
  references: ['arXiv:2506.21734'],
  honesty: 'The two-timescale recurrence, the halting rule and the Cholesky reference are real; the modules are fixed gradient/proximal updates on a seeded synthetic SPD system, not trained networks, and halting uses a residual tolerance instead of the learned Q-head.',
  params: {
    dim: int(1, 64, 12).description('dimension of the SPD system solved'),
    n_cycles: int(1, 256, 16).description('slow (H) updates'),
    t_low: int(1, 32, 8).description('fast (L) steps per slow update'),
    lr: num(1e-4, 0.9, 0.55).description('step size of the fast module'),
    h_gain: num(1e-4, 1, 0.32).description('gain of the slow update'),
    tol: num(1e-12, 1, 0.02).description('residual below which the model halts'),
  },
  // h_gain = 1e-4 keeps H from converging, so all 256 cycles run
  worstCase: { dim: 64, n_cycles: 256, t_low: 32, lr: 0.9, h_gain: 1e-4, tol: 1e-12 },
  run({ dim: n, n_cycles, t_low, lr, h_gain, tol }, rng) {
    // draws: basis (dim×dim normals, row-major, stream `basis`), then b (dim normals, stream `b`)
    const G: Matrix = { rows: n, cols: n, data: rng.stream('basis').normals(n * n) };
    const U = gramSchmidt(G).q.data; // columns orthonormal
    const lambda = hrmEigenvalues(n);
    const b = rng.stream('b').normals(n);
    // M = U diag(λ) Uᵀ
    const M = new Float64Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j <= i; j++) {
        let s = 0;
        for (let k = 0; k < n; k++) s += U[i * n + k]! * lambda[k]! * U[j * n + k]!;
        M[i * n + j] = s;
        M[j * n + i] = s;
      }
    }
    const xStar = choleskySolve(cholesky({ rows: n, cols: n, data: M }), b);
    const bNorm = norm(b);

    const zL = new Float64Array(n);
    const zH = new Float64Array(n);
    const g = new Float64Array(n);
    const r = new Float64Array(n);
    const relRes = (): number => {
      for (let i = 0; i < n; i++) {
        let s = -b[i]!;
        for (let k = 0; k < n; k++) s += M[i * n + k]! * zH[k]!;
        r[i] = s;
      }
      return bNorm > 0 ? norm(r) / bNorm : 0;
    };

    const trace: { cycle: number; rel_residual: number; l_residual_first: number; l_residual_last: number; l_ratio_max: number | null }[] = [];
    let haltedAt: number | null = null;
    let steps = 0;
    let finalRel = relRes();
    for (let cycle = 1; cycle <= n_cycles; cycle++) {
      let first = 0;
      let prev = 0;
      let ratioMax: number | null = null;
      for (let t = 0; t < t_low; t++) {
        const gn = lowGradient(M, b, zL, zH, g, n);
        if (t === 0) first = gn;
        else if (prev > 0) ratioMax = Math.max(ratioMax ?? 0, gn / prev);
        prev = gn;
        for (let i = 0; i < n; i++) zL[i] = zL[i]! - lr * g[i]!;
        steps++;
      }
      for (let i = 0; i < n; i++) zH[i] = zH[i]! + h_gain * (zL[i]! - zH[i]!);
      finalRel = relRes();
      trace.push({ cycle, rel_residual: finalRel, l_residual_first: first, l_residual_last: prev, l_ratio_max: ratioMax });
      if (finalRel <= tol) {
        haltedAt = cycle;
        break;
      }
    }

    const diff = zH.map((x, i) => x - xStar[i]!);
    const xNorm = norm(xStar);
    let rhoL = 0;
    let rhoH = 0;
    for (const l of lambda) {
      rhoL = Math.max(rhoL, Math.abs(1 - lr * (l + MU)));
      rhoH = Math.max(rhoH, 1 - (h_gain * l) / (l + MU));
    }
    const last = trace.length;
    return {
      constants: { mu: MU, eigenvalue_range: [LAMBDA_MIN, LAMBDA_MAX], condition_number: lambda[n - 1]! / lambda[0]!, init: 'z_H = z_L = 0, L not reset between cycles' },
      result: {
        halted_at: haltedAt,
        cycles_run: last,
        steps_total: steps,
        final_rel_residual: finalRel,
        error_to_reference: xNorm > 0 ? norm(diff) / xNorm : null,
        error_to_reference_reason: xNorm > 0 ? null : 'b = 0: x* = 0, relative error undefined',
        trace,
        rho_L: rhoL,
        rho_H: rhoH,
        residual_ratio_last: last >= 2 && trace[last - 2]!.rel_residual > 0 ? trace[last - 1]!.rel_residual / trace[last - 2]!.rel_residual : null,
        eigenvalues: lambda,
        b,
        x_star: xStar,
        z_h: zH,
      },
      checks: {
        halted_within_tol: haltedAt === null || finalRel <= tol,
        halted_error_within_kappa_tol: haltedAt === null || norm(diff) <= (lambda[n - 1]! / lambda[0]!) * tol * xNorm * (1 + 1e-9),
      },
    };
  },
});
