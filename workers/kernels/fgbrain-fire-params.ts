/**
 * The keys of /fgbrain/fire, shared by the routes that re-run its simulation (vitals, energy).
 * Background input comes from the shared stream `fgbrain/fire#background`, so the same keys give
 * the same spikes on every route.
 */
import { int, num } from '../../src/lib/params.js';
import { graphParams } from './fgbrain-graph.js';
import type { ParamValues } from '../kernel-def.js';

export const fireParams = {
  ...graphParams,
  duration_ms: int(50, 2000, 500).description('simulated time of the leaky integrate-and-fire run, ms'),
  drive_mv: num(0, 100, 25).description('constant input drive of the source neurons, mV'),
  sources: int(0, 96, 4).description('number of driven source neurons (the first nodes of the DAG)'),
  w_syn_mv: num(0, 20, 10).description('synaptic weight: jump of the membrane potential per incoming spike, mV'),
  bg_rate_hz: num(0, 200, 0).description('rate of the Poisson background input per neuron, Hz (0: none)'),
  bg_w_mv: num(0, 20, 4).description('weight of one background input event, mV'),
};

type FireKeys = ParamValues<typeof fireParams>;

export const fireWorstCase = { n: 96, m: 4, duration_ms: 2000, drive_mv: 100, sources: 96, w_syn_mv: 20, bg_rate_hz: 200, bg_w_mv: 20 };

export const SOURCES_RULE = 'sources must not exceed n';

export const sourcesWithinN = (p: { n: number; sources: number }) => (p.sources > p.n ? [{ param: 'sources', msg: SOURCES_RULE }] : []);

export const toFireParams = (p: FireKeys) => ({ durationMs: p.duration_ms, driveMv: p.drive_mv, sources: p.sources, wSynMv: p.w_syn_mv, bgRateHz: p.bg_rate_hz, bgWMv: p.bg_w_mv });
