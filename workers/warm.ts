/**
 * Warm-up (pool.warmup): a kernel thread runs every kernel once at its default parameters when it
 * starts, before it takes a task. A kernel's first call in a fresh thread otherwise pays for
 * compiling and optimising its code: 2-20x its warm time, tens of ms for the heavy ones
 * (bench/README.md). The thread reports what it ran in every probe answer.
 */
import { KERNELS } from './registry.js';
import { kernelParamsSchema, orderParams } from './kernel-def.js';
import { runKernelTask } from './run-kernel.js';

export interface WarmReport {
  /** Kernels run to a body (every registered kernel unless one failed at its defaults). */
  kernels: number;
  /** Kernels whose default call failed (their ids); they still warm up on their first request. */
  failed: string[];
  ms: number;
}

export function warmKernels(): WarmReport {
  const started = performance.now();
  let kernels = 0;
  const failed: string[] = [];
  for (const def of KERNELS) {
    const { value, error } = kernelParamsSchema(def).validate({});
    const r = error ? null : runKernelTask({ kind: 'kernel', id: def.id, params: orderParams(def, value as Record<string, unknown>), requestLabel: null });
    if (r?.ok) kernels++;
    else failed.push(def.id);
  }
  return { kernels, failed, ms: performance.now() - started };
}
