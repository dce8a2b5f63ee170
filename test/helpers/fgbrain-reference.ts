/**
 * Independent references for the fgbrain family (kernels-a 1.4, 1.5), written from the kernel note
 * and not from workers/lib/fgbrain.ts: the Price DAG from the shared stream `fgbrain/graph`, and
 * the leaky integrate-and-fire simulation with a schedule of arrivals keyed by step.
 */
import { RngStreams } from '../../src/lib/prng.js';

export interface Dag {
  n: number;
  /** deps[t]: the earlier nodes t depends on, ascending. */
  deps: number[][];
  indeg: number[];
}

/** Price's model: node t picks min(m, t) distinct earlier nodes, each by one uniform walked over weights indeg + 1. */
export function priceDag(seed: number, n: number, m: number): Dag {
  const rng = new RngStreams(seed, 'unused').shared('fgbrain/graph');
  const indeg = new Array<number>(n).fill(0);
  const deps: number[][] = [[]];
  for (let t = 1; t < n; t++) {
    const picked: number[] = [];
    for (let c = 0; c < Math.min(m, t); c++) {
      const candidates = Array.from({ length: t }, (_, j) => j).filter((j) => !picked.includes(j));
      const weights = candidates.map((j) => indeg[j]! + 1);
      let u = rng.next() * weights.reduce((a, b) => a + b, 0);
      let pick = candidates[candidates.length - 1]!;
      for (let k = 0; k < candidates.length; k++) {
        u -= weights[k]!;
        if (u < 0) {
          pick = candidates[k]!;
          break;
        }
      }
      picked.push(pick);
    }
    picked.sort((a, b) => a - b);
    deps.push(picked);
    for (const j of picked) indeg[j]!++;
  }
  return { n, deps, indeg };
}

export interface LifParams {
  durationMs: number;
  driveMv: number;
  sources: number;
  wSynMv: number;
  bgRateHz: number;
  bgWMv: number;
}

export interface LifRun {
  /** Spike steps per neuron. */
  spikes: number[][];
  steps: number;
  /** V_i after each step (steps × n), for the synchrony and vitals references. */
  trace: number[][];
}

/** LIF per kernels-a 1.5: τ 20 ms, V_th 20 mV, reset 0, refractory 20 steps, delay 15 steps, dt 0.1 ms. */
export function lif(dag: Dag, p: LifParams, seed: number, keepTrace = false): LifRun {
  const bg = new RngStreams(seed, 'unused').shared('fgbrain/fire#background');
  const n = dag.n;
  const steps = Math.round(p.durationMs / 0.1);
  const decay = Math.exp(-0.1 / 20);
  const pending = new Map<number, number[]>(); // step → input per neuron
  const v = new Array<number>(n).fill(0);
  const refr = new Array<number>(n).fill(0);
  const spikes: number[][] = Array.from({ length: n }, () => []);
  const trace: number[][] = [];
  // a spike of j reaches every t that depends on j
  const dependants: number[][] = Array.from({ length: n }, () => []);
  dag.deps.forEach((list, t) => list.forEach((j) => dependants[j]!.push(t)));
  for (let s = 1; s <= steps; s++) {
    const arriving = pending.get(s) ?? new Array<number>(n).fill(0);
    pending.delete(s);
    for (let i = 0; i < n; i++) {
      let input = arriving[i]!;
      if (p.bgRateHz > 0 && bg.next() < (p.bgRateHz * 0.1) / 1000) input += p.bgWMv;
      if (refr[i]! > 0) {
        refr[i]!--;
        continue;
      }
      const vInf = i < p.sources ? p.driveMv : 0;
      v[i] = vInf + (v[i]! - vInf) * decay + input;
      if (v[i]! >= 20) {
        spikes[i]!.push(s);
        v[i] = 0;
        refr[i] = 20;
        if (!pending.has(s + 15)) pending.set(s + 15, new Array<number>(n).fill(0));
        const later = pending.get(s + 15)!;
        for (const t of dependants[i]!) later[t] = later[t]! + p.wSynMv;
      }
    }
    if (keepTrace) trace.push([...v]);
  }
  return { spikes, steps, trace };
}

/** Sylvester's law of inertia: the number of eigenvalues of symmetric `a` below x is the number of negative pivots of LDLᵀ of a − xI. */
export function eigenvaluesBelow(a: number[][], x: number): number {
  const n = a.length;
  const m = a.map((row, i) => row.map((v, j) => v - (i === j ? x : 0)));
  let negative = 0;
  for (let k = 0; k < n; k++) {
    const piv = m[k]![k]!;
    if (piv < 0) negative++;
    for (let i = k + 1; i < n; i++) {
      const f = m[i]![k]! / piv;
      for (let j = k + 1; j < n; j++) m[i]![j] = m[i]![j]! - f * m[k]![j]!;
    }
  }
  return negative;
}

/** All eigenvalues of a small symmetric matrix by bisection on `eigenvaluesBelow` (slow, independent of any eigensolver). */
export function eigenvaluesByBisection(a: number[][], tol = 1e-11): number[] {
  const n = a.length;
  let bound = 0;
  for (const row of a) bound = Math.max(bound, row.reduce((s, v) => s + Math.abs(v), 0));
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    // the (k+1)-th smallest: smallest x with more than k eigenvalues below
    let lo = -bound - 1;
    let hi = bound + 1;
    while (hi - lo > tol) {
      const mid = (lo + hi) / 2;
      if (eigenvaluesBelow(a, mid) > k) hi = mid;
      else lo = mid;
    }
    out.push((lo + hi) / 2);
  }
  return out;
}
