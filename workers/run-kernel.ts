/** Runs one kernel to its serialised body. Shared by the worker host, the kernel tests and the cost bench. */
import { REGISTRY, type KernelRegistry } from './registry.js';
import { serializeEnvelope } from './lib/envelope.js';
import { RngStreams } from '../src/lib/prng.js';
import type { KernelTask, TaskResult } from '../src/lib/tasks.js';

/** Runs `task` with the kernel of that id in `registry` (the service's unless a test adds kernels). */
export function runKernelTask(task: KernelTask, registry: KernelRegistry = REGISTRY): TaskResult {
  const started = performance.now();
  const def = registry.get(task.id);
  if (!def) return { ok: false, error: { code: 'UNKNOWN_KERNEL', msg: `unknown kernel ${task.id}` }, stats: { runMs: 0 } };
  try {
    const seed = Number(task.params.seed ?? 0);
    const output = def.run(task.params, new RngStreams(seed, def.id));
    const body = serializeEnvelope({ def, params: task.params, requestLabel: task.requestLabel, output });
    return { ok: true, value: body, stats: { runMs: performance.now() - started } };
  } catch (err) {
    // A throw from a kernel is a bug (non-finite number, broken invariant): report, never crash.
    const msg = err instanceof Error ? err.message : String(err);
    return { ok: false, error: { code: 'KERNEL_FAULT', msg }, stats: { runMs: performance.now() - started } };
  }
}
