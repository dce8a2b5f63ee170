/**
 * Budgeted stochastic beam search with a Gumbel-top-k frontier (Kool, van Hoof & Welling 2019,
 * arXiv:1903.06059) on a lattice {0..7}^dim holding a sum of Gaussian bumps; the global optimum is
 * found by brute force so the search is held to an exact benchmark (kernels-c §16).
 */
import { defineKernel } from '../kernel-def.js';
import { sampleSeries } from '../../src/lib/numbers.js';
import { int, num } from '../../src/lib/params.js';
import type { Rng } from '../../src/lib/prng.js';

const SIDE = 8;
const BUMPS = 8;

export interface Landscape {
  dim: number;
  heights: number[];
  widths: number[];
  centres: number[][];
}

/** Draw order (stream `landscape`): per bump, height (first = 1), width, centre coordinates. */
export function drawLandscape(dim: number, rng: Rng): Landscape {
  const heights: number[] = [];
  const widths: number[] = [];
  const centres: number[][] = [];
  for (let b = 0; b < BUMPS; b++) {
    heights.push(b === 0 ? 1 : rng.uniform(0.3, 0.9));
    widths.push(rng.uniform(0.8, 2.3));
    centres.push(Array.from({ length: dim }, () => rng.uniform(0, SIDE - 1)));
  }
  return { dim, heights, widths, centres };
}

export function objective(l: Landscape, x: readonly number[]): number {
  let f = 0;
  for (let b = 0; b < BUMPS; b++) {
    let d2 = 0;
    for (let k = 0; k < l.dim; k++) d2 += (x[k]! - l.centres[b]![k]!) ** 2;
    f += l.heights[b]! * Math.exp(-d2 / (2 * l.widths[b]! ** 2));
  }
  return f;
}

export const decode = (index: number, dim: number): number[] => Array.from({ length: dim }, (_, k) => Math.floor(index / SIDE ** k) % SIDE);
const encode = (x: readonly number[]): number => x.reduce((acc, v, k) => acc + v * SIDE ** k, 0);

export default defineKernel({
  id: 's3search/search',
  version: 1,
  input: 'query',
  summary: 'Budgeted stochastic beam search with a Gumbel-top-k frontier on a lattice landscape, held to the brute-force optimum',
  technique: 'stochastic beam search (Gumbel-top-k sampling without replacement)',
  references: ['arXiv:1903.06059'],
  honesty: 'The search and the brute-force benchmark are real; the landscape is a seeded sum of Gaussian bumps.',
  params: {
    dim: int(1, 5, 4).description('dimension of the lattice landscape'),
    budget: int(1, 4096, 64).description('node expansions allowed'),
    frontier: int(1, 64, 6).description('beam (frontier) width'),
    beta: num(0, 1000, 4.0).description('inverse temperature of the Gumbel-top-k frontier'),
  },
  worstCase: { dim: 5, budget: 4096, frontier: 64, beta: 4 },
  run({ dim, budget, frontier, beta }, rng) {
    const land = drawLandscape(dim, rng.stream('landscape'));
    const size = SIDE ** dim;
    const gumbel = rng.stream('gumbel');
    const start = rng.stream('start').int(size);
    const values = new Map<number, number>();
    const best: number[] = [];
    const evaluate = (i: number): void => {
      values.set(i, objective(land, decode(i, dim)));
      best.push(Math.max(best.at(-1) ?? -Infinity, values.get(i)!));
    };
    evaluate(start);
    let beam = [start];
    const beamSizes = [1];
    let rounds = 0;
    while (values.size < budget) {
      const children = new Set<number>();
      for (const b of [...beam].sort((a, c) => a - c)) {
        const x = decode(b, dim);
        for (let k = 0; k < dim; k++) for (const step of [-1, 1]) {
          const y = [...x];
          y[k] = y[k]! + step;
          if (y[k]! < 0 || y[k]! >= SIDE) continue;
          const j = encode(y);
          if (!values.has(j)) children.add(j);
        }
      }
      if (children.size === 0) break;
      rounds++;
      const fresh: number[] = [];
      for (const c of [...children].sort((a, b) => a - b)) {
        if (values.size >= budget) break;
        evaluate(c);
        fresh.push(c);
      }
      const pool = [...new Set([...beam, ...fresh])].sort((a, c) => a - c);
      const keyed = pool.map((i) => ({ i, key: beta * values.get(i)! + gumbel.gumbel() }));
      keyed.sort((a, c) => c.key - a.key || a.i - c.i);
      beam = keyed.slice(0, frontier).map((k) => k.i);
      beamSizes.push(beam.length);
    }
    let globalMax = -Infinity;
    let globalArg = 0;
    for (let i = 0; i < size; i++) {
      const f = objective(land, decode(i, dim));
      if (f > globalMax) {
        globalMax = f;
        globalArg = i;
      }
    }
    let bestIdx = start;
    for (const [i, f] of values) if (f > values.get(bestIdx)! || (f === values.get(bestIdx)! && i < bestIdx)) bestIdx = i;
    const bestValue = values.get(bestIdx)!;
    const series = sampleSeries(best);
    return {
      constants: { lattice_side: SIDE, bumps: BUMPS, moves: '±1 along one axis' },
      result: {
        evaluations: values.size,
        rounds,
        start_point: decode(start, dim),
        best_value: bestValue,
        best_point: decode(bestIdx, dim),
        global_max: globalMax,
        global_argmax: decode(globalArg, dim),
        regret: globalMax - bestValue,
        found_global: bestValue === globalMax,
        best_so_far: series.values,
        best_so_far_index: series.index,
        beam_sizes: beamSizes.slice(0, 256),
        landscape: { heights: land.heights, widths: land.widths, centres: land.centres },
      },
    };
  },
});
