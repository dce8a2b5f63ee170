/** Sources cited by the energy views, in the shared `sources` shape. */
const src = (leader: string, kind: string, url: string, data_kind: string) => ({ leader, kind, url, data_kind });

export const ENERGY_SOURCES = {
  ccf: src('Cloud Carbon Footprint methodology (per-vCPU min/max watts from SPECpower)', 'method', 'https://www.cloudcarbonfootprint.org/docs/methodology/', 'published'),
  nodeCpu: src('Node.js process.cpuUsage', 'api', 'https://nodejs.org/api/process.html#processcpuusagepreviousvalue', 'standard'),
  ember2023: src('Global power-sector intensity 2023: 481 gCO2/kWh (Ember via Statista)', 'dataset', 'https://statista.com/statistics/943137/global-emissions-intensity-power-sector-by-country', 'published'),
  ember2022: src('Ember 2022 intensity 436 gCO2/kWh', 'dataset', 'https://ourworldindata.org/grapher/carbon-intensity-electricity', 'published'),
  sci: src('Green Software Foundation SCI specification', 'standard', 'https://github.com/Green-Software-Foundation/sci/blob/dev/SPEC.md', 'standard'),
  samsi: src('Samsi et al., From Words to Watts (arXiv:2310.03003)', 'paper', 'https://arxiv.org/abs/2310.03003', 'published'),
  mlenergy: src('ML.ENERGY benchmark (arXiv:2505.06371)', 'paper', 'https://arxiv.org/html/2505.06371v2', 'published'),
  goldenSignals: src('Golden signals: latency, traffic, errors, saturation', 'practice', 'https://sre.google/sre-book/monitoring-distributed-systems/', 'standard'),
  kvArithmetic: src('KV-cache arithmetic with GQA KV heads', 'method', 'https://docs.rs/crate/kv-cache-size/latest/source/README.md', 'published'),
  promClient: src('prom-client default metrics', 'api', 'https://github.com/siimon/prom-client', 'standard'),
} as const;
