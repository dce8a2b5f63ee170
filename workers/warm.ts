/**
 * Warm-up (pool.warmup): a kernel thread runs every kernel at its default parameters when it
 * starts, before it takes a task. A kernel's first call in a fresh thread otherwise pays for
 * compiling and optimising its code. One pass is not enough: the kernels share helpers (linear
 * algebra, PRNG, the envelope), and a thread calling every kernel in turn reaches its steady speed
 * over several passes. Measured in thread CPU time (wall time on a shared machine mostly measures
 * the other processes), passes one to six over every kernel cost 4.0x, 2.4x, 1.26x, 1.15x, 1.15x,
 * 1.04x of the steady pass in one run and 3.25x, 1.75x, 1.14x, 1.04x, 1.04x, 1.0x in another. A
 * pass near steady is not every kernel warm: after four passes 12-15 of 65 kernels still took over
 * 1.2x their warm time on their first real call (V8 was still optimising their code), after sixteen
 * (pool.warmupPasses) 2-9, against 2-4 among warm calls. The thread reports what it ran in every
 * probe answer.
 */
import type { KernelRegistry } from './registry.js';
import { kernelParamsSchema, orderParams } from './kernel-def.js';
import { runKernelTask } from './run-kernel.js';
import type { KernelTask, WarmReport } from '../src/lib/tasks.js';

/** `passes` over every kernel of `registry` (pool.warmupPasses, 16 by default: see above). */
export function warmKernels(passes: number, registry: KernelRegistry): WarmReport {
  const started = performance.now();
  const calls: KernelTask[] = [];
  const failed: string[] = [];
  for (const def of registry.kernels) {
    const { value, error } = kernelParamsSchema(def).validate({});
    if (error) failed.push(def.id);
    // each task as a request brings it, through the structured clone a message makes: optimised
    // code checks object shapes (maps), and the deserialiser's differ from this module's literal's.
    // Without it the first pass of real tasks made 23-27 deoptimisations (18-19 "wrong map"), with
    // it 8-12 (5-6) (node --trace-deopt)
    else calls.push(structuredClone({ kind: 'kernel', id: def.id, params: orderParams(def, value as Record<string, unknown>), requestLabel: null }));
  }
  let ok = calls;
  for (let pass = 0; pass < passes; pass++) {
    const ran = ok.filter((task) => runKernelTask(task, registry).ok);
    if (pass === 0) {
      failed.push(...ok.filter((c) => !ran.includes(c)).map((c) => c.id));
      ok = ran;
    }
  }
  return { kernels: ok.length, passes, failed, ms: performance.now() - started };
}
