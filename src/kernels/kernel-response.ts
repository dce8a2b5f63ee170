/**
 * The response schema of a kernel route: the envelope of workers/lib/envelope.ts (one shape for
 * every kernel), with the kernel's id, its effective parameter keys and, for `request` kernels, the
 * request label and hash. `result`, `checks` and `constants` are the kernel's own (see its file).
 */
import type { Schema } from 'joi';
import { KERNEL_SCHEMA } from '../../workers/lib/envelope.js';
import { SEED_MAX } from '../lib/params.js';
import type { KernelDef } from '../../workers/kernel-def.js';
import { described } from '../http/schema-walk.js';
import { any, hex64, int, listOf, nullable, object, oneOf, shape, str } from '../http/response-schema.js';

const cache = new WeakMap<KernelDef, Schema>();

export function kernelResponseSchema(def: KernelDef): Schema {
  let s = cache.get(def);
  if (s) return s;
  // a parameter without a default is absent from `params` when not given (JSON drops undefined)
  const keys = Object.entries(def.params).map(([k, schema]) => [k, described(schema).flags?.default === undefined ? any().optional() : any()]);
  const params = shape(Object.fromEntries([['seed', any()], ...keys])).description(
    'The effective parameters (defaults applied), seed first, in the order of the kernel note',
  );
  s = shape({
    schema: oneOf(KERNEL_SCHEMA),
    kernel: oneOf(def.id),
    kernel_version: int().min(1),
    technique: str(),
    references: listOf(str()),
    seed: int().min(0).max(SEED_MAX),
    params,
    ...(def.input === 'request'
      ? {
          request_label: nullable(str()).description('`request` when it was not a JSON object (an opaque label, defaults applied), else null'),
          request_sha256: hex64().description('SHA-256 of the canonical JSON of `params`: names the computation'),
        }
      : {}),
    data_kind: oneOf('computed'),
    synthetic_inputs: oneOf(true),
    constants: object().optional().description('Fixed internal sizes and hyper-parameters the computation used'),
    result: object().description("The kernel's computed fields (floats rounded to 12 significant digits; long series sampled with their SHA-256)"),
    checks: object().description("The kernel's own residuals for its invariants (informative)"),
    ...(def.informative
      ? { informative: shape(Object.fromEntries(Object.keys(def.informative).map((k) => [k, str()]))).description('Fields of `result` (dotted paths) that are diagnostics, not answers, each with the reason') }
      : {}),
    honesty: str(),
  }).description(`Kernel envelope (${KERNEL_SCHEMA}) of ${def.id}`);
  cache.set(def, s);
  return s;
}
