/**
 * Features as declared plugins (in the spirit of fastify's plugin model): each has a name, the
 * names it `needs`, and what it `provides` (typed by `Provides` below, the one map of the feature
 * graph). buildApp orders plugins by their needs and refuses a cycle or a missing provider before
 * building anything; a plugin's `build` receives exactly what it declared, nothing else.
 */
import type { Enforcement } from '../core/doctrine.js';
import type { RouteDef } from '../http/route.js';
import type { AdsbFeed } from '../adsb/feed.js';
import type { CotService } from '../cot/service.js';
import type { TrackRegistry } from '../cot/tracks.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { AdsbStatus, CotStatus, LedgerStatus, Services } from './services.js';
import type { StreamCore } from '../stream/stream.feature.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';
import type { KernelRegistry } from '../../workers/registry.js';

type Nothing = Record<string, never>;

/** What each plugin gives the plugins that need it. */
export interface Provides {
  ledger: LedgerCore & { status: LedgerStatus };
  verdicts: VerdictCore;
  stream: StreamCore;
  mesh: Nothing;
  /** `status` is read at request time (tests may replace it to simulate an upstream outage). */
  adsb: { feed: AdsbFeed; status: () => AdsbStatus };
  /** `tracks`: other plugins register track sources (the simulated flight's drones). */
  cot: { service: CotService; status: CotStatus; tracks: TrackRegistry };
  fleet: Nothing;
  evidence: { enforcement(): Enforcement };
  security: Nothing;
  energy: Nothing;
  ui: Nothing;
  core: Nothing;
  /** The kernels the app serves: every listing of kernels (routes, posture inventory) reads them here. */
  kernels: { registry: KernelRegistry };
  docs: Nothing;
}

export type PluginName = keyof Provides;

/** What building a plugin yields: its provides, its routes and its life-cycle hooks. */
export interface Built<N extends PluginName = PluginName> {
  provides: Provides[N];
  routes: RouteDef[];
  /** Called once the app is built: building blocks the loop on purpose, which is not service delay. */
  ready?(): void;
  /** First step of a graceful shutdown, before connections are closed: stop producing, end streams. */
  drain?(): void;
  close?(): Promise<void> | void;
}

export type Deps<D extends PluginName> = { readonly [K in D]: Provides[K] };

export interface Plugin<N extends PluginName = PluginName, D extends PluginName = PluginName> {
  name: N;
  needs: readonly D[];
  build(s: Services, deps: Deps<D>): Built<N> | Promise<Built<N>>;
}

export function definePlugin<N extends PluginName, D extends PluginName = never>(p: Plugin<N, D>): Plugin<N, D> {
  return p;
}

/** Every plugin after what it needs, otherwise in list order; throws on a duplicate, a missing provider or a cycle. */
export function orderPlugins(list: readonly Plugin[]): Plugin[] {
  const byName = new Map<string, Plugin>();
  for (const p of list) {
    if (byName.has(p.name)) throw new Error(`plugin '${p.name}' declared twice`);
    byName.set(p.name, p);
  }
  for (const p of list) {
    for (const need of p.needs) if (!byName.has(need)) throw new Error(`plugin '${p.name}' needs '${need}', which no plugin provides`);
  }
  const ordered: Plugin[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (p: Plugin, path: string[]): void => {
    if (state.get(p.name) === 'done') return;
    if (state.get(p.name) === 'visiting') throw new Error(`plugin cycle: ${[...path, p.name].join(' -> ')}`);
    state.set(p.name, 'visiting');
    for (const need of p.needs) visit(byName.get(need)!, [...path, p.name]);
    state.set(p.name, 'done');
    ordered.push(p);
  };
  for (const p of list) visit(p, []);
  return ordered;
}

export interface BuiltPlugins {
  /** Names in build order (every plugin after what it needs). */
  order: PluginName[];
  byName: Map<PluginName, Built>;
  provides: Partial<Provides>;
}

/** Builds the plugins in dependency order; on a failure, closes what was already built and rethrows. */
export async function buildPlugins(s: Services, list: readonly Plugin[]): Promise<BuiltPlugins> {
  const provides: Partial<Record<PluginName, unknown>> = {};
  const byName = new Map<PluginName, Built>();
  const order: PluginName[] = [];
  try {
    for (const p of orderPlugins(list)) {
      const deps = Object.fromEntries(p.needs.map((n) => [n, provides[n]])) as Deps<PluginName>;
      const b = await p.build(s, deps);
      provides[p.name] = b.provides;
      byName.set(p.name, b);
      order.push(p.name);
    }
  } catch (err) {
    for (const name of [...order].reverse()) await byName.get(name)!.close?.();
    throw err;
  }
  return { order, byName, provides: provides as Partial<Provides> };
}
