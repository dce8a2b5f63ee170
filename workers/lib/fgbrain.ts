/**
 * The fgbrain substrate (kernels-a 1.4): a dependency DAG grown by Price's cumulative-advantage
 * model (each new node t depends on min(m, t) earlier nodes, chosen with weight indeg + 1), always
 * drawn from the shared stream `fgbrain/graph` so every fgbrain route sees one graph for the same
 * (seed, n, m). And the leaky integrate-and-fire simulation on it (kernels-a 1.5).
 */
import type { Rng } from '../../src/lib/prng.js';

export const ATTACHMENT_OFFSET = 1;

export interface Substrate {
  n: number;
  /** deps[t] = sorted earlier nodes t depends on (edge t → j, j < t). */
  deps: number[][];
  indeg: Int32Array;
  outdeg: Int32Array;
}

export function buildSubstrate(n: number, m: number, rng: Rng): Substrate {
  const indeg = new Int32Array(n);
  const outdeg = new Int32Array(n);
  const deps: number[][] = [[]];
  for (let t = 1; t < n; t++) {
    const chosen = new Set<number>();
    const k = Math.min(m, t);
    for (let c = 0; c < k; c++) {
      let total = 0;
      for (let j = 0; j < t; j++) if (!chosen.has(j)) total += indeg[j]! + ATTACHMENT_OFFSET;
      let u = rng.next() * total;
      let pick = -1;
      for (let j = 0; j < t; j++) {
        if (chosen.has(j)) continue;
        u -= indeg[j]! + ATTACHMENT_OFFSET;
        if (u < 0) {
          pick = j;
          break;
        }
      }
      if (pick < 0) for (let j = t - 1; j >= 0; j--) if (!chosen.has(j)) { pick = j; break; } // float rounding
      chosen.add(pick);
    }
    const list = [...chosen].sort((a, b) => a - b);
    deps.push(list);
    // in-degrees change only after all of t's choices
    for (const j of list) indeg[j]!++;
    outdeg[t] = list.length;
  }
  return { n, deps, indeg, outdeg };
}

/** Undirected adjacency lists (each dependency edge once in both directions). */
export function undirected(s: Substrate): number[][] {
  const adj: number[][] = Array.from({ length: s.n }, () => []);
  s.deps.forEach((list, t) => list.forEach((j) => {
    adj[t]!.push(j);
    adj[j]!.push(t);
  }));
  return adj;
}

export const LIF = { tauMs: 20, vThMv: 20, tauRefMs: 2, dtMs: 0.1, delaySteps: 15, refSteps: 20 } as const;

export interface FireParams {
  durationMs: number;
  driveMv: number;
  sources: number;
  wSynMv: number;
  bgRateHz: number;
  bgWMv: number;
}

export interface FireResult {
  /** spikes[i] = spike steps of neuron i, ascending. */
  spikes: number[][];
  steps: number;
  /** Membrane sums over all steps (for synchrony): Σ V_i, Σ V_i², Σ V̄, Σ V̄². */
  sumV: Float64Array;
  sumV2: Float64Array;
  sumMean: number;
  sumMean2: number;
}

/**
 * Exact-decay LIF on the DAG: a dependency t → j is a synapse j → t with a 1.5 ms delay.
 * Background input draws one uniform per neuron per step from `bg` (only when bgRateHz > 0).
 */
export function simulateFire(s: Substrate, p: FireParams, bg: Rng): FireResult {
  const { n } = s;
  const post: number[][] = Array.from({ length: n }, () => []);
  s.deps.forEach((list, t) => list.forEach((j) => post[j]!.push(t)));
  const steps = Math.round(p.durationMs / LIF.dtMs);
  const decay = Math.exp(-LIF.dtMs / LIF.tauMs);
  const slots = LIF.delaySteps + 1;
  const ring = Array.from({ length: slots }, () => new Float64Array(n));
  const v = new Float64Array(n);
  const refractory = new Int32Array(n);
  const spikes: number[][] = Array.from({ length: n }, () => []);
  const sumV = new Float64Array(n);
  const sumV2 = new Float64Array(n);
  let sumMean = 0;
  let sumMean2 = 0;
  const pBg = (p.bgRateHz * LIF.dtMs) / 1000;
  for (let step = 1; step <= steps; step++) {
    const arriving = ring[step % slots]!;
    for (let i = 0; i < n; i++) {
      let input = arriving[i]!;
      arriving[i] = 0;
      if (p.bgRateHz > 0 && bg.next() < pBg) input += p.bgWMv;
      if (refractory[i]! > 0) {
        refractory[i]!--;
        continue;
      }
      const vInf = i < p.sources ? p.driveMv : 0;
      v[i] = vInf + (v[i]! - vInf) * decay + input;
      if (v[i]! >= LIF.vThMv) {
        spikes[i]!.push(step);
        v[i] = 0;
        refractory[i] = LIF.refSteps;
        const target = ring[(step + LIF.delaySteps) % slots]!;
        for (const q of post[i]!) target[q] = target[q]! + p.wSynMv;
      }
    }
    let mean = 0;
    for (let i = 0; i < n; i++) {
      sumV[i] = sumV[i]! + v[i]!;
      sumV2[i] = sumV2[i]! + v[i]! * v[i]!;
      mean += v[i]!;
    }
    mean /= n;
    sumMean += mean;
    sumMean2 += mean * mean;
  }
  return { spikes, steps, sumV, sumV2, sumMean, sumMean2 };
}
