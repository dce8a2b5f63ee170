/**
 * Nested Learning's Continuum Memory System schedule (Behrouz, Razaviyayn, Zhong & Mirrokni 2025,
 * arXiv:2512.24695): a chain of memory levels, level ℓ updated every C_ℓ = base^ℓ ticks with the
 * gradient summed over its chunk, tracking a drifting target; compared with a single level.
 */
import { defineKernel } from '../kernel-def.js';
import { sampleSeries } from '../../src/lib/numbers.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

const D = 8;
const DIVERGED = 1e12;

interface Run {
  losses: Float64Array;
  updates: number[];
  firstUpdates: number[][];
  change: number[];
  diverged: boolean;
}

/** Draws: θ0 (d normals, `theta0`), then one ξ_t (d normals) per tick (`walk`), independent of drift. */
function simulate(levels: number, ticks: number, base: number, eta0: number, decay: number, drift: number, theta0: Rng, walk: Rng): Run {
  const theta = theta0.normals(D);
  const m = Array.from({ length: levels }, () => new Float64Array(D));
  const acc = Array.from({ length: levels }, () => new Float64Array(D));
  const chunk = Array.from({ length: levels }, (_, l) => base ** l);
  const eta = Array.from({ length: levels }, (_, l) => eta0 * decay ** l);
  const updates = new Array<number>(levels).fill(0);
  const firstUpdates: number[][] = Array.from({ length: levels }, () => []);
  const change = new Array<number>(levels).fill(0);
  const losses = new Float64Array(ticks);
  let diverged = false;
  for (let t = 0; t < ticks; t++) {
    const g = new Float64Array(D);
    let loss = 0;
    for (let k = 0; k < D; k++) {
      let y = 0;
      for (let l = 0; l < levels; l++) y += m[l]![k]!;
      g[k] = y - theta[k]!;
      loss += 0.5 * g[k]! ** 2;
    }
    losses[t] = loss;
    if (loss > DIVERGED) {
      diverged = true;
      return { losses: losses.subarray(0, t + 1), updates, firstUpdates, change, diverged };
    }
    for (let l = 0; l < levels; l++) {
      for (let k = 0; k < D; k++) acc[l]![k] = acc[l]![k]! + g[k]!;
      if ((t + 1) % chunk[l]! === 0) {
        let sq = 0;
        for (let k = 0; k < D; k++) {
          const step = eta[l]! * acc[l]![k]!;
          m[l]![k] = m[l]![k]! - step;
          sq += step * step;
          acc[l]![k] = 0;
        }
        change[l] = change[l]! + Math.sqrt(sq);
        updates[l]!++;
        if (firstUpdates[l]!.length < 8) firstUpdates[l]!.push(t);
      }
    }
    const xi = walk.normals(D);
    for (let k = 0; k < D; k++) theta[k] = theta[k]! + drift * xi[k]!;
  }
  return { losses, updates, firstUpdates, change, diverged };
}

const steady = (losses: Float64Array): number => {
  const half = losses.subarray(Math.floor(losses.length / 2));
  return half.length ? half.reduce((a, b) => a + b, 0) / half.length : 0;
};

export default defineKernel({
  id: 'nested/schedule',
  version: 1,
  input: 'query',
  summary: 'Continuum Memory System schedule: memory levels updated every base^ℓ ticks with chunk-summed gradients, against one level',
  technique: 'Nested Learning continuum memory system (multi-frequency chunked updates)',
  references: ['arXiv:2512.24695'],
  honesty: 'The update schedule and its dynamics are real; the drifting target is a seeded random walk, not a trained model.',
  params: {
    levels: int(1, 12, 5).description('memory levels'),
    ticks: int(1, 16384, 512).description('simulated ticks'),
    base: int(1, 8, 2).description('level ℓ updates every base^ℓ ticks'),
    eta0: num(1e-4, 2, 0.6).description('learning rate of level 0'),
    decay: num(0, 1, 0.5).description('learning-rate decay per level'),
    drift: num(0, 1, 0.01).description('drift of the target per tick'),
  },
  worstCase: { levels: 12, ticks: 16384, base: 1, eta0: 0.6, decay: 0.5, drift: 0.01 },
  run({ levels, ticks, base, eta0, decay, drift }, rng) {
    const multi = simulate(levels, ticks, base, eta0, decay, drift, rng.stream('theta0'), rng.stream('walk'));
    const single = simulate(1, ticks, base, eta0, decay, drift, rng.stream('theta0'), rng.stream('walk'));
    const curve = sampleSeries(multi.losses);
    return {
      constants: { memory_width: D, divergence_threshold: DIVERGED },
      result: {
        per_level: Array.from({ length: levels }, (_, l) => ({ level: l, chunk: base ** l, eta: eta0 * decay ** l, updates: multi.updates[l]!, first_update_ticks: multi.firstUpdates[l]!, total_param_change: multi.change[l]! })),
        loss_curve: curve.values,
        loss_curve_ticks: curve.index,
        final_loss: multi.losses[multi.losses.length - 1]!,
        steady_mse: steady(multi.losses),
        steady_mse_single_level: steady(single.losses),
        diverged: multi.diverged,
      },
    };
  },
});
