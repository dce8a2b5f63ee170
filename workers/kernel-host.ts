/**
 * The kernel lane's task handler for one kernel registry: the service's (host.ts) or, in tests, the
 * service's plus fixture kernels. Dispatches a task by kind; kernels are pure and synchronous, so
 * the handler never leaves a floating promise behind (lost silently under atomics:'sync').
 */
import { getPriority } from 'node:os';
import { threadId as workerThreadId, workerData } from 'node:worker_threads';
import { runKernelTask } from './run-kernel.js';
import { prepareCot } from '../src/lib/cot/prepare.js';
import type { KernelRegistry } from './registry.js';
import type { Task, TaskResult, WarmReport } from '../src/lib/tasks.js';
import { verifyItems } from './verify-host.js';
import { warmKernels } from './warm.js';
import { stepBack, threadId } from './lib/thread-priority.js';

/**
 * Called once per thread, when the worker module loads: it warms up before the thread reports
 * ready (piscina loads the module first), so no task waits behind it.
 */
export function kernelHost(registry: KernelRegistry): (task: Task) => TaskResult<unknown> {
  const data = (workerData ?? {}) as { niceIncrement?: number; warmup?: boolean; warmupPasses?: number };
  const tid = threadId();
  // before the thread steps back (below): the service serves nothing but /health until every
  // thread is warm, and a thread at nice 10 on a busy machine took 20 s instead of 3 for it
  const warmed: WarmReport = data.warmup ? warmKernels(data.warmupPasses ?? 1, registry) : { kernels: 0, passes: 0, failed: [], ms: 0 };

  // kernel threads step back: two kernels saturating two cores then no longer delay every answer of the main thread
  stepBack(tid, data.niceIncrement ?? 0);

  function nice(): number | null {
    try {
      return tid === null ? null : getPriority(tid);
    } catch {
      return null;
    }
  }

  return function handle(task: Task): TaskResult<unknown> {
    switch (task.kind) {
      case 'kernel':
        return runKernelTask(task, registry);
      case 'sign':
      case 'receipts':
        // signing runs in its own lane (workers/sign-host.ts); kernel threads never hold the key
        return { ok: false, error: { code: 'BAD_TASK', msg: 'signing runs in the signing lane' }, stats: { runMs: 0 } };
      case 'verify': {
        const started = performance.now();
        const ok = verifyItems(task);
        return { ok: true, value: ok, stats: { runMs: performance.now() - started } };
      }
      case 'cot': {
        const started = performance.now();
        const value = prepareCot(task);
        return { ok: true, value, stats: { runMs: performance.now() - started } };
      }
      case 'probe':
        return { ok: true, value: { pid: process.pid, at: performance.now(), nice: nice(), threadId: workerThreadId, tid, warm: warmed }, stats: { runMs: 0 } };
      default:
        return { ok: false, error: { code: 'BAD_TASK', msg: 'unknown task kind' }, stats: { runMs: 0 } };
    }
  };
}
