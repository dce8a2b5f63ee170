/**
 * Attack-surface graph: entry points are the routes the running app registered; components, assets
 * and external hosts come from the wiring table and the published ADS-B providers; edge counts are
 * read from the request counters and live component state. Ideas from logical attack graphs
 * (MulVAL) and the Manadhata–Wing attack-surface metric.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../lib/numbers.js';
import { inSlices } from '../core/slices.js';
import type { RouteDef } from '../http/route.js';
import type { Observed } from '../introspection/observed.js';
import { NODES as COMPONENTS } from '../introspection/components.js';
import { classify, paramNames, requestCounts, routeKey, unclassifiedPosts } from '../introspection/route-inventory.js';
import { envelope, SOURCES } from '../core/envelope.js';

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

/** Live numbers the graph's edges carry, read once per request. */
interface Live {
  /** Requests served per `METHOD route` (every status). */
  served: Map<string, number>;
  /** Requests answered 2xx per `METHOD route`. */
  ok: Map<string, number>;
  total: number;
  poolCompleted: number;
  ledgerSize: number | null;
}

interface EdgeSpec {
  from: string;
  to: string;
  relation: GraphEdge['relation'];
  observed(o: Live): number | null;
}

/**
 * Everything in the graph that depends only on the route table and the configured providers:
 * nodes, edges (with how to read each one's count), entry → asset paths, the digest and the
 * summary. Built once per app (the table never changes after start), so a request only reads the
 * counters: the whole build took 100–200 ms of main-thread time on every call.
 */
interface SurfaceModel {
  nodes: GraphNode[];
  edges: EdgeSpec[];
  paths: EntryPath[];
  graphSha256: string;
  summary: Record<string, unknown>;
}

const sum = (m: Map<string, number>, keys: readonly string[]): number => keys.reduce((a, k) => a + (m.get(k) ?? 0), 0);

async function buildModel(s: Observed): Promise<SurfaceModel> {
  const routes = s.routeTable();
  const nodes: GraphNode[] = [];
  const edges: EdgeSpec[] = [];
  const jsonLimit = s.config.http.jsonLimitBytes;
  const none = (): null => null;

  nodes.push(
    { id: 'channel:http-in', kind: 'channel', label: 'HTTP in (node:http; TLS, if any, terminates in front of the service)', attrs: { protocol: 'http', tls_terminates_here: false } },
    { id: 'channel:sse-out', kind: 'channel', label: 'Server-Sent Events out', attrs: { protocol: 'http', media_type: 'text/event-stream' } },
    { id: 'channel:https-out', kind: 'channel', label: 'HTTPS out (ADS-B upstream fetches and probes)', attrs: { protocol: 'https' } },
  );
  for (const c of COMPONENTS) nodes.push({ id: `component:${c.id}`, kind: 'component', label: c.display_name, attrs: { thread: c.thread, owns_state: c.owns_state, module: c.module } });
  for (const a of ASSETS) nodes.push({ id: a.id, kind: 'asset', label: a.asset, attrs: { asset: a.asset, property: a.property } });
  const providers = s.adsb().providers;
  const hosts = [...new Set(providers.map((p) => safeHost(p.url)))];
  for (const h of hosts) {
    const mine = providers.filter((p) => safeHost(p.url) === h);
    nodes.push({ id: `external:${h}`, kind: 'external', label: h, attrs: { providers: mine.map((p) => p.name), scheme: mine[0] ? safeScheme(mine[0].url) : null } });
  }

  let mutating = 0;
  let egress = 0;
  let kernel = 0;
  let streams = 0;
  const ledgerWriters: string[] = [];
  // the model is built at start-up: in slices, so no step holds the loop for long
  await inSlices(routes, (r) => {
    const cls = classify(r);
    const id = `entry:${routeKey(r)}`;
    const mutates = cls.writes.length > 0;
    if (mutates) mutating++;
    if (cls.egress) egress++;
    if (cls.cost === 'kernel') kernel++;
    if (cls.cost === 'stream') streams++;
    if (r.method === 'POST' && cls.writes.includes('ledger')) ledgerWriters.push(`${r.method} ${r.path}`);
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
    const key = `${r.method} ${r.path}`;
    const served = (o: Live): number => o.served.get(key) ?? 0;
    edges.push({ from: 'channel:http-in', to: id, relation: 'calls', observed: served });
    edges.push({ from: id, to: 'component:gateway', relation: 'calls', observed: served });
    for (const u of cls.uses) edges.push({ from: id, to: `component:${u}`, relation: cls.writes.includes(u) ? 'writes' : 'calls', observed: none });
    if (cls.cost === 'stream') edges.push({ from: id, to: 'channel:sse-out', relation: 'calls', observed: served });
  });

  // component → component and component → asset edges, with a live count where one exists
  const total = (o: Live): number => o.total;
  edges.push(
    { from: 'component:gateway', to: 'component:validator', relation: 'calls', observed: total },
    { from: 'component:gateway', to: 'component:ledger', relation: 'writes', observed: (o) => sum(o.ok, ledgerWriters) },
    { from: 'component:gateway', to: 'component:metrics-registry', relation: 'writes', observed: total },
    { from: 'component:gateway', to: 'asset:event-loop', relation: 'reads', observed: none },
    { from: 'component:verdict-engine', to: 'component:signer', relation: 'calls', observed: none },
    { from: 'component:signer', to: 'component:worker-pool', relation: 'calls', observed: none },
    { from: 'component:worker-pool', to: 'asset:signing-key', relation: 'reads', observed: (o) => o.poolCompleted },
    { from: 'component:signer', to: 'asset:signing-key', relation: 'reads', observed: none },
    { from: 'component:verdict-engine', to: 'component:ledger', relation: 'writes', observed: none },
    { from: 'component:ledger', to: 'asset:ledger', relation: 'writes', observed: (o) => o.ledgerSize },
    { from: 'component:scene-buffer', to: 'asset:scene-buffer', relation: 'writes', observed: none },
    { from: 'component:cot', to: 'asset:cot-tracks', relation: 'writes', observed: none },
    { from: 'component:adsb-cache', to: 'asset:adsb-cache', relation: 'writes', observed: none },
    { from: 'component:adsb-upstreams', to: 'channel:https-out', relation: 'egress', observed: none },
  );
  for (const h of hosts) edges.push({ from: 'channel:https-out', to: `external:${h}`, relation: 'egress', observed: none });

  const structure = { nodes, edges: edges.map(({ from, to, relation }) => ({ from, to, relation })) };
  const channels = nodes.filter((n) => n.kind === 'channel').length;
  const dataItems = routes.reduce((a, r) => a + paramNames(r).length + (r.body ? 1 : 0), 0);
  const pathsFrom = pathFinder(structure.edges);
  const paths: EntryPath[] = [];
  await inSlices(
    nodes.filter((n) => n.kind === 'entry'),
    (n) => void paths.push(...pathsFrom(n.id)),
  );
  return {
    nodes,
    edges,
    paths,
    graphSha256: await canonicalDigest(structure),
    summary: {
      entry_points: routes.length,
      mutating,
      egress,
      kernel,
      stream: streams,
      unauthenticated: routes.length,
      unclassified_post_routes: unclassifiedPosts(routes),
      surface: { methods: routes.length, channels, untrusted_data_items: dataItems },
      basis: 'computed',
    },
  };
}

/** The view of one app: its model is built once, after the route schemas are described (in slices after start-up). */
export function attackSurfaceView(s: Observed): { prepare(): Promise<void>; render(): Promise<Record<string, unknown>> } {
  let m: Promise<SurfaceModel> | null = null;
  const model = (): Promise<SurfaceModel> => (m ??= s.routesDescribed().then(() => buildModel(s)));
  return { prepare: () => model().then(() => undefined), render: () => attackSurface(s, model()) };
}

async function attackSurface(s: Observed, model: Promise<SurfaceModel>): Promise<Record<string, unknown>> {
  const m = await model;
  const counts = await requestCounts(s);
  const o: Live = { served: new Map(), ok: new Map(), total: 0, poolCompleted: s.pool.snapshot().completed, ledgerSize: s.ledger.size() };
  for (const c of counts) {
    const key = `${c.method} ${c.route}`;
    o.served.set(key, (o.served.get(key) ?? 0) + c.count);
    if (c.status >= 200 && c.status < 300) o.ok.set(key, (o.ok.get(key) ?? 0) + c.count);
    o.total += c.count;
  }
  return envelope('svc.attack-surface/v1', {
    generated_at: new Date().toISOString(),
    nodes: m.nodes,
    edges: m.edges.map((e): GraphEdge => ({ from: e.from, to: e.to, relation: e.relation, observed: e.observed(o) })),
    paths: m.paths,
    summary: m.summary,
    graph_sha256: m.graphSha256,
    honesty: 'Entry points are the routes this process registered; edge counts are its own request counters and component state. Technique mapping is a static table. auth is "none" on every route because the interface defines no authentication.',
    limits: [
      { code: 'NO_AUTHENTICATION', detail: 'The interface states no authentication; every entry point is public.' },
      { code: 'PARTIAL_INSTRUMENTATION', detail: 'Edges with observed=null have no counter in this service.' },
    ],
    sources: [SOURCES.mulval, SOURCES.manadhata, SOURCES.t1190, SOURCES.t1499, SOURCES.owaspApi],
  });
}

type EntryPath = { entry: string; asset: string; access: 'write' | 'read'; path: string[] };

/**
 * Breadth-first entry → asset paths of one entry node, over adjacency lists built once for all
 * entries. The gateway hub is not expanded (every entry passes through it, so expanding it would
 * connect everything to everything); paths follow the components each route's handler actually
 * reaches. `access: "write"` when every hop is a write (a mutation path), otherwise "read".
 */
function pathFinder(edges: readonly Pick<GraphEdge, 'from' | 'to' | 'relation'>[]): (entry: string) => EntryPath[] {
  const adjacency = (onlyWrites: boolean): Map<string, string[]> => {
    const adj = new Map<string, string[]>();
    for (const e of edges) {
      if (e.to === 'component:gateway' || e.from === 'component:gateway') continue;
      if (onlyWrites && e.relation !== 'writes') continue;
      const list = adj.get(e.from);
      if (list) list.push(e.to);
      else adj.set(e.from, [e.to]);
    }
    return adj;
  };
  const writeAdj = adjacency(true);
  const allAdj = adjacency(false);
  const bfs = (start: string, adj: Map<string, string[]>): Map<string, string | null> => {
    const prev = new Map<string, string | null>([[start, null]]);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const next of adj.get(queue[i]!) ?? []) {
        if (prev.has(next)) continue;
        prev.set(next, queue[i]!);
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
  return (entry) => {
    const out: EntryPath[] = [];
    const writes = bfs(entry, writeAdj);
    const all = bfs(entry, allAdj);
    for (const id of all.keys()) {
      if (!id.startsWith('asset:')) continue;
      if (writes.has(id)) out.push({ entry, asset: id, access: 'write', path: trace(writes, id) });
      else out.push({ entry, asset: id, access: 'read', path: trace(all, id) });
    }
    return out;
  };
}

/** sha256(canonicalJson({nodes, edges})), hashed element by element in slices (same bytes). */
async function canonicalDigest(g: { nodes: readonly unknown[]; edges: readonly unknown[] }): Promise<string> {
  const hash = createHash('sha256');
  // canonical key order: "edges" sorts before "nodes"
  for (const [i, [key, list]] of ([['edges', g.edges], ['nodes', g.nodes]] as const).entries()) {
    hash.update(`${i === 0 ? '{' : '],'}${JSON.stringify(key)}:[`);
    let first = true;
    await inSlices(list, (item) => {
      hash.update(`${first ? '' : ','}${canonicalJson(item)}`);
      first = false;
    });
  }
  hash.update(']}');
  return hash.digest('hex');
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

