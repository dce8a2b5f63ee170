/** One GET route per registered kernel, generated from the registry. */
import { KERNELS } from '../../workers/registry.js';
import { kernelParamsSchema, kernelPath, type KernelDef } from '../../workers/kernel-def.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Metrics } from '../observability/metrics.js';
import type { WorkerPool } from '../platform/pool.js';
import { effectiveParams, kernelRequestQuerySchema, kernelRulesDescription } from './kernel-params.js';
import { kernelResponseSchema } from './kernel-response.js';

export interface KernelRouteDeps {
  pool: WorkerPool;
  metrics: Metrics;
}

export function kernelRoute(def: KernelDef, { pool, metrics }: KernelRouteDeps): RouteDef {
  const path = kernelPath(def);
  return defineRoute({
    method: 'GET',
    path,
    uses: ['validator', 'worker-pool'],
    summary: def.summary,
    tag: 'kernels',
    kernel: def.id,
    // query kernels: the full param schema (also used for the docs); request kernels: `request` only
    query: def.input === 'query' ? kernelParamsSchema(def) : kernelRequestQuerySchema(def),
    description: kernelRulesDescription(def),
    errors: [500, 503, 504],
    response: kernelResponseSchema(def),
    async handler({ query, ctx, signal }) {
      const { params, requestLabel } = effectiveParams(def, query as Record<string, unknown>, ctx.query as Record<string, unknown>);
      const task = { kind: 'kernel' as const, id: def.id, params, requestLabel };
      let body: string;
      let runMs: number;
      let waitMs: number;
      try {
        const out = await pool.run<string>(task, { signal });
        body = out.value;
        runMs = out.stats.runMs;
        waitMs = out.waitMs;
      } catch (err) {
        const code = (err as { code?: string }).code;
        metrics.kernelRun.observe({ kernel: def.id, outcome: code === 'DEADLINE' ? 'timeout' : code === 'QUEUE_FULL' ? 'shed' : 'error' }, 0);
        throw err;
      }
      metrics.kernelRun.observe({ kernel: def.id, outcome: 'ok' }, runMs / 1000);
      ctx.set('Server-Timing', `kernel;dur=${runMs.toFixed(3)}, queue;dur=${waitMs.toFixed(3)}`);
      ctx.type = 'application/json';
      return body;
    },
  });
}

export function kernelRoutes(deps: KernelRouteDeps): RouteDef[] {
  return KERNELS.map((def) => kernelRoute(def, deps));
}
