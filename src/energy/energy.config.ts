/**
 * Config of the energy feature: the CPU power model (Cloud Carbon Footprint per-vCPU averages
 * from SPECpower [S57]), PUE, grid carbon intensity (480 g/kWh: the interface default, about
 * Ember's 2023 global average of 481 [S58]), embodied emissions for SCI, the RAPL counter path, and
 * the sampling of the measured series.
 * Composed into the one schema in src/config.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';

export interface EnergyConfig {
  /** Average power per vCPU at idle, watts. */
  wMinPerVcpu: number;
  /** Average power per vCPU at full load, watts (≥ wMinPerVcpu). */
  wMaxPerVcpu: number;
  /** Power usage effectiveness; 1.0 means "not applied". */
  pue: number;
  gridGco2PerKwh: number;
  /** Embodied emissions amortised per hour of uptime (SCI term M); 0 = excluded. */
  embodiedGco2PerHour: number;
  /** Linux powercap RAPL package counter (µJ); read when present, else the model alone is used. `none` disables. */
  raplPath: string;
  /** Time between two samples of the measured series (series.ts). */
  seriesIntervalMs: number;
  /** Points kept in the series ring (older ones are dropped). */
  seriesPoints: number;
}

export const energyConfig: FeatureConfig = {
  key: 'energy',
  schema: Joi.object({
    wMinPerVcpu: Joi.number().min(0).max(100).default(0.74),
    wMaxPerVcpu: Joi.number().min(Joi.ref('wMinPerVcpu')).max(1000).default(3.5),
    pue: Joi.number().min(1).max(3).default(1.0),
    gridGco2PerKwh: Joi.number().min(0).max(2000).default(480),
    embodiedGco2PerHour: Joi.number().min(0).max(1_000_000).default(0),
    raplPath: Joi.string().max(4096).default('/sys/class/powercap/intel-rapl:0/energy_uj'),
    // 5 s x 120 points: the last ten minutes
    seriesIntervalMs: Joi.number().integer().min(50).max(3_600_000).default(5000),
    seriesPoints: Joi.number().integer().min(2).max(10_000).default(120),
  }).default(),
  env: {
    SVC_ENERGY_W_MIN_PER_VCPU: 'wMinPerVcpu',
    SVC_ENERGY_W_MAX_PER_VCPU: 'wMaxPerVcpu',
    SVC_ENERGY_PUE: 'pue',
    SVC_GRID_GCO2_PER_KWH: 'gridGco2PerKwh',
    SVC_ENERGY_EMBODIED_GCO2_PER_HOUR: 'embodiedGco2PerHour',
    SVC_ENERGY_RAPL_PATH: 'raplPath',
    SVC_ENERGY_SERIES_INTERVAL_MS: 'seriesIntervalMs',
    SVC_ENERGY_SERIES_POINTS: 'seriesPoints',
  },
};
