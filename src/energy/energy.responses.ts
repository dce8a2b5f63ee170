/**
 * Response schemas of the energy views. Every number is a `{value, unit, basis}` quantity; each
 * body is the next link of the snapshot chain (`receipt_link`). Top-level keys are exact; nested
 * groups of quantities are objects whose members depend on what this host can measure.
 */
import { BASIS_VOCABULARY } from '../core/doctrine.js';
import { hex64, int, isoTime, list, listOf, mapOf, nullable, num, object, oneOf, openShape, shape, str, text } from '../http/response-schema.js';

export const QUANTITY = openShape({ value: nullable(num()), unit: str(), basis: oneOf(...BASIS_VOCABULARY), note: str().optional() });

const group = (description: string) => object().description(description);

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
  measured: group('CPU seconds, vCPUs, utilisation, requests, event-loop utilisation and the RAPL counter (value null where the host has none): quantities'),
  model: group('the CPU power model: formula, coefficients, average power and energy (quantities)'),
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
  this_service: group('llm: false, the marginal energy per request and the costliest routes'),
  receipt_formula: group('how /energy/receipt computes energy, J per token, kWh, CO2 and its hash chain'),
  defaults_example: group('/energy/receipt at its defaults, computed'),
});

export const THROUGHPUT = view('throughput', {
  windows: group('request counts and rates over 60 s, 300 s and since start'),
  latency_ms: shape({ p50: QUANTITY, p95: QUANTITY, p99: QUANTITY }),
  kernels: group('worker-pool tasks completed, run and wait time, utilisation'),
  sse: group('open streams, events published, viewers dropped'),
});

export const KVCACHE = view('kvcache', {
  basis: oneOf('model'),
  formula: str(),
  precisions: object(),
  reference_models: listOf(shape({ id: str(), layers: QUANTITY, kv_heads: QUANTITY, head_dim: QUANTITY, source: str() })),
  table: listOf(shape({ model: str(), precision: str(), bytes_per_token: QUANTITY, totals_at: mapOf(QUANTITY).description('by sequence length') })),
  h2o_default: object(),
});

export const GATEWAY = view('gateway', {
  in_flight: QUANTITY,
  requests_total: QUANTITY,
  rate_1m: QUANTITY,
  errors: group('4xx, 5xx and counts by status code'),
  duration_seconds: group('the request duration histogram: buckets, count, sum'),
  bytes: group('bytes in and out'),
  sse_open: QUANTITY,
  event_loop: group('event-loop delay p50/p99 and utilisation'),
  saturation: group('worker queue, its maximum and pool utilisation'),
  energy: group("the main thread's share and the marginal energy"),
});

export const ROUTER = view('router', {
  attribution: str(),
  method: object(),
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
  sci: group('Software Carbon Intensity: formula, E, I, M, R and the value per request'),
  assumptions: listOf(str()),
});

export const METRICS = view(
  'metrics',
  {
    prefixes: listOf(str()),
    families: QUANTITY,
    metrics: listOf(openShape({ name: str(), help: str(), type: str(), basis: str(), values: list() })),
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
