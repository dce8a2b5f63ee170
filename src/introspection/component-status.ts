/**
 * The component table (components.ts) checked against the running app: a component counts as
 * registered when the plugin or the mounted routes that stand for it are present (a route stands
 * for the components it declares in `uses`), and each component's passive status from last-known
 * counters. Topology health (2.4) and wiring health (3.4) read the same table, so the two views
 * always describe the same component set.
 */
import type { HealthStatus } from '../platform/health.js';
import type { RouteDef } from '../http/route.js';
import type { Observed } from './observed.js';
import { API } from '../isomorphic/api.js';
import { NODES, WIRES, type ComponentId } from './components.js';
import { classify, countFor, requestCounts, routeKey, type RequestCount } from './route-inventory.js';

export interface Registration {
  id: string;
  registered: boolean;
  evidence: string;
}

/** Mounted routes that declare they reach `id` (validator implied by schemas, see classify). */
export function routesUsing(routes: readonly RouteDef[], id: ComponentId): RouteDef[] {
  return routes.filter((r) => classify(r).uses.includes(id));
}

/** What stands for each component in the running app (read once the route table is complete). */
export function registrations(s: Observed): Registration[] {
  const table = s.routeTable();
  const plugins = new Set(s.plugins());
  const r = (id: ComponentId, registered: boolean, evidence: string): Registration => ({ id, registered, evidence });
  const byRoutes = (id: ComponentId): Registration => {
    const users = routesUsing(table, id);
    return r(id, users.length > 0, users.length > 0 ? `${users.length} mounted routes use it, e.g. ${routeKey(users[0]!)}` : 'no mounted route uses it');
  };
  const signer = byRoutes('signer');
  return [
    r('gateway', table.length > 0, `${table.length} routes in the route table`),
    byRoutes('validator'),
    r('worker-pool', s.pool.snapshot().threads > 0, `${s.pool.snapshot().threads} worker threads alive`),
    byRoutes('verdict-engine'),
    r('signer', plugins.has('ledger') && signer.registered, `ledger plugin ${plugins.has('ledger') ? 'built' : 'absent'}; ${signer.evidence}`),
    r('ledger', plugins.has('ledger'), 'ledger plugin built'),
    byRoutes('sse-hub'),
    byRoutes('scene-buffer'),
    byRoutes('cortex-bus'),
    r('trace-ring', s.traces.capacity > 0, `ring of ${s.traces.capacity} traces`),
    byRoutes('metrics-registry'),
    r('adsb-cache', plugins.has('adsb'), 'ADS-B plugin built'),
    r('adsb-upstreams', s.adsb().providers.length > 0, `${s.adsb().providers.length} providers configured`),
    r('cot', plugins.has('cot'), 'CoT plugin built'),
    byRoutes('fleet-dataset'),
  ];
}

/** `METHOD path` as the request counter labels a route (its @koa/router path). */
const keysOf = (routes: readonly RouteDef[]): Set<string> => new Set(routes.map((r) => `${r.method} ${r.path}`));

export function worst(statuses: Iterable<HealthStatus>): HealthStatus {
  let out: HealthStatus = 'pass';
  for (const st of statuses) {
    if (st === 'fail') return 'fail';
    if (st === 'warn') out = 'warn';
  }
  return out;
}

export interface Observation {
  measurement: string;
  observedValue: number | string | boolean | null;
  observedUnit: string;
  basis: 'measured' | 'computed' | 'config';
  time: string;
}

export interface PassiveNode {
  componentId: string;
  componentType: string;
  status: HealthStatus;
  output: string;
  observations: Observation[];
}

interface MeshWire {
  status: string;
  counters?: Record<string, unknown>;
}

/**
 * Passive status of every component: counters and last-known results, no probes, no upstream
 * calls (in-process reads of read-only routes only). ADS-B is capped at warn: its endpoint
 * degrades to live=false by design (honesty rule 1).
 */
export async function passiveNodes(s: Observed, now = new Date()): Promise<{ nodes: PassiveNode[]; counts: RequestCount[]; mesh: Record<string, MeshWire> | null }> {
  const time = now.toISOString();
  const regs = new Map(registrations(s).map((r) => [r.id, r]));
  const counts = await requestCounts(s);
  const ip = s.inProcess;
  const obs = (measurement: string, observedValue: Observation['observedValue'], observedUnit: string, basis: Observation['basis'] = 'measured'): Observation => ({
    measurement,
    observedValue,
    observedUnit,
    basis,
    time,
  });
  const hasRoute = (k: string): boolean => s.routeTable().some((d) => routeKey(d) === k);
  const mesh = hasRoute('GET /mesh/state') ? ((await ip.getJson<{ wires: Record<string, MeshWire> }>('/mesh/state')).body?.wires ?? null) : null;
  const ledgerDoc = hasRoute(`GET ${API}/ledger/readiness`)
    ? (await ip.getJson<{ ready: boolean; startup_state: string; integrity: { verified: boolean; nodes: number }; reason: string }>(`${API}/ledger/readiness`)).body
    : null;

  const nodes: PassiveNode[] = [];
  const add = (componentId: string, status: HealthStatus, output: string, observations: Observation[]): void => {
    const node = NODES.find((n) => n.id === componentId)!;
    const reg = regs.get(componentId)!;
    if (!reg.registered && componentId !== 'adsb-cache' && componentId !== 'adsb-upstreams') {
      nodes.push({ componentId, componentType: node.kind, status: 'fail', output: `not registered: ${reg.evidence} is missing`, observations: [] });
      return;
    }
    nodes.push({ componentId, componentType: node.kind, status, output, observations });
  };

  // the same figure as /health's event-loop check: p99 of the window, or a recent stall if worse
  const loop = s.eventLoop.report();
  const ms3 = (x: number): number => Math.round(x * 1000) / 1000;
  add('gateway', loop.worstMs > 1000 ? 'fail' : loop.worstMs > 100 ? 'warn' : 'pass', `event-loop delay p99 ${loop.p99Ms.toFixed(3)} ms this window, longest stall in the last minute ${loop.stallMs.toFixed(0)} ms`, [
    obs('event-loop:delay:p50', ms3(loop.p50Ms), 'ms'),
    obs('event-loop:delay:p99', ms3(loop.p99Ms), 'ms'),
    obs('event-loop:delay:worst', ms3(loop.worstMs), 'ms'),
    obs('event-loop:delay:samples', loop.samples, 'count'),
    obs('http:requests', countFor(counts, () => true), 'count'),
    obs('http:5xx', countFor(counts, (c) => c.status >= 500), 'count'),
  ]);
  const denied422 = countFor(counts, (c) => c.status === 422);
  add('validator', 'pass', `${denied422} requests refused by validation (422)`, [obs('http:422', denied422, 'count')]);
  const pool = s.pool.snapshot();
  add('worker-pool', pool.threads === 0 ? 'fail' : pool.queueSize >= pool.maxQueue ? 'warn' : 'pass', `${pool.threads} threads, queue ${pool.queueSize}/${pool.maxQueue}`, [
    obs('threads', pool.threads, 'count'),
    obs('queue_size', pool.queueSize, 'tasks'),
    obs('busy', pool.busy, 'ratio'),
    obs('completed', pool.completed, 'tasks'),
    obs('crashes', pool.crashes, 'count'),
  ]);
  // requests that evaluate verdicts: the POST routes declaring the engine (the stream's flight is counted on wire C)
  const verdictRoutes = keysOf(routesUsing(s.routeTable(), 'verdict-engine').filter((r) => r.method === 'POST'));
  const verdicts = countFor(counts, (c) => verdictRoutes.has(`${c.method} ${c.route}`));
  const verdict5xx = countFor(counts, (c) => verdictRoutes.has(`${c.method} ${c.route}`) && c.status >= 500);
  add('verdict-engine', 'pass', `${verdicts} verdict requests, ${verdict5xx} failed`, [obs('verdict:requests', verdicts, 'count'), obs('verdict:5xx', verdict5xx, 'count')]);
  const selfTestOk = ledgerDoc?.startup_state === 'READY';
  add('signer', selfTestOk ? 'pass' : 'fail', selfTestOk ? 'start-up self-test signed in the pool and verified' : `signing not ready: ${ledgerDoc?.reason ?? 'ledger readiness unavailable'}`, [
    obs('startup_state', ledgerDoc?.startup_state ?? null, 'state', 'computed'),
    obs('signatures', (mesh?.B?.counters?.events as number | undefined) ?? null, 'count'),
  ]);
  const ledger = s.ledger;
  const integrity = ledgerDoc?.integrity.verified ?? false;
  const size = ledger.size();
  add('ledger', !integrity ? 'fail' : size >= ledger.maxNodes ? 'warn' : 'pass', ledgerDoc?.reason ?? 'readiness unavailable', [
    obs('nodes', size, 'nodes'),
    // no cap where disk is the limit (file and postgres modes)
    obs('max_nodes', Number.isFinite(ledger.maxNodes) ? ledger.maxNodes : null, 'nodes', 'config'),
    obs('integrity', integrity, 'boolean', 'computed'),
  ]);
  const meshCount = (letter: string, key: string): number | null => (mesh?.[letter]?.counters?.[key] as number | undefined) ?? null;
  add('sse-hub', 'pass', mesh ? `wire C ${mesh.C?.status ?? 'absent'}` : 'mounted; wire board unavailable', [
    obs('subscribers', meshCount('C', 'subscribers'), 'viewers'),
    obs('events', meshCount('C', 'events'), 'count'),
    obs('dropped', meshCount('C', 'dropped'), 'viewers'),
  ]);
  const scene = hasRoute(`GET ${API}/edge/3d`) ? (await ip.getJson<{ verdicts_in_buffer: number }>(`${API}/edge/3d`)).body : null;
  const sceneCap = s.config.stream.sceneSize;
  add('scene-buffer', 'pass', scene ? `${scene.verdicts_in_buffer} of ${sceneCap} verdicts buffered` : 'scene unavailable', [
    obs('fill', scene?.verdicts_in_buffer ?? null, 'verdicts'),
    obs('capacity', sceneCap, 'verdicts', 'config'),
  ]);
  add('cortex-bus', mesh?.E ? 'pass' : 'warn', mesh?.E ? `wire E ${mesh.E.status}` : 'wire E absent from the wire board', [obs('events', meshCount('E', 'events'), 'count')]);
  add('trace-ring', 'pass', `${s.traces.size} of ${s.traces.capacity} traces kept`, [obs('size', s.traces.size, 'traces'), obs('total', s.traces.total, 'traces'), obs('capacity', s.traces.capacity, 'traces', 'config')]);
  add('metrics-registry', 'pass', `${s.metrics.registry.getMetricsAsArray().length} metric families`, [obs('families', s.metrics.registry.getMetricsAsArray().length, 'count')]);

  const adsb = s.adsb();
  add('adsb-cache', adsb.live ? 'pass' : 'warn', adsb.live ? `live snapshot, ${adsb.aircraft} aircraft` : `not live: serving ${adsb.snapshotAgeS === null ? 'no snapshot' : `a ${adsb.snapshotAgeS} s old snapshot`} (capped at warn)`, [
    obs('live', adsb.live, 'boolean', 'computed'),
    obs('aircraft', adsb.aircraft, 'count'),
    obs('snapshot_age', adsb.snapshotAgeS, 's'),
  ]);
  const failing = adsb.providers.filter((pr) => pr.consecutiveFailures > 0 || pr.breaker !== 'closed');
  add('adsb-upstreams', adsb.providers.length && failing.length < adsb.providers.length ? 'pass' : 'warn', `${adsb.providers.length - failing.length} of ${adsb.providers.length} providers healthy`, [
    ...adsb.providers.flatMap((pr) => [
      obs(`${pr.name}:last_status`, pr.lastStatus, 'http-status'),
      obs(`${pr.name}:consecutive_failures`, pr.consecutiveFailures, 'count'),
      obs(`${pr.name}:breaker`, pr.breaker, 'state'),
    ]),
  ]);
  const total = s.cot.tracksTotal();
  const valid = s.cot.tracksCotValid();
  add('cot', valid === total ? 'pass' : 'fail', `${valid} of ${total} tracks CoT-valid`, [obs('tracks_total', total, 'tracks', 'computed'), obs('tracks_cot_valid', valid, 'tracks', 'computed')]);
  const fleetRoutes = keysOf(routesUsing(s.routeTable(), 'fleet-dataset'));
  const fleetCalls = countFor(counts, (c) => fleetRoutes.has(`${c.method} ${c.route}`));
  const fleet5xx = countFor(counts, (c) => fleetRoutes.has(`${c.method} ${c.route}`) && c.status >= 500);
  add('fleet-dataset', fleet5xx > 0 ? 'warn' : 'pass', `${fleetCalls} reads, ${fleet5xx} failed`, [obs('reads', fleetCalls, 'count'), obs('5xx', fleet5xx, 'count')]);
  return { nodes, counts, mesh };
}

/** Observed calls and errors per wire, where a counter exists; null where nothing is instrumented. */
export function wireCounts(s: Observed, counts: readonly RequestCount[], mesh: Record<string, MeshWire> | null): { id: string; from: string; to: string; calls: number | null; errors: number | null }[] {
  const byTarget = (target: ComponentId) => {
    const keys = keysOf(routesUsing(s.routeTable(), target));
    const mine = (c: RequestCount): boolean => keys.has(`${c.method} ${c.route}`);
    return { calls: countFor(counts, mine), errors: countFor(counts, (c) => mine(c) && c.status >= 500) };
  };
  return WIRES.map((w) => {
    let v: { calls: number | null; errors: number | null } = { calls: null, errors: null };
    if (w.mesh_wire && mesh?.[w.mesh_wire]?.counters && typeof mesh[w.mesh_wire]!.counters!.events === 'number') v = { calls: mesh[w.mesh_wire]!.counters!.events as number, errors: null };
    else if (w.from === 'gateway') v = w.to === 'trace-ring' || w.to === 'metrics-registry' ? { calls: countFor(counts, () => true), errors: null } : byTarget(w.to);
    else if (w.id === 'signer-pool') v = { calls: null, errors: null };
    return { id: w.id, from: w.from, to: w.to, ...v };
  });
}
