/**
 * Leaky integrate-and-fire spiking on the fgbrain DAG (kernels-a 1.5; Dayan & Abbott 2001 ch. 5,
 * Gerstner & Kistler 2002): exact exponential decay per step, threshold, reset, refractory period,
 * and a 1.5 ms synaptic delay along dependency edges (foundations drive their dependants).
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, LIF, simulateFire } from '../lib/fgbrain.js';
import { fireParams, fireWorstCase, SOURCES_RULE, sourcesWithinN, toFireParams } from './fgbrain-fire-params.js';

const RASTER_CAP = 4000;

export default defineKernel({
  id: 'fgbrain/fire',
  version: 1,
  input: 'query',
  summary: 'Leaky integrate-and-fire spiking on the dependency DAG with synaptic delay; checked against the closed-form ISI',
  technique: 'leaky integrate-and-fire neurons, exact exponential integration, refractory period, delayed synapses',
  references: ['isbn:9780262041997', 'doi:10.1017/CBO9780511815706'],
  honesty: 'The neuron model and simulation are real; the network is the seeded synthetic fgbrain graph.',
  params: fireParams,
  rules: [SOURCES_RULE],
  constraints: sourcesWithinN,
  worstCase: fireWorstCase,
  run(p, rng) {
    // draws: substrate from the shared stream fgbrain/graph; background from fgbrain/fire (one uniform per neuron per step when bg_rate_hz > 0)
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    const { spikes } = simulateFire(s, toFireParams(p), rng.shared('fgbrain/fire#background'));
    const ms = (step: number): number => step * LIF.dtMs;
    const all = spikes.flatMap((list, id) => list.map((step) => [step, id] as [number, number])).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const bins = Math.ceil(p.duration_ms / 10);
    const pop = new Array<number>(bins).fill(0);
    for (const [step] of all) pop[Math.min(bins - 1, Math.floor(ms(step) / 10))]!++;
    const T = p.drive_mv > LIF.vThMv ? LIF.tauMs * Math.log(p.drive_mv / (p.drive_mv - LIF.vThMv)) : null;
    return {
      constants: { tau_ms: LIF.tauMs, v_th_mv: LIF.vThMv, v_reset_mv: 0, tau_ref_ms: LIF.tauRefMs, dt_ms: LIF.dtMs, synaptic_delay_ms: LIF.delaySteps * LIF.dtMs },
      result: {
        neurons: spikes.map((list, id) => ({ id, spikes: list.length, rate_hz: list.length / (p.duration_ms / 1000), first_spike_ms: list.length ? ms(list[0]!) : null })),
        raster: all.slice(0, RASTER_CAP).map(([step, id]) => [ms(step), id]),
        raster_truncated: all.length > RASTER_CAP,
        population_rate_hz: pop.map((c) => c / p.n / 0.01),
        // a spike of neuron j reaches every dependant of j: its synaptic out-degree is its DAG in-degree
        totals: { spikes: all.length, active_neurons: spikes.filter((l) => l.length).length, synaptic_events: spikes.reduce((acc, l, id) => acc + l.length * s.indeg[id]!, 0) },
        theory: { root_isi_ms: T === null ? null : LIF.tauRefMs + T, root_first_spike_ms: T },
      },
    };
  },
});
