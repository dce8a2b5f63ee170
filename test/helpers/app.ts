/**
 * A fresh app per test file, built with config/test.json plus overrides; always closed after. Every
 * response it sends is checked against its route's declared schema (response-check.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import supertest from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import { FAULT_WORKER } from './faults.js';
import type { KernelRegistry } from '../../workers/registry.js';
import type { KernelDocs } from '../../src/kernels/kernel-docs.js';
import { responseChecker } from './response-check.js';

export interface TestApp extends BuiltApp {
  http: TestAgent;
  server: Server;
  /** http://127.0.0.1:<port> of the listening test server. */
  baseUrl: string;
}

export function testConfig(overrides: Record<string, unknown> = {}) {
  return loadConfig({ env: { NODE_ENV: 'test' }, overrides });
}

export interface TestAppOptions {
  /**
   * Check every response against its route's declared schema (default). Off only where a test
   * measures the main thread itself: the check is test-only work on the same event loop.
   */
  checkResponses?: boolean;
  /** Start the kernel pool with the fixture worker that also runs fault kernels (helpers/faults.ts). */
  faults?: boolean;
  /** Serve this registry's kernels, run by this kernel worker (helpers/fixture-kernels.ts: `FIXTURE_APP`). */
  kernels?: { registry: KernelRegistry; worker: URL; docs?: KernelDocs };
}

export async function buildTestApp(overrides: Record<string, unknown> = {}, { checkResponses = true, faults = false, kernels }: TestAppOptions = {}): Promise<TestApp> {
  const config = testConfig(overrides);
  if (faults && kernels) throw new Error('faults and kernels each bring their own kernel worker');
  const built = await buildApp(config, faults ? { kernelWorker: FAULT_WORKER } : kernels ? { kernelWorker: kernels.worker, kernels: kernels.registry, ...(kernels.docs ? { kernelDocs: kernels.docs } : {}) } : {});
  // tests start from a ready service (/health passes); with pool.warmup the warm-up tests watch it get there
  if (!config.pool.warmup) await built.services.pool.ready();
  if (checkResponses) {
    // outermost: every response a test receives is checked against its route's declared schema. Added
    // where Koa composes the chain for this server, so app.middleware stays the production chain.
    const koa = built.app as unknown as { compose: (mw: Koa.Middleware[]) => unknown };
    const compose = koa.compose.bind(koa);
    const checker = responseChecker(built.routes);
    koa.compose = (mw) => compose([checker, ...mw]);
  }
  // one real listening server per app, so concurrent requests really overlap
  const handle = built.app.callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...built,
    server,
    baseUrl,
    http: supertest(baseUrl),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await built.close();
    },
  };
}

/**
 * One app for the enclosing mocha `describe`: built in its `before`, closed in its `after`. Returns
 * the app's getter (it exists only once the hook has run). Overrides that depend on an earlier
 * hook (a fake upstream's port) are passed as a function, read when the app is built.
 */
export function withTestApp(overrides: Record<string, unknown> | (() => Record<string, unknown>) = {}, opts: TestAppOptions = {}): () => TestApp {
  let t: TestApp | undefined;
  before(async () => {
    t = await buildTestApp(typeof overrides === 'function' ? overrides() : overrides, opts);
  });
  after(() => t?.close());
  return () => {
    if (!t) throw new Error('the test app is built in before(): use it inside a test');
    return t;
  };
}

/** Minimal Prometheus text-format parser: series name → samples (prom-client writes NaN as `Nan`,
 * which Prometheus accepts too). Throws on a malformed line. */
export function parsePrometheus(text: string): Map<string, { labels: Record<string, string>; value: number }[]> {
  const out = new Map<string, { labels: Record<string, string>; value: number }[]>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (-?[0-9.eE+-]+|NaN|Nan|\+Inf|-Inf)$/.exec(line);
    if (!m) throw new Error(`malformed exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    const list = out.get(m[1]!) ?? [];
    list.push({ labels, value: Number(m[4]) });
    out.set(m[1]!, list);
  }
  return out;
}
