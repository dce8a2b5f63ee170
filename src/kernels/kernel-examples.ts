/**
 * The documented example of each kernel route: the request at the defaults (query keys, or the JSON
 * `request` of a `request` kernel) and the real body the kernel answers to it, computed in-process
 * exactly as a worker would. Written to src/kernels/kernel-examples.json by npm run kernels:schemas.
 */
import { kernelParamsSchema, orderParams, type KernelDef } from '../../workers/kernel-def.js';
import { REGISTRY, type KernelRegistry } from '../../workers/registry.js';
import { runKernelTask } from '../../workers/run-kernel.js';

export interface KernelExample {
  /** The query parameters of the request: every parameter at its default, or `request` holding them as JSON. */
  query: Record<string, string | number | boolean>;
  /** The body the route answers to `query`. */
  body: unknown;
}

/** The effective parameters at the defaults (seed included), in declaration order. */
export function defaultParams(def: KernelDef): Record<string, unknown> {
  const { value, error } = kernelParamsSchema(def).validate({});
  if (error) throw new Error(`${def.id}: its defaults do not validate: ${error.message}`);
  return orderParams(def, value);
}

export function kernelExample(def: KernelDef, registry: KernelRegistry = REGISTRY): KernelExample {
  const params = defaultParams(def);
  // JSON drops a parameter without a default; the query leaves it out too
  const present = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string | number | boolean>;
  const query = def.input === 'request' ? { request: JSON.stringify(present) } : present;
  const out = runKernelTask({ kind: 'kernel', id: def.id, params, requestLabel: null }, registry);
  if (!out.ok) throw new Error(`${def.id} failed at its defaults: ${out.error.msg}`);
  return { query, body: JSON.parse(out.value) };
}

/** The examples file: one kernel per line, in registry order, so a diff names the kernels that changed. */
export function renderKernelExamples(kernels: readonly KernelDef[]): string {
  const lines = kernels.map((def) => `  ${JSON.stringify(def.id)}: ${JSON.stringify(kernelExample(def))}`);
  return `{\n${lines.join(',\n')}\n}\n`;
}
