/**
 * The pool without HTTP: the same kernel with the same parameters, run by a bare Piscina pool on
 * the built worker entry with the service's thread count and thread priority, `connections` tasks
 * kept in flight for the same duration. A kernel route's req/s divided by this rate is what the
 * service adds (Koa, validation, headers, metrics, the round trip), not what the kernel costs.
 */
import { Piscina } from 'piscina';
import { CONNECTIONS, DURATION_S, type Summary } from './lib.js';
import { loadConfig } from '../src/config/load.js';
import { effectiveThreads } from '../src/config/schema.js';

export interface BaselinePool {
  threads: number;
  /** The kernel threads' nice increment: the service's own (pool.niceIncrement), so that on a
   * machine busy with other work both pools get the same share of it. */
  niceIncrement: number;
  /** The kernel threads' heap cap (pool.maxOldGenerationSizeMb): V8 collects a capped heap more
   * often the lower the cap, so a baseline without it would run allocating kernels faster. */
  maxOldGenerationSizeMb: number;
}

/** The service's pool settings, as the bench starts it (production config and the environment). */
export function servicePool(): BaselinePool {
  const config = loadConfig({ env: { ...process.env, NODE_ENV: 'production' } });
  return { threads: effectiveThreads(config), niceIncrement: config.pool.niceIncrement, maxOldGenerationSizeMb: config.pool.maxOldGenerationSizeMb };
}

/**
 * A bare Piscina pool on the kernel worker entry: fixed size, one task per thread, the given
 * priority and heap cap, nothing of the service's own pool (admission, deadlines, warm-up). `entry` is the
 * built worker (`dist/`, as the bench service runs) or its sources (when run under tsx in-process).
 */
export function barePool({ threads, niceIncrement, maxOldGenerationSizeMb }: BaselinePool, entry: 'built' | 'sources' = 'built'): Piscina {
  return new Piscina({
    filename: new URL(entry === 'built' ? '../dist/workers/host.js' : '../workers/host.ts', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    concurrentTasksPerWorker: 1,
    workerData: { niceIncrement },
    resourceLimits: { maxOldGenerationSizeMb },
  });
}

export async function poolBaseline(label: string, kernelId: string, params: Record<string, unknown>, shape: BaselinePool = servicePool()): Promise<Summary> {
  const { threads } = shape;
  const pool = barePool(shape);
  const task = { kind: 'kernel', id: kernelId, params };
  // warm every thread the way the service's warm-up request does
  await Promise.all(Array.from({ length: threads * 4 }, () => pool.run(task)));
  const latencies: number[] = [];
  let errors = 0;
  let ok = 0;
  const end = performance.now() + DURATION_S * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = (await pool.run(task)) as { ok: boolean };
        if (r.ok) ok++;
        else errors++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  await pool.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number): number => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
  return { label, reqPerSec: latencies.length / DURATION_S, p50: q(0.5), p99: q(0.99), p999: q(0.999), errors, non2xx: 0, timeouts: 0, requests: latencies.length, status: { ok }, max: latencies.at(-1) ?? 0 };
}
