/**
 * Attack-surface graph (domain-data note 2.1): entry points are the routes the running app
 * registered; components, assets and external hosts come from the wiring table and the published
 * ADS-B providers; edge counts are read from the request counters and live component state.
 * Ideas from logical attack graphs (MulVAL) and the Manadhata–Wing attack-surface metric.
 */
import { canonicalJson, sha256Hex } from '../../workers/lib/numbers.js';
import type { RouteDef } from '../http/route.js';
import type { Observed } from '../evidence/observed.js';
import { NODES as COMPONENTS } from '../evidence/wiring.js';
import { classify, countFor, paramNames, requestCounts, routeKey, unclassifiedPosts } from './inventory.js';
import { envelope, SOURCES } from './envelope.js';

export interface GraphNode {
  id: string;
  kind: 'entry' | 'component' | 'asset' | 'external' | 'channel';
  label: string;
  attrs: Record<string, unknown>;
}

export interface GraphEdge {
  from: string;
  to: string;
  relation: 'calls' | 'reads' | 'writes' | 'egress';
  observed: number | null;
}

export const ASSETS = [
  { id: 'asset:signing-key', asset: 'ledger signing private key', property: 'confidentiality', holder: 'signer' },
  { id: 'asset:ledger', asset: 'khipu ledger', property: 'integrity', holder: 'ledger' },
  { id: 'asset:scene-buffer', asset: 'edge scene buffer', property: 'integrity', holder: 'scene-buffer' },
  { id: 'asset:cot-tracks', asset: 'ingested CoT tracks', property: 'integrity', holder: 'cot' },
  { id: 'asset:adsb-cache', asset: 'ADS-B snapshot cache', property: 'integrity, availability', holder: 'adsb-cache' },
  { id: 'asset:event-loop', asset: 'main-thread event loop', property: 'availability', holder: 'gateway' },
] as const;

/** Technique mapping, one line of reason each (ATT&CK v16, OWASP API Security Top 10 2023). */
function techniques(r: RouteDef, cls: ReturnType<typeof classify>): { id: string; name: string; reason: string }[] {
  const out = [{ id: 'T1190', name: 'Exploit Public-Facing Application', reason: 'every route is reachable without authentication' }];
  if (cls.cost !== 'cheap') {
    out.push({ id: 'T1499.003', name: 'Endpoint Denial of Service: Application Exhaustion Flood', reason: cls.cost === 'stream' ? 'long-lived stream holding a viewer slot' : 'each call costs worker-pool time' });
    out.push({ id: 'API4:2023', name: 'Unrestricted Resource Consumption', reason: 'bounded by parameter limits, pool queue (503) and task deadline (504)' });
  }
  if (cls.writes.includes('ledger') || cls.writes.includes('scene-buffer')) {
    out.push({ id: 'T1565.001', name: 'Data Manipulation: Stored Data Manipulation', reason: 'appends to the ledger or the edge scene' });
  }
  if (cls.egress) out.push({ id: 'API10:2023', name: 'Unsafe Consumption of APIs', reason: 'consumes third-party ADS-B aggregator data' });
  if (r.html) out.push({ id: 'API8:2023', name: 'Security Misconfiguration', reason: 'HTML page: relies on the CSP and framing headers' });
  return out;
}

export async function attackSurface(s: Observed): Promise<Record<string, unknown>> {
  const routes = s.routeTable();
  const counts = await requestCounts(s);
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const jsonLimit = s.config.http.jsonLimitBytes;

  nodes.push(
    { id: 'channel:http-in', kind: 'channel', label: 'HTTP in (node:http; TLS, if any, terminates in front of the service)', attrs: { protocol: 'http', tls_terminates_here: false } },
    { id: 'channel:sse-out', kind: 'channel', label: 'Server-Sent Events out', attrs: { protocol: 'http', media_type: 'text/event-stream' } },
    { id: 'channel:https-out', kind: 'channel', label: 'HTTPS out (ADS-B upstream fetches and probes)', attrs: { protocol: 'https' } },
  );
  for (const c of COMPONENTS) nodes.push({ id: `component:${c.id}`, kind: 'component', label: c.display_name, attrs: { thread: c.thread, owns_state: c.owns_state, module: c.module } });
  for (const a of ASSETS) nodes.push({ id: a.id, kind: 'asset', label: a.asset, attrs: { asset: a.asset, property: a.property } });
  const providers = s.adsb().providers;
  const hosts = [...new Set(providers.map((p) => safeHost(p.url)))];
  for (const h of hosts) nodes.push({ id: `external:${h}`, kind: 'external', label: h, attrs: { providers: providers.filter((p) => safeHost(p.url) === h).map((p) => p.name), scheme: providers.find((p) => safeHost(p.url) === h) ? safeScheme(providers.find((p) => safeHost(p.url) === h)!.url) : null } });

  let mutating = 0;
  let egress = 0;
  let kernel = 0;
  let streams = 0;
  for (const r of routes) {
    const cls = classify(r);
    const id = `entry:${routeKey(r)}`;
    const mutates = cls.writes.length > 0;
    if (mutates) mutating++;
    if (cls.egress) egress++;
    if (cls.cost === 'kernel') kernel++;
    if (cls.cost === 'stream') streams++;
    const hasBody = Boolean(r.body);
    nodes.push({
      id,
      kind: 'entry',
      label: routeKey(r),
      attrs: {
        method: r.method,
        path: routeKey(r).slice(r.method.length + 1),
        params: paramNames(r),
        has_body: hasBody,
        body_limit_bytes: hasBody ? (r.bodyLimitBytes ?? jsonLimit) : null,
        mutates,
        egress: cls.egress,
        cost_class: cls.cost,
        auth: 'none',
        techniques: techniques(r, cls),
      },
    });
    const served = countFor(counts, (c) => c.method === r.method && c.route === r.path);
    edges.push({ from: 'channel:http-in', to: id, relation: 'calls', observed: served });
    edges.push({ from: id, to: 'component:gateway', relation: 'calls', observed: served });
    for (const u of cls.uses) edges.push({ from: id, to: `component:${u}`, relation: cls.writes.includes(u) ? 'writes' : 'calls', observed: null });
    if (cls.cost === 'stream') edges.push({ from: id, to: 'channel:sse-out', relation: 'calls', observed: served });
  }

  // component → component and component → asset edges, with a live count where one exists
  const ledgerWriters = routes.filter((r) => classify(r).writes.includes('ledger') && r.method === 'POST');
  const ledgerWrites = countFor(counts, (c) => c.status >= 200 && c.status < 300 && ledgerWriters.some((r) => r.method === c.method && r.path === c.route));
  const pool = s.pool.snapshot();
  edges.push(
    { from: 'component:gateway', to: 'component:validator', relation: 'calls', observed: countFor(counts, () => true) },
    { from: 'component:gateway', to: 'component:ledger', relation: 'writes', observed: ledgerWrites },
    { from: 'component:gateway', to: 'component:metrics-registry', relation: 'writes', observed: countFor(counts, () => true) },
    { from: 'component:gateway', to: 'asset:event-loop', relation: 'reads', observed: null },
    { from: 'component:verdict-engine', to: 'component:signer', relation: 'calls', observed: null },
    { from: 'component:signer', to: 'component:worker-pool', relation: 'calls', observed: null },
    { from: 'component:worker-pool', to: 'asset:signing-key', relation: 'reads', observed: pool.completed },
    { from: 'component:signer', to: 'asset:signing-key', relation: 'reads', observed: null },
    { from: 'component:verdict-engine', to: 'component:ledger', relation: 'writes', observed: null },
    { from: 'component:ledger', to: 'asset:ledger', relation: 'writes', observed: s.ledger.size() },
    { from: 'component:scene-buffer', to: 'asset:scene-buffer', relation: 'writes', observed: null },
    { from: 'component:cot', to: 'asset:cot-tracks', relation: 'writes', observed: null },
    { from: 'component:adsb-cache', to: 'asset:adsb-cache', relation: 'writes', observed: null },
    { from: 'component:adsb-upstreams', to: 'channel:https-out', relation: 'egress', observed: null },
  );
  for (const h of hosts) edges.push({ from: 'channel:https-out', to: `external:${h}`, relation: 'egress', observed: null });

  const paths = entryPaths(nodes, edges);
  const unauthenticated = routes.length;
  const channels = nodes.filter((n) => n.kind === 'channel').length;
  const dataItems = routes.reduce((a, r) => a + paramNames(r).length + (r.body ? 1 : 0), 0);
  const graph = { nodes, edges };
  return envelope('svc.attack-surface/v1', {
    generated_at: new Date().toISOString(),
    nodes,
    edges,
    paths,
    summary: {
      entry_points: routes.length,
      mutating,
      egress,
      kernel,
      stream: streams,
      unauthenticated,
      unclassified_post_routes: unclassifiedPosts(routes),
      surface: { methods: routes.length, channels, untrusted_data_items: dataItems },
      basis: 'computed',
    },
    graph_sha256: sha256Hex(canonicalJson(stripObserved(graph))),
    honesty: 'Entry points are the routes this process registered; edge counts are its own request counters and component state. Technique mapping is a static table. auth is "none" on every route because the interface defines no authentication.',
    limits: [
      { code: 'NO_AUTHENTICATION', detail: 'The interface states no authentication; every entry point is public.' },
      { code: 'PARTIAL_INSTRUMENTATION', detail: 'Edges with observed=null have no counter in this service.' },
    ],
    sources: [SOURCES.mulval, SOURCES.manadhata, SOURCES.t1190, SOURCES.t1499, SOURCES.owaspApi],
  });
}

/** The digest covers the structure, not the counters, so it changes only when the surface does. */
function stripObserved(g: { nodes: GraphNode[]; edges: GraphEdge[] }): unknown {
  return { nodes: g.nodes, edges: g.edges.map(({ from, to, relation }) => ({ from, to, relation })) };
}

/**
 * Breadth-first entry → asset paths. The gateway hub is not expanded (every entry passes through
 * it, so expanding it would connect everything to everything); paths follow the components each
 * route's handler actually reaches. `access: "write"` when every hop is a write (a mutation path),
 * otherwise "read".
 */
export function entryPaths(nodes: readonly GraphNode[], edges: readonly GraphEdge[]): { entry: string; asset: string; access: 'write' | 'read'; path: string[] }[] {
  const bfs = (start: string, onlyWrites: boolean): Map<string, string | null> => {
    const adj = new Map<string, string[]>();
    for (const e of edges) {
      if (e.to === 'component:gateway' || e.from === 'component:gateway') continue;
      if (onlyWrites && e.relation !== 'writes') continue;
      adj.set(e.from, [...(adj.get(e.from) ?? []), e.to]);
    }
    const prev = new Map<string, string | null>([[start, null]]);
    const queue = [start];
    while (queue.length) {
      const cur = queue.shift()!;
      for (const next of adj.get(cur) ?? []) {
        if (prev.has(next)) continue;
        prev.set(next, cur);
        queue.push(next);
      }
    }
    return prev;
  };
  const trace = (prev: Map<string, string | null>, id: string): string[] => {
    const path: string[] = [];
    for (let at: string | null = id; at !== null; at = prev.get(at) ?? null) path.unshift(at);
    return path;
  };
  const out: { entry: string; asset: string; access: 'write' | 'read'; path: string[] }[] = [];
  for (const n of nodes) {
    if (n.kind !== 'entry') continue;
    const writes = bfs(n.id, true);
    const all = bfs(n.id, false);
    for (const id of all.keys()) {
      if (!id.startsWith('asset:')) continue;
      if (writes.has(id)) out.push({ entry: n.id, asset: id, access: 'write', path: trace(writes, id) });
      else out.push({ entry: n.id, asset: id, access: 'read', path: trace(all, id) });
    }
  }
  return out;
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function safeScheme(url: string): string | null {
  try {
    return new URL(url).protocol.replace(/:$/, '');
  } catch {
    return null;
  }
}

