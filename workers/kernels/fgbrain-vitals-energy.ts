/**
 * Metabolic energy budget of the spiking fgbrain network (kernels-a 2.5), bottom-up in ATP
 * (Attwell & Laughlin 2001; revised action-potential share in Howarth, Gleeson & Attwell 2012):
 * ATP = spikes·a_s + synaptic events·a_y + neuron-seconds·a_r, joules = ATP·j.
 */
import { defineKernel } from '../kernel-def.js';
import { buildSubstrate, simulateFire } from '../lib/fgbrain.js';
import { num } from '../../src/lib/params.js';
import { fireParams, fireWorstCase, SOURCES_RULE, sourcesWithinN, toFireParams } from './fgbrain-fire-params.js';

/** Defaults from the 2001 split of 3.29e9 ATP/neuron/s at 4 Hz; every one can be overridden. */
export const ATP_DEFAULTS = {
  atp_per_spike: (0.47 * 3.29e9) / 4, // 47 % action potentials
  atp_per_synaptic_event: 1.4e5 * 0.25, // ATP per vesicle × release probability
  atp_rest_per_neuron_s: 0.13 * 3.29e9, // 13 % resting potential
  joule_per_atp: 55e3 / 6.02214076e23, // 55 kJ/mol
};

export default defineKernel({
  id: 'fgbrain/vitals/energy',
  version: 1,
  input: 'request',
  summary: 'Metabolic ATP and energy budget of the spiking graph (spikes, synaptic events, resting potential)',
  technique: 'bottom-up ATP budget for signalling in grey matter',
  references: ['doi:10.1097/00004647-200110000-00001', 'doi:10.1038/jcbfm.2012.35'],
  honesty: 'The accounting is exact for the simulated counts; the coefficients are published estimates (echoed and overridable), the network is synthetic.',
  params: {
    ...fireParams,
    atp_per_spike: num(0, 1e10, ATP_DEFAULTS.atp_per_spike).description('ATP molecules per action potential'),
    atp_per_synaptic_event: num(0, 1e8, ATP_DEFAULTS.atp_per_synaptic_event).description('ATP molecules per synaptic event'),
    atp_rest_per_neuron_s: num(0, 1e10, ATP_DEFAULTS.atp_rest_per_neuron_s).description('ATP molecules per neuron per second at rest'),
    joule_per_atp: num(0, 1e-18, ATP_DEFAULTS.joule_per_atp).description('energy of one ATP hydrolysis, J'),
  },
  rules: [SOURCES_RULE],
  constraints: sourcesWithinN,
  worstCase: fireWorstCase,
  run(p, rng) {
    const s = buildSubstrate(p.n, p.m, rng.shared('fgbrain/graph'));
    const { spikes } = simulateFire(s, toFireParams(p), rng.shared('fgbrain/fire#background'));
    const S = spikes.reduce((a, l) => a + l.length, 0);
    const Y = spikes.reduce((a, l, id) => a + l.length * s.indeg[id]!, 0);
    const R = p.n * (p.duration_ms / 1000);
    const atp = { spikes: S * p.atp_per_spike, synaptic: Y * p.atp_per_synaptic_event, resting: R * p.atp_rest_per_neuron_s, total: 0 };
    atp.total = atp.spikes + atp.synaptic + atp.resting;
    const j = p.joule_per_atp;
    const joules = { spikes: atp.spikes * j, synaptic: atp.synaptic * j, resting: atp.resting * j, total: atp.total * j };
    return {
      constants: { atp_per_neuron_s_at_4hz: 3.29e9, split_2001: { action_potentials: 0.47, postsynaptic: 0.34, resting: 0.13, glutamate_recycling: 0.03 } },
      result: {
        counts: { spikes: S, synaptic_events: Y, neuron_seconds: R },
        atp,
        joules,
        power_w: joules.total / (p.duration_ms / 1000),
        shares: atp.total > 0 ? { spikes: atp.spikes / atp.total, synaptic: atp.synaptic / atp.total, resting: atp.resting / atp.total } : null,
        coefficients: { atp_per_spike: p.atp_per_spike, atp_per_synaptic_event: p.atp_per_synaptic_event, atp_rest_per_neuron_s: p.atp_rest_per_neuron_s, joule_per_atp: j },
        joules_per_spike: S > 0 ? joules.total / S : null,
      },
    };
  },
});
