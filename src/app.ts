/**
 * buildApp(config) → { app, services, routes, close }. No listen, no module-level state: tests
 * build a fresh app per file. Features are wired here, in one list, each returning its routes.
 */
import type Koa from 'koa';
import type { Config } from './config/schema.js';
import { effectiveThreads } from './config/schema.js';
import { projectJson } from './config/load.js';
import { HealthRegistry } from './platform/health.js';
import { docsPlugin } from './docs/docs.feature.js';
import { describeInSlices } from './http/describe.js';
import { createKoaApp } from './http/koa-app.js';
import { writeGuard } from './http/write-guard.js';
import { ShedGovernor } from './http/shed.js';
import { clientAddressOf } from './http/client-address.js';
import { atMountPath, routeSchemas, type RouteDef } from './http/route.js';
import { kernelsPlugin } from './kernels/kernels.feature.js';
import type { KernelDocs } from './kernels/kernel-docs.js';
import { REGISTRY, type KernelRegistry } from '../workers/registry.js';
import { WorkerPool } from './platform/pool.js';
import { EventLoopMonitor } from './observability/event-loop.js';
import { createLogger, type Logger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import { operatorMetrics } from './observability/operator.metrics.js';
import { buildInfo } from './observability/build-info.js';
import { Ring } from './lib/ring.js';
import type { TraceRecord } from './observability/traces.js';
import type { Services } from './platform/services.js';
import { buildPlugins, type Plugin, type PluginName, type Provides } from './platform/plugin.js';
import { corePlugin } from './core/core.routes.js';
import { adsbPlugin } from './adsb/adsb.feature.js';
import { alertsPlugin } from './alerts/alerts.feature.js';
import { ledgerPlugin } from './ledger/ledger.feature.js';
import { resolveSigningKey } from './ledger/keys.js';
import { openStore } from './ledger/store/open-store.js';
import { streamPlugin } from './stream/stream.feature.js';
import { verdictsPlugin } from './verdicts/verdicts.feature.js';
import { meshPlugin } from './mesh/mesh.feature.js';
import { cotPlugin } from './cot/cot.feature.js';
import { takPlugin } from './tak/tak.feature.js';
import { fleetPlugin } from './fleet/fleet.feature.js';
import { securityPlugin } from './security/security.feature.js';
import { evidencePlugin } from './evidence/evidence.feature.js';
import { energyPlugin } from './energy/energy.feature.js';
import { uiPlugin } from './ui/ui.feature.js';
import { InProcessClient } from './http/in-process.js';

export interface BuiltApp {
  app: Koa;
  services: Services;
  /** What each plugin provides (tests read state through it). */
  provided: Provides;
  routes: readonly RouteDef[];
  /** Graceful shutdown, step one: features stop producing and end their streams (flight stopped first). */
  drain(): void;
  close(): Promise<void>;
}

export interface BuildOptions {
  log?: Logger;
  /** The kernel lane's worker module (tests: a fixture that adds fault or fixture kernels). */
  kernelWorker?: URL;
  /** The kernels to serve (default: workers/registry.ts); another registry needs a `kernelWorker` whose host runs it. */
  kernels?: KernelRegistry;
  /** Generated docs of kernels of `kernels` that src/kernels/*.json do not hold (a test's fixture kernel). */
  kernelDocs?: KernelDocs;
}

const PACKAGE_VERSION = projectJson<{ version: string }>('package.json').version;

export async function buildApp(config: Readonly<Config>, opts: BuildOptions = {}): Promise<BuiltApp> {
  const log = opts.log ?? createLogger(config.log.level);
  const eventLoop = new EventLoopMonitor();
  const metrics = new Metrics(eventLoop);
  // the store first: in file mode it takes the data directory's lock before anything is written
  const store = await openStore(config.ledger, { retryAfterS: config.pool.retryAfterS, log });
  // the key exists before the pool: workers receive it once, at start, never with a task
  let key;
  try {
    key = resolveSigningKey(config.ledger);
  } catch (err) {
    await store.close();
    throw err;
  }
  const pool = new WorkerPool(config.pool, effectiveThreads(config), log, key.privateKey, { kernelWorker: opts.kernelWorker });
  metrics.observePool(() => pool.detailedSnapshot());
  const health = new HealthRegistry();
  const routes: RouteDef[] = [];
  const services: Services = {
    config,
    log,
    metrics,
    eventLoop,
    pool,
    traces: new Ring<TraceRecord>(config.http.traceRingSize),
    health,
    startedAt: new Date(),
    releaseId: `${PACKAGE_VERSION}+${process.env.SVC_RELEASE_ID ?? 'local'}`,
    routeTable: () => routes,
    plugins: () => names,
    get inProcess() {
      return (inProcess ??= new InProcessClient(services));
    },
    routesDescribed: () => described,
  };
  let inProcess: InProcessClient | undefined;
  let names: PluginName[] = [];

  health.register('worker-pool:utilization', () => {
    const snap = pool.snapshot();
    // not ready until every kernel thread has started (and, with pool.warmup, run every kernel once)
    const starting = !pool.started;
    return {
      componentType: 'component',
      observedValue: snap.busy,
      observedUnit: 'ratio',
      status: snap.threads === 0 || starting ? 'fail' : snap.queueSize >= snap.maxQueue ? 'warn' : 'pass',
      output: starting
        ? `starting: ${snap.threads} of ${pool.threads} threads up${config.pool.warmup ? ', each running every kernel once (pool.warmup)' : ''}`
        : `${snap.threads} threads, queue ${snap.queueSize}/${snap.maxQueue}`,
    };
  });
  health.register('event-loop:delay', () => {
    const { stallMs: stall, worstMs: worst } = eventLoop.report();
    return {
      componentType: 'system',
      observedValue: Math.round(worst * 1000) / 1000,
      observedUnit: 'ms',
      status: worst > 100 ? 'warn' : 'pass',
      ...(stall > 100 ? { output: `the event loop stalled for ${Math.round(stall)} ms within the last minute` } : {}),
    };
  });

  // the list order is the route table's order; buildPlugins builds them in the order their needs require
  const registry = opts.kernels ?? REGISTRY;
  const plugins: readonly Plugin[] = [corePlugin, kernelsPlugin(registry, opts.kernelDocs), ledgerPlugin(key, store), verdictsPlugin, streamPlugin, meshPlugin, adsbPlugin, alertsPlugin, cotPlugin, takPlugin, fleetPlugin, securityPlugin, evidencePlugin, energyPlugin, uiPlugin, docsPlugin];
  let built;
  try {
    built = await buildPlugins(services, plugins);
  } catch (err) {
    await pool.close();
    await store.close();
    throw err;
  }
  names = built.order;
  const { ledger: ledgerCore, verdicts: verdictCore, stream } = built.provides as Provides;
  operatorMetrics(metrics.registry, {
    build: buildInfo(),
    onVerdict: (l) => verdictCore.verdicts.onVerdict(l),
    checkpoints: ledgerCore.checkpoints,
    checkpointIntervalMs: config.ledger.checkpointIntervalMs,
    flight: stream.flight,
  });
  // hooks run in build order (and close in reverse); routes are mounted in list order
  const features = built.order.map((n) => built.byName.get(n)!);
  routes.push(...plugins.flatMap((p) => built.byName.get(p.name)!.routes.map(atMountPath)));
  let closed = false;
  // set once the table is complete (below); views that walk the table wait for it
  let described: Promise<void> = new Promise(() => {});

  const app = createKoaApp({
    routes,
    jsonLimitBytes: config.http.jsonLimitBytes,
    bodyTimeoutMs: config.guard.bodyTimeoutMs,
    shedLogIntervalMs: config.guard.shedLogIntervalMs,
    before: [writeGuard(config.guard, routes)],
    sheds: { governor: new ShedGovernor({ holdMaxMs: config.guard.shedHoldMaxMs, retryStepPerS: config.guard.shedRetryStepPerS, retryAfterMaxS: config.guard.shedRetryAfterMaxS }), clientOf: clientAddressOf(config.guard.trustProxy) },
    log,
    metrics,
    traces: services.traces,
  });
  // building the app blocks the loop on purpose (schemas, datasets, keys): that is not service
  // delay, and neither is starting the pool's threads, which goes on after (not ready until then)
  eventLoop.forgetStalls();
  void pool.ready().then(() => {
    if (!closed) eventLoop.forgetStalls();
  });
  // joi descriptions of every schema, warmed after start-up in slices: views that walk the route
  // table (attack surface, posture, OpenAPI) would otherwise describe it on a request, ~200 ms
  described = describeInSlices(routeSchemas(routes), () => closed);
  for (const f of features) f.ready?.();

  return {
    app,
    services,
    provided: built.provides as Provides,
    routes,
    drain() {
      for (const f of features) f.drain?.();
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const f of [...features].reverse()) await f.close?.();
      eventLoop.close();
      await pool.close();
    },
  };
}
