/**
 * The keys of /fgbrain/fire, shared by the routes that re-run its simulation (vitals, energy).
 * Background input comes from the shared stream `fgbrain/fire#background`, so the same keys give
 * the same spikes on every route.
 */
import { int, num } from '../../src/lib/params.js';
import { graphParams } from './fgbrain-graph.js';

export const fireParams = {
  ...graphParams,
  duration_ms: int(50, 2000, 500),
  drive_mv: num(0, 100, 25),
  sources: int(0, 96, 4),
  w_syn_mv: num(0, 20, 10),
  bg_rate_hz: num(0, 200, 0),
  bg_w_mv: num(0, 20, 4),
};

export type FireKeys = {
  seed: number;
  n: number;
  m: number;
  duration_ms: number;
  drive_mv: number;
  sources: number;
  w_syn_mv: number;
  bg_rate_hz: number;
  bg_w_mv: number;
};

export const fireWorstCase = { n: 96, m: 4, duration_ms: 2000, drive_mv: 100, sources: 96, w_syn_mv: 20, bg_rate_hz: 200, bg_w_mv: 20 };

export const sourcesWithinN = (p: { n: number; sources: number }) => (p.sources > p.n ? [{ param: 'sources', msg: 'sources must not exceed n' }] : []);

export const toFireParams = (p: FireKeys) => ({ durationMs: p.duration_ms, driveMv: p.drive_mv, sources: p.sources, wSynMv: p.w_syn_mv, bgRateHz: p.bg_rate_hz, bgWMv: p.bg_w_mv });
