/**
 * The service's entry points as the running app mounted them, classified by what each route
 * declares about itself (`uses`, `mutates`, `egress`, `cost` on its RouteDef): what it reaches,
 * whether it changes state, whether it causes outbound traffic, and its cost class. Also the
 * request counters, read from the app's own prom-client registry, used as observed counts.
 */
import type { Schema } from 'joi';
import type { CostClass, RouteDef } from '../http/route.js';
import { described, walkDescribed } from '../http/schema-walk.js';
import type { Services } from '../platform/services.js';
import type { ComponentId } from './components.js';

/** `/api/svc/v1/readiness/{section_id}/live`: a @koa/router path in the spec's notation. */
export function specPath(path: string): string {
  // a wildcard (`*tile`, which spans segments) is named like any other parameter
  return path.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

/** `GET /api/svc/v1/readiness/{section_id}/live`: used in inventories. */
export function routeKey(r: Pick<RouteDef, 'method' | 'path'>): string {
  return `${r.method} ${specPath(r.path)}`;
}

export interface RouteClass {
  /** Components the handler reaches (ids of the wiring table). */
  uses: ComponentId[];
  /** Components whose state the route changes (ledger, scene buffer, CoT tracks). */
  writes: ComponentId[];
  /** Makes outbound requests (ADS-B upstream fetch or probe). */
  egress: boolean;
  cost: CostClass;
}

const hasSchemas = (r: RouteDef): boolean => Boolean(r.query || r.params || (r.body && r.body !== 'text'));

/** The route's own declaration; `validator` is implied by its schemas. */
export function classify(r: RouteDef): RouteClass {
  const uses: ComponentId[] = hasSchemas(r) && !r.uses.includes('validator') ? ['validator', ...r.uses] : [...r.uses];
  return { uses, writes: [...(r.mutates ?? [])], egress: r.egress ?? false, cost: r.cost ?? (r.kernel ? 'kernel' : 'cheap') };
}

/** POST routes that declare they reach nothing: an inventory finding, never silently read-only. */
export function unclassifiedPosts(routes: readonly RouteDef[]): string[] {
  return routes.filter((r) => r.method === 'POST' && r.uses.length === 0).map(routeKey);
}

export function paramNames(r: RouteDef): string[] {
  return [...Object.keys(described(r.params)?.keys ?? {}), ...Object.keys(described(r.query)?.keys ?? {})];
}

const NUMERIC = new Set(['number', 'qint', 'qnum']);

/** Numeric fields of a described schema (recursively) that lack a min or a max bound. */
export function unboundedNumbers(schema: Schema | undefined, prefix: string): string[] {
  const out: string[] = [];
  walkDescribed(
    described(schema),
    (d, path) => {
      if (!d.type || !NUMERIC.has(d.type)) return;
      const names = new Set((d.rules ?? []).map((x) => x.name));
      const lower = names.has('min') || names.has('greater') || names.has('positive');
      const upper = names.has('max') || names.has('less') || names.has('negative') || names.has('port');
      if (!lower || !upper) out.push(prefix + path.map((k) => (k === '[]' ? k : `.${k}`)).join(''));
    },
    { alternatives: false },
  );
  return out;
}

export interface RequestCount {
  method: string;
  route: string;
  status: number;
  count: number;
}

/** http_requests_total from the app's registry: real client traffic (in-process probes are not counted). */
export async function requestCounts(s: Pick<Services, 'metrics'>): Promise<RequestCount[]> {
  const metric = await s.metrics.httpRequests.get();
  return metric.values.map((v) => ({ method: String(v.labels.method), route: String(v.labels.route), status: Number(v.labels.status), count: v.value }));
}

export function countFor(counts: readonly RequestCount[], pred: (c: RequestCount) => boolean): number {
  return counts.reduce((a, c) => a + (pred(c) ? c.count : 0), 0);
}
