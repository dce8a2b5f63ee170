/**
 * Features as declared plugins (in the spirit of fastify's plugin model): each has a name, the
 * names it `needs`, and what it `provides` (typed by `Provides` below, which each feature extends
 * with its own entry). buildApp orders plugins by their needs and refuses a cycle or a missing
 * provider before building anything; a plugin's `build` receives exactly what it declared.
 */
import type { Config } from '../config/schema.js';
import type { RouteDef } from '../http/route.js';
import type { Services } from './services.js';

/**
 * What each plugin gives the plugins that need it, by plugin name. Empty here: each feature adds
 * its own entry next to its plugin (`declare module '../platform/plugin.js' { interface Provides
 * { name: … } }`), so the platform knows no feature's types.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface Provides {}

/** The provides of a plugin that gives the others nothing. */
export type NoProvides = Record<string, never>;

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

/** A top-level section of the config (a feature's slice, or a platform section such as `pool`). */
export type ConfigSection = keyof Config;

/** The platform as one plugin sees it: `config` holds the sections it declared, and no other. */
export type PluginServices<C extends ConfigSection> = Omit<Services, 'config'> & { readonly config: Readonly<Pick<Config, C>> };

export interface Plugin<N extends PluginName = PluginName, D extends PluginName = PluginName, C extends ConfigSection = ConfigSection> {
  name: N;
  needs: readonly D[];
  /** The config sections `build` reads, its own slice first: `s.config` holds these and no other. */
  config: readonly C[];
  build(s: PluginServices<C>, deps: Deps<D>): Built<N> | Promise<Built<N>>;
}

export function definePlugin<N extends PluginName, D extends PluginName = never, C extends ConfigSection = never>(p: Plugin<N, D, C>): Plugin<N, D, C> {
  return p;
}

/** `s` with `config` cut down to `sections` (getters stay lazy: property descriptors are copied). */
export function servicesFor<C extends ConfigSection>(s: Services, sections: readonly C[]): PluginServices<C> {
  const config = Object.freeze(Object.fromEntries(sections.map((k) => [k, s.config[k]])) as Pick<Config, C>);
  return Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(s), config: { value: config, enumerable: true } }) as PluginServices<C>;
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
      const b = await p.build(servicesFor(s, p.config), deps);
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
