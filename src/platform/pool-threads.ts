/**
 * The Piscina pools behind the two lanes: a fixed kernel pool and a small signing pool. Kernel
 * threads lower their own scheduling priority (`pool.niceIncrement`, Linux), so on a saturated
 * machine the main thread and the signing lane get the CPU first; they never hold the signing key.
 */
import type { KeyObject } from 'node:crypto';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { entryNextTo, workerSource } from './worker-source.js';

export interface PoolOptions {
  /** The kernel lane's worker module (default `workers/host`): tests start it with a fixture
   * worker that adds fault kernels, so the production host carries no test-only code. */
  kernelWorker?: URL;
}

export interface PoolThreads {
  kernels: Piscina;
  signing: Piscina;
}

function workerEntry(name = 'host'): URL {
  return entryNextTo(`../../workers/${name}`, import.meta.url);
}

export function startThreads(cfg: Config['pool'], threads: number, signingKey: KeyObject | undefined, opts: PoolOptions): PoolThreads {
  const common = {
    idleTimeout: cfg.idleTimeoutMs,
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxOldGenerationSizeMb: cfg.maxOldGenerationSizeMb },
  };
  const kernels = new Piscina({
    ...common,
    ...workerSource(opts.kernelWorker ?? workerEntry()),
    minThreads: threads,
    maxThreads: threads,
    workerData: { niceIncrement: cfg.niceIncrement, warmup: cfg.warmup, warmupPasses: cfg.warmupPasses },
  });
  const signing = new Piscina({ ...common, ...workerSource(workerEntry('sign-host')), minThreads: cfg.signThreads, maxThreads: cfg.signThreads, workerData: { signingKey } });
  return { kernels, signing };
}

/** Thread ids of a pool's workers: a replaced (killed) worker shows as a new id. */
export function threadIds(pool: Piscina): number[] {
  return pool.threads.map((t) => t.threadId);
}
