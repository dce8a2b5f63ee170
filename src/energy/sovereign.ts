/**
 * /energy/sovereign and /energy/carbon: measured process readings turned into energy through the
 * stated CPU power model, and carbon through the configured grid intensity. "Sovereign" = accounted
 * entirely in-process, no third-party telemetry.
 */
import type { EnergyConfig } from './energy.config.js';
import { powerModel, type Reading } from './meter.js';
import { q } from './quantity.js';
import { ENERGY_SOURCES } from './sources.js';

export const NO_METER_HONESTY = 'No power meter: energy is a CPU-time power model (Cloud Carbon Footprint coefficients) applied to measured process CPU time; this service runs no LLM.';

export function sovereignBody(r: Reading, cfg: EnergyConfig, startedAt: Date) {
  const m = powerModel(r, cfg);
  const gco2e = m.energyKwh * cfg.gridGco2PerKwh;
  return {
    schema: 'svc.energy-sovereign/v1',
    generated_at: r.at.toISOString(),
    window: { started_at: startedAt.toISOString(), uptime_s: q(r.uptimeS, 's', 'measured') },
    measured: {
      cpu_user_s: q(r.cpuUserS, 's', 'measured'),
      cpu_system_s: q(r.cpuSystemS, 's', 'measured'),
      vcpus: q(r.vcpus, 'vCPU', 'measured'),
      cpu_utilization: q(m.utilization, 'ratio', 'computed', '(cpu_user_s + cpu_system_s) / (uptime_s x vcpus)'),
      requests_total: q(r.requestsTotal, 'requests', 'measured'),
      event_loop_utilization: q(r.elu, 'ratio', 'measured'),
      rapl_package_energy_j: r.rapl.joules === null ? q(null, 'J', 'measured', r.rapl.reason) : q(r.rapl.joules, 'J', 'measured', `RAPL counter ${r.rapl.path}`),
    },
    model: {
      formula: {
        avg_power_w: 'vcpus x (w_min_per_vcpu + cpu_utilization x (w_max_per_vcpu - w_min_per_vcpu))',
        energy_j_total: 'avg_power_w x uptime_s x pue',
        energy_j_marginal: '(w_max_per_vcpu - w_min_per_vcpu) x (cpu_user_s + cpu_system_s)',
        energy_kwh: 'energy_j_total / 3.6e6',
      },
      coefficients: {
        w_min_per_vcpu: q(cfg.wMinPerVcpu, 'W', 'config', 'CCF average minimum watts per vCPU (SPECpower)'),
        w_max_per_vcpu: q(cfg.wMaxPerVcpu, 'W', 'config', 'CCF average maximum watts per vCPU (SPECpower)'),
        pue: q(cfg.pue, 'ratio', 'config', cfg.pue === 1 ? 'not applied' : 'applied to energy_j_total'),
      },
      avg_power_w: q(m.avgPowerW, 'W', 'model'),
      energy_j_total: q(m.energyJTotal, 'J', 'model'),
      energy_j_marginal: q(m.energyJMarginal, 'J', 'model'),
      energy_kwh: q(m.energyKwh, 'kWh', 'model'),
    },
    carbon: { grid_gco2_per_kwh: q(cfg.gridGco2PerKwh, 'gCO2e/kWh', 'config'), gco2e: q(gco2e, 'gCO2e', 'model', 'energy_kwh x grid_gco2_per_kwh') },
    per_request: { j_marginal: q(r.requestsTotal > 0 ? m.energyJMarginal / r.requestsTotal : null, 'J/request', 'model', 'energy_j_marginal / requests_total') },
    assumptions: [
      'CPU time is process-wide (main thread and worker threads) since this app was built; other apps in the same process would be included.',
      'Idle power (w_min) is attributed to the whole window; marginal energy is the CPU-proportional part only.',
      'Memory, storage and network energy are not modelled.',
    ],
    honesty: NO_METER_HONESTY,
    limits: [{ code: 'NO_POWER_METER', detail: 'Unless RAPL is readable, every joule is a model output, never a meter reading.' }],
    sources: [ENERGY_SOURCES.ccf, ENERGY_SOURCES.nodeCpu],
  };
}

export function carbonBody(r: Reading, cfg: EnergyConfig) {
  const m = powerModel(r, cfg);
  const total = m.energyKwh * cfg.gridGco2PerKwh;
  const embodied = cfg.embodiedGco2PerHour * (r.uptimeS / 3600);
  const R = r.requestsTotal;
  return {
    schema: 'svc.energy-carbon/v1',
    generated_at: r.at.toISOString(),
    method: 'location-based',
    grid_gco2_per_kwh: { ...q(cfg.gridGco2PerKwh, 'gCO2e/kWh', 'config'), default_source: 'interface default 480 g/kWh; Ember 2023 global power-sector average 481 g/kWh (2022: 436)' },
    energy_kwh: q(m.energyKwh, 'kWh', 'model', 'energy_j_total of /energy/sovereign / 3.6e6'),
    gco2e_total: q(total, 'gCO2e', 'model', 'energy_kwh x grid_gco2_per_kwh'),
    gco2e_per_request: q(R > 0 ? total / R : null, 'gCO2e/request', 'model'),
    sci: {
      formula: 'SCI = (E x I + M) / R',
      E_kwh: q(m.energyKwh, 'kWh', 'model'),
      I: q(cfg.gridGco2PerKwh, 'gCO2e/kWh', 'config'),
      M_g: q(embodied, 'gCO2e', 'config', cfg.embodiedGco2PerHour === 0 ? 'embodied emissions excluded (embodiedGco2PerHour = 0)' : 'embodiedGco2PerHour x uptime hours'),
      R: q(R, 'requests', 'measured'),
      value: q(R > 0 ? (m.energyKwh * cfg.gridGco2PerKwh + embodied) / R : null, 'gCO2e/request', 'model'),
      functional_unit: 'request',
    },
    assumptions: ['Location-based: one average grid intensity, no hourly or marginal factors.', 'Energy is the CPU power model of /energy/sovereign.'],
    honesty: NO_METER_HONESTY,
    limits: [{ code: 'NO_POWER_METER', detail: 'Carbon inherits the energy model; it is not a metered figure.' }],
    sources: [ENERGY_SOURCES.ember2023, ENERGY_SOURCES.ember2022, ENERGY_SOURCES.sci, ENERGY_SOURCES.ccf],
  };
}
