/**
 * The service's entry points as the running app registered them (the route table buildApp
 * assembled), classified by a static table: what each route reaches, whether it mutates state,
 * whether it causes outbound traffic, and its cost class. Also the request counters, read from
 * the app's own prom-client registry, which the views use as observed counts.
 */
import type { Schema } from 'joi';
import { described } from '../http/describe.js';
import type { RouteDef } from '../http/route.js';
import type { Services } from '../services.js';

export const API = '/api/svc/v1';

/** `GET /api/svc/v1/readiness/{section_id}/live`: the spec's notation, used in inventories. */
export function routeKey(r: Pick<RouteDef, 'method' | 'path'>): string {
  return `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`;
}

export type CostClass = 'cheap' | 'kernel' | 'stream';

export interface RouteClass {
  /** Components the handler reaches (ids of the wiring table). */
  uses: string[];
  /** Components whose state the route changes (ledger, scene buffer, CoT tracks). */
  writes: string[];
  /** Makes outbound requests (ADS-B upstream fetch or probe). */
  egress: boolean;
  cost: CostClass;
}

interface Rule {
  match(r: RouteDef): boolean;
  cls: Partial<RouteClass>;
}

const is = (method: string, path: string) => (r: RouteDef) => r.method === method && r.path === path;
const under = (prefix: string) => (r: RouteDef) => r.path === prefix || r.path.startsWith(`${prefix}/`);

/**
 * First match wins. Mutations: a verdict or an edge-scene batch is signed and appended to the
 * ledger; opening the verdict stream starts the simulated flight, which appends too (a GET that
 * mutates, listed as such); CoT ingest adds tracks. POST /khipu/verify only reads.
 */
const RULES: Rule[] = [
  { match: is('POST', `${API}/verdict`), cls: { uses: ['validator', 'verdict-engine', 'signer', 'worker-pool', 'ledger', 'scene-buffer'], writes: ['ledger', 'scene-buffer'], cost: 'kernel' } },
  { match: is('POST', `${API}/edge/3d`), cls: { uses: ['validator', 'verdict-engine', 'signer', 'worker-pool', 'ledger', 'scene-buffer'], writes: ['ledger', 'scene-buffer'], cost: 'kernel' } },
  { match: is('GET', `${API}/edge/3d`), cls: { uses: ['scene-buffer'] } },
  { match: is('GET', `${API}/stream/verdicts`), cls: { uses: ['sse-hub', 'verdict-engine', 'signer', 'worker-pool', 'ledger', 'scene-buffer'], writes: ['ledger', 'scene-buffer'], cost: 'stream' } },
  { match: is('POST', '/khipu/verify'), cls: { uses: ['validator', 'ledger', 'signer'] } },
  { match: under(`${API}/edge/pubkey`), cls: { uses: ['signer'] } },
  { match: is('GET', `${API}/edge/pubkey.pem`), cls: { uses: ['signer'] } },
  { match: (r) => r.path === `${API}/receipt/export` || r.path === `${API}/ledger/readiness` || r.path === '/api/svc/khipu/dag', cls: { uses: ['validator', 'ledger', 'signer'] } },
  { match: is('GET', `${API}/adsb`), cls: { uses: ['validator', 'adsb-cache', 'adsb-upstreams'], egress: true } },
  { match: is('POST', `${API}/cot/ingest`), cls: { uses: ['validator', 'cot'], writes: ['cot'] } },
  { match: under(`${API}/cot`), cls: { uses: ['validator', 'cot'] } },
  { match: under(`${API}/fleet`), cls: { uses: ['fleet-dataset'] } },
  { match: under(`${API}/energy`), cls: { uses: ['metrics-registry', 'worker-pool'] } },
  { match: (r) => r.path === '/metrics' || r.path === `${API}/health`, cls: { uses: ['metrics-registry', 'worker-pool', 'ledger'] } },
  { match: is('GET', '/mesh/state'), cls: { uses: ['cortex-bus', 'ledger', 'sse-hub', 'trace-ring'] } },
  // readiness and wiring health probe the pool, the signer and (rate-limited) the ADS-B upstreams
  { match: (r) => r.path.startsWith(`${API}/readiness`) || r.path.startsWith(`${API}/elite/wiring/health`), cls: { uses: ['validator', 'worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'], egress: true } },
  { match: (r) => r.path.startsWith(`${API}/evidence`), cls: { uses: ['validator', 'worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'] } },
  { match: (r) => ['/attack-surface/graph', '/posture/drift', '/zerotrust/mesh', '/topology/health', '/elite/wiring'].some((p) => r.path === API + p), cls: { uses: ['metrics-registry', 'ledger', 'worker-pool'] } },
  { match: is('GET', `${API}/doctrine`), cls: { uses: [] } },
];

export function classify(r: RouteDef): RouteClass {
  const base: RouteClass = { uses: [], writes: [], egress: false, cost: r.tag === 'kernels' ? 'kernel' : 'cheap' };
  if (r.tag === 'kernels') return { ...base, uses: ['validator', 'worker-pool'] };
  const rule = RULES.find((x) => x.match(r));
  const out = { ...base, ...(rule?.cls ?? {}) };
  if ((r.query || r.params || (r.body && r.body !== 'text')) && !out.uses.includes('validator')) out.uses = ['validator', ...out.uses];
  return out;
}

/** POST routes the table does not classify: an inventory finding, never silently read-only. */
export function unclassifiedPosts(routes: readonly RouteDef[]): string[] {
  return routes.filter((r) => r.method === 'POST' && !RULES.some((x) => x.match(r))).map(routeKey);
}

type Desc = { type?: string; keys?: Record<string, Desc>; rules?: { name: string }[]; items?: Desc[] };

function describe(schema: Schema | undefined): Desc | undefined {
  return schema ? (described(schema) as Desc) : undefined;
}

export function paramNames(r: RouteDef): string[] {
  return [...Object.keys(describe(r.params)?.keys ?? {}), ...Object.keys(describe(r.query)?.keys ?? {})];
}

const NUMERIC = new Set(['number', 'qint', 'qnum']);

/** Numeric fields of a described schema (recursively) that lack a min or a max bound. */
export function unboundedNumbers(schema: Schema | undefined, prefix: string): string[] {
  const out: string[] = [];
  const walk = (d: Desc | undefined, path: string): void => {
    if (!d) return;
    if (d.type && NUMERIC.has(d.type)) {
      const names = new Set((d.rules ?? []).map((x) => x.name));
      const lower = names.has('min') || names.has('greater') || names.has('positive');
      const upper = names.has('max') || names.has('less') || names.has('negative') || names.has('port');
      if (!lower || !upper) out.push(path);
    }
    for (const [k, v] of Object.entries(d.keys ?? {})) walk(v, `${path}.${k}`);
    for (const item of d.items ?? []) walk(item, `${path}[]`);
  };
  walk(describe(schema), prefix);
  return out;
}

export interface RequestCount {
  method: string;
  route: string;
  status: number;
  count: number;
}

/** http_requests_total from the app's registry: real client traffic (in-process probes are not counted). */
export async function requestCounts(s: Services): Promise<RequestCount[]> {
  const metric = await s.metrics.httpRequests.get();
  return metric.values.map((v) => ({ method: String(v.labels.method), route: String(v.labels.route), status: Number(v.labels.status), count: v.value }));
}

export function countFor(counts: readonly RequestCount[], pred: (c: RequestCount) => boolean): number {
  return counts.reduce((a, c) => a + (pred(c) ? c.count : 0), 0);
}
