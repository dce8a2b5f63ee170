/**
 * Vital signs of the spiking fgbrain network (kernels-a 2.4): rates, ISI CV, Fano factor of
 * population counts, the synchrony measure χ (Golomb 2007) and the avalanche branching ratio
 * (Beggs & Plenz 2003), from the same simulation as /fgbrain/fire.
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, LIF, simulateFire, undirected } from '../lib/fgbrain.js';
import { jacobiEigen, zeros } from '../lib/linalg.js';
import { components } from './fgbrain-graph.js';
import { fireParams, fireWorstCase, SOURCES_RULE, sourcesWithinN, toFireParams } from './fgbrain-fire-params.js';

const BIN_STEPS = 100; // 10 ms
const AVALANCHE_STEPS = 15; // 1.5 ms

const popStats = (xs: number[]): { mean: number; variance: number } => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, variance: xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length };
};

export function binCounts(spikes: number[][], steps: number, width: number): number[] {
  const out = new Array<number>(Math.ceil(steps / width)).fill(0);
  for (const list of spikes) for (const s of list) out[Math.min(out.length - 1, Math.floor((s - 1) / width))]!++;
  return out;
}

export default defineKernel({
  id: 'fgbrain/vitals',
  version: 1,
  input: 'request',
  summary: 'Vital signs of the spiking graph: rates, ISI CV, Fano factor, synchrony χ, branching ratio, graph connectivity',
  technique: 'population statistics of a LIF network: ISI CV, Fano factor, Golomb synchrony, avalanche branching ratio',
  references: ['doi:10.4249/scholarpedia.1347', 'doi:10.1523/JNEUROSCI.23-35-11167.2003'],
  honesty: 'The statistics are computed from a real simulation; the network and its inputs are seeded synthetic data.',
  params: fireParams,
  rules: [SOURCES_RULE],
  constraints: sourcesWithinN,
  worstCase: fireWorstCase,
  run(p, rng) {
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    const sim = simulateFire(s, toFireParams(p), rng.shared('fgbrain/fire#background'));
    const { spikes, steps } = sim;
    const total = spikes.reduce((a, l) => a + l.length, 0);
    const durS = p.duration_ms / 1000;
    const active = spikes.filter((l) => l.length > 0).length;
    const cvs = spikes.map((l) => {
      if (l.length < 3) return null;
      const isi = l.slice(1).map((x, i) => x - l[i]!);
      const { mean, variance } = popStats(isi);
      return Math.sqrt(variance) / mean;
    });
    const definedCvs = cvs.filter((c): c is number => c !== null);
    const counts = binCounts(spikes, steps, BIN_STEPS);
    const c10 = popStats(counts);
    // χ² = Var_t(V̄) / mean_i Var_t(V_i)
    const varMean = sim.sumMean2 / steps - (sim.sumMean / steps) ** 2;
    let meanVar = 0;
    for (let i = 0; i < p.n; i++) meanVar += sim.sumV2[i]! / steps - (sim.sumV[i]! / steps) ** 2;
    meanVar /= p.n;
    const chi = meanVar > 0 ? Math.sqrt(Math.max(0, varMean) / meanVar) : null;
    const av = binCounts(spikes, steps, AVALANCHE_STEPS);
    const ratios: number[] = [];
    for (let t = 0; t + 1 < av.length; t++) if (av[t]! > 0) ratios.push(av[t + 1]! / av[t]!);
    const onlySources = spikes.every((l, i) => l.length === 0 || i < p.sources);
    const status = total === 0 ? 'silent' : onlySources ? 'source-only' : active / p.n >= 0.5 ? 'propagating' : 'partial';
    const adj = undirected(s);
    const L = zeros(p.n, p.n);
    adj.forEach((list, i) => {
      L.data[i * p.n + i] = list.length;
      for (const j of list) L.data[i * p.n + j] = L.data[i * p.n + j]! - 1;
    });
    return {
      constants: { bin_ms: BIN_STEPS * LIF.dtMs, avalanche_bin_ms: AVALANCHE_STEPS * LIF.dtMs, cv_min_spikes: 3 },
      result: {
        rates: { mean_hz: total / p.n / durS, active_fraction: active / p.n },
        spike_totals: { spikes: total, per_neuron: spikes.map((l) => l.length) },
        isi_cv: { mean: definedCvs.length ? definedCvs.reduce((a, b) => a + b, 0) / definedCvs.length : null, root: cvs[0] ?? null },
        fano: total > 0 && c10.mean > 0 ? c10.variance / c10.mean : null,
        synchrony_chi: total > 0 ? chi : null,
        branching_ratio: ratios.length ? ratios.reduce((a, b) => a + b, 0) / ratios.length : null,
        population_counts_10ms: counts,
        graph: { components: components(adj), lambda2: jacobiEigen(L).values[1] ?? 0 },
        status,
      },
    };
  },
});
