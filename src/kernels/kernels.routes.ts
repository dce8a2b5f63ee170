/** One GET route per registered kernel, generated from the registry. */
import type { KernelRegistry } from '../../workers/registry.js';
import { kernelParamsSchema, kernelPath, type KernelDef } from '../../workers/kernel-def.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Metrics } from '../observability/metrics.js';
import type { WorkerPool } from '../platform/pool.js';
import { effectiveParams, kernelRequestQuerySchema, kernelRulesDescription, type EffectiveParams } from './kernel-params.js';
import { QUERY_MEMO_KEY_MAX, QUERY_MEMO_SIZE } from '../http/route.js';
import { RecentMemo } from '../lib/memo.js';
import { typedObject } from '../lib/params.js';
import { departureOf } from '../http/departure.js';
import { kernelResponseSchema } from './kernel-response.js';
import type { KernelDocs } from './kernel-docs.js';
import { JSON_TYPE } from '../http/json-text.js';

export interface KernelRouteDeps {
  pool: WorkerPool;
  metrics: Metrics;
  /** Generated docs of kernels the committed files do not hold (a test's fixture kernel). */
  docs?: KernelDocs;
}

export interface KernelRoutesDeps extends KernelRouteDeps {
  /** The app's kernels: the service's registry, or a test's with fixture kernels added. */
  registry: KernelRegistry;
}

export function kernelRoute(def: KernelDef, { pool, metrics, docs }: KernelRouteDeps): RouteDef {
  const path = kernelPath(def);
  const example = docs && Object.hasOwn(docs.examples, def.id) ? docs.examples[def.id] : undefined;
  // a kernel's effective parameters are a pure function of the query string: worked out once per
  // distinct query while it is recent (clients repeat queries, defaults above all)
  const effective = new RecentMemo<EffectiveParams>(QUERY_MEMO_SIZE, QUERY_MEMO_KEY_MAX);
  // one series per outcome, found once (not a label set per answer)
  const runs = {
    ok: metrics.kernelRun.series({ kernel: def.id, outcome: 'ok' }),
    timeout: metrics.kernelRun.series({ kernel: def.id, outcome: 'timeout' }),
    shed: metrics.kernelRun.series({ kernel: def.id, outcome: 'shed' }),
    error: metrics.kernelRun.series({ kernel: def.id, outcome: 'error' }),
  };
  return defineRoute({
    method: 'GET',
    path,
    uses: ['validator', 'worker-pool'],
    summary: def.summary,
    tag: 'kernels',
    kernel: def.id,
    // query kernels: the full param schema (also used for the docs); request kernels: `request` only
    query: typedObject<Record<string, unknown>>(def.input === 'query' ? kernelParamsSchema(def) : kernelRequestQuerySchema(def)),
    description: kernelRulesDescription(def),
    errors: [500, 503, 504],
    response: kernelResponseSchema(def, docs),
    ...(example ? { parameterExamples: example.query, responseExample: example.body } : {}),
    pureQuery: true,
    async handler({ query, ctx }) {
      const { params, requestLabel } = effective.get(ctx.querystring, () => effectiveParams(def, query, ctx.query));
      const task = { kind: 'kernel' as const, id: def.id, params, requestLabel };
      let body: string;
      let runMs: number;
      let waitMs: number;
      try {
        const out = await pool.run<string>(task, { departure: departureOf(ctx.res) });
        body = out.value;
        runMs = out.stats.runMs;
        waitMs = out.waitMs;
      } catch (err) {
        const code = (err as { code?: string }).code;
        runs[code === 'DEADLINE' ? 'timeout' : code === 'QUEUE_FULL' ? 'shed' : 'error'].observe(0);
        throw err;
      }
      runs.ok.observe(runMs / 1000);
      ctx.set('Server-Timing', `kernel;dur=${runMs.toFixed(3)}, queue;dur=${waitMs.toFixed(3)}`);
      ctx.res.setHeader('Content-Type', JSON_TYPE);
      return body;
    },
  });
}

export function kernelRoutes({ registry, ...deps }: KernelRoutesDeps): RouteDef[] {
  return registry.kernels.map((def) => kernelRoute(def, deps));
}
