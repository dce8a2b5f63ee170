/** In-process kernel calls for unit tests: same validation and envelope as the service, no pool. */
import type { KernelDef, KernelOutput } from '../../workers/kernel-def.js';
import { kernelParamsSchema, orderParams } from '../../workers/kernel-def.js';
import { RngStreams } from '../../src/lib/prng.js';
import { runKernelTask } from '../../workers/run-kernel.js';

/** Parameters after defaults and validation; throws on a value the route would answer 422 to. */
export function paramsFor(def: KernelDef, overrides: Record<string, unknown> = {}): Record<string, any> {
  const { value, error } = kernelParamsSchema(def).validate(overrides, { abortEarly: false });
  if (error) throw new Error(`invalid params for ${def.id}: ${error.message}`);
  const violations = def.constraints?.(value) ?? [];
  if (violations.length) throw new Error(`constraint violated for ${def.id}: ${violations.map((v) => v.msg).join('; ')}`);
  return orderParams(def, value);
}

/** The kernel's raw (unrounded) output. */
export function runRaw(def: KernelDef, overrides: Record<string, unknown> = {}): KernelOutput & { params: Record<string, any> } {
  const params = paramsFor(def, overrides);
  return { ...def.run(params, new RngStreams(params.seed as number, def.id)), params };
}

/** The serialised body exactly as the route would send it. */
export function runBody(def: KernelDef, overrides: Record<string, unknown> = {}): string {
  const res = runKernelTask({ kind: 'kernel', id: def.id, params: paramsFor(def, overrides) });
  if (!res.ok) throw new Error(`${def.id} failed: ${res.error.msg}`);
  return res.value;
}

/** Validation failures as `key:joi-type` strings (constraints as `key:constraint`), or [] when accepted. */
export function rejects(def: KernelDef, overrides: Record<string, unknown>): string[] {
  const { value, error } = kernelParamsSchema(def).validate(overrides, { abortEarly: false });
  if (error) return error.details.map((d) => `${d.path.join('.')}:${d.type}`);
  return (def.constraints?.(value) ?? []).map((v) => `${v.param}:constraint`);
}
