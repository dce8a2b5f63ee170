/**
 * Response schemas of the energy views. Every number is a `{value, unit, basis}` quantity; each
 * body is the next link of the snapshot chain (`receipt_link`). Top-level keys are exact; nested
 * groups of quantities list their members (a quantity this host cannot measure has value null), and
 * groups keyed by status code are maps.
 */
import Joi from 'joi';
import { BASIS_VOCABULARY } from '../core/doctrine.js';
import { bool, hex64, int, isoTime, listOf, mapOf, nullable, num, oneOf, openShape, shape, str, text } from '../http/response-schema.js';

export const QUANTITY = openShape({ value: nullable(num()), unit: str(), basis: oneOf(...BASIS_VOCABULARY), note: str().optional() });

/** Quantities under these names, each `{value, unit, basis}`. */
const quantities = (names: readonly string[], description: string) => shape(Object.fromEntries(names.map((n) => [n, QUANTITY]))).description(description);
const BY_STATUS_CLASS = quantities(['2xx', '3xx', '4xx', '5xx'], 'requests by status class');
const WINDOW = shape({ covered_s: QUANTITY, requests: QUANTITY, rps: QUANTITY, by_status_class: BY_STATUS_CLASS });

const RECEIPT_LINK = shape({
  basis: oneOf('computed'),
  seq: int().min(0).description("this process's links so far"),
  prev_hash: hex64(),
  hash_formula: str(),
  continue_with: str(),
  hash: hex64().description('SHA-256 of the canonical JSON of this body without receipt_link.hash'),
});

const TAIL = {
  honesty: str(),
  limits: listOf(shape({ code: str(), detail: str() })),
  sources: listOf(openShape({ leader: str(), kind: str(), url: str(), data_kind: str() })),
  receipt_link: RECEIPT_LINK,
};

const view = (name: string, keys: Parameters<typeof shape>[0], at: 'generated_at' | 'scraped_at' = 'generated_at') =>
  shape({ schema: oneOf(`svc.energy-${name}/v1`), doctrine: str(), [at]: isoTime(), ...keys, ...TAIL });

export const SOVEREIGN = view('sovereign', {
  window: shape({ started_at: isoTime(), uptime_s: QUANTITY }),
  measured: quantities(
    ['cpu_user_s', 'cpu_system_s', 'vcpus', 'cpu_utilization', 'requests_total', 'event_loop_utilization', 'rapl_package_energy_j'],
    'CPU seconds, vCPUs, utilisation, requests, event-loop utilisation and the RAPL counter (value null where the host has none)',
  ),
  model: shape({
    formula: shape({ avg_power_w: str(), energy_j_total: str(), energy_j_marginal: str(), energy_kwh: str() }),
    coefficients: quantities(['w_min_per_vcpu', 'w_max_per_vcpu', 'pue'], 'the power model\'s coefficients'),
    avg_power_w: QUANTITY,
    energy_j_total: QUANTITY,
    energy_j_marginal: QUANTITY,
    energy_kwh: QUANTITY,
  }).description('the CPU power model: formula, coefficients, average power and energy'),
  carbon: shape({ grid_gco2_per_kwh: QUANTITY, gco2e: QUANTITY }),
  per_request: shape({ j_marginal: QUANTITY }),
  assumptions: listOf(str()),
  series: shape({
    interval_ms: QUANTITY,
    max_points: QUANTITY,
    fields: mapOf(shape({ unit: str(), basis: oneOf(...BASIS_VOCABULARY), note: str() })).description('unit, basis and meaning of each point field'),
    points: listOf(
      shape({ at: isoTime(), interval_s: num().min(0), cpu_s: num().min(0), cpu_utilization: num().min(0), event_loop_utilization: num().min(0).max(1), requests: int().min(0), avg_power_w: num().min(0) }),
    ).description('one point per sampling interval, oldest first: the difference of two readings'),
    honesty: str(),
  }),
});

export const JTOKEN = view('jtoken', {
  published_references: listOf(openShape({ source: str(), model: str(), hardware: str(), url: str(), basis: str() })),
  this_service: shape({ llm: bool(), j_marginal_per_request: QUANTITY, by_route_top: listOf(shape({ method: str(), template: str(), energy_j_marginal: QUANTITY })) }).description(
    'llm: false, the marginal energy per request and the costliest routes',
  ),
  receipt_formula: shape({ energy_j: str(), j_per_token: str(), kwh: str(), gco2: str(), method: str(), hash: str(), genesis: str() }).description(
    'how /energy/receipt computes energy, J per token, kWh, CO2 and its hash chain',
  ),
  defaults_example: shape({
    basis: str(),
    params: shape({ seed: int(), tokens: int(), power_w: num(), latency_s: num(), grid_gco2_per_kwh: num() }),
    computed_by: str(),
    energy_j: QUANTITY,
    j_per_token: QUANTITY,
    energy_kwh: QUANTITY,
    co2_g: QUANTITY,
    receipt_hash: str(),
    prev_hash: str(),
  }).description('/energy/receipt at its defaults, computed'),
});

export const THROUGHPUT = view('throughput', {
  windows: shape({ '60s': WINDOW, '300s': WINDOW, since_start: WINDOW }).description('request counts and rates over 60 s, 300 s and since start'),
  latency_ms: shape({ p50: QUANTITY, p95: QUANTITY, p99: QUANTITY }),
  kernels: shape({ tasks_completed: QUANTITY, run_time_ms: shape({ p50: QUANTITY, p99: QUANTITY }), wait_time_ms: shape({ p99: QUANTITY }), utilization: QUANTITY }).description(
    'worker-pool tasks completed, run and wait time, utilisation',
  ),
  sse: quantities(['open_streams', 'events_published', 'viewers_dropped'], 'open streams, events published, viewers dropped'),
});

export const KVCACHE = view('kvcache', {
  basis: oneOf('model'),
  formula: str(),
  precisions: mapOf(QUANTITY).description('bytes per element by precision (fp16, bf16, fp8, int4)'),
  reference_models: listOf(shape({ id: str(), layers: QUANTITY, kv_heads: QUANTITY, head_dim: QUANTITY, source: str() })),
  table: listOf(shape({ model: str(), precision: str(), bytes_per_token: QUANTITY, totals_at: mapOf(QUANTITY).description('by sequence length') })),
  h2o_default: shape({ link: str(), model: str(), precision: str(), seq_len: QUANTITY, budget: QUANTITY, retained_fraction: QUANTITY, bytes_saved: QUANTITY }),
});

export const GATEWAY = view('gateway', {
  in_flight: QUANTITY,
  requests_total: QUANTITY,
  rate_1m: QUANTITY,
  errors: shape({ '4xx': QUANTITY, '5xx': QUANTITY, by_code: mapOf(QUANTITY).description('by status code') }).description('4xx, 5xx and counts by status code'),
  duration_seconds: shape({ buckets: listOf(shape({ le: Joi.alternatives(num(), oneOf('+Inf')), count: QUANTITY })), count: QUANTITY, sum: QUANTITY }).description(
    'the request duration histogram: buckets, count, sum',
  ),
  bytes: quantities(['in', 'out'], 'bytes in and out'),
  sse_open: QUANTITY,
  event_loop: quantities(['delay_p50_ms', 'delay_p99_ms', 'utilization'], 'event-loop delay p50/p99 and utilisation'),
  saturation: quantities(['worker_queue', 'worker_queue_max', 'pool_utilization'], 'worker queue, its maximum and pool utilisation'),
  energy: quantities(['main_thread_share', 'j_marginal'], "the main thread's share and the marginal energy"),
});

export const ROUTER = view('router', {
  attribution: str(),
  method: shape({ cpu_ms_attributed: str(), share: str(), energy_j_marginal: str() }).description('how each column is attributed'),
  routes: listOf(
    shape({
      method: str(),
      template: str(),
      group: str(),
      requests: QUANTITY,
      errors: QUANTITY,
      latency_ms: shape({ p50: QUANTITY, p95: QUANTITY }),
      cpu_ms_attributed: QUANTITY,
      share: QUANTITY,
      energy_j_marginal: QUANTITY,
    }),
  ).description('every route of the table'),
});

export const CARBON = view('carbon', {
  method: oneOf('location-based'),
  grid_gco2_per_kwh: QUANTITY,
  energy_kwh: QUANTITY,
  gco2e_total: QUANTITY,
  gco2e_per_request: QUANTITY,
  sci: shape({ formula: str(), E_kwh: QUANTITY, I: QUANTITY, M_g: QUANTITY, R: QUANTITY, value: QUANTITY, functional_unit: str() }).description(
    'Software Carbon Intensity: formula, E, I, M, R and the value per request',
  ),
  assumptions: listOf(str()),
});

export const METRICS = view(
  'metrics',
  {
    prefixes: listOf(str()),
    families: QUANTITY,
    metrics: listOf(
      openShape({
        name: str(),
        help: str(),
        type: str(),
        basis: str(),
        values: listOf(shape({ name: str(), labels: mapOf(Joi.alternatives(str(), num())).description('Prometheus labels of the sample'), value: nullable(num()) })),
      }),
    ),
  },
  'scraped_at',
);

/** By view name (the route segment under /api/svc/v1/energy). */
export const ENERGY_RESPONSES = {
  sovereign: SOVEREIGN,
  jtoken: JTOKEN,
  throughput: THROUGHPUT,
  kvcache: KVCACHE,
  gateway: GATEWAY,
  router: ROUTER,
  carbon: CARBON,
  metrics: METRICS,
} as const;

export const PANEL = text('HTML panel with the /energy/sovereign snapshot embedded as JSON');
