/**
 * The response envelope of every kernel (one shape for the whole project; kernels-a 0.1 and
 * kernels-c C1 reconciled). The body is serialised in the worker so the main thread only copies a
 * string, and it is a pure function of (kernel, params): no timings, no clocks.
 */
import type { KernelDef, KernelOutput } from '../kernel-def.js';
import { canonicalJson, roundDeep, sha256Hex } from '../../src/lib/numbers.js';

export const KERNEL_SCHEMA = 'svc.kernel/v1';

export interface EnvelopeInput {
  def: KernelDef;
  params: Record<string, unknown>;
  /** For `request` kernels: the opaque label when `request` was not a JSON object, else null. */
  requestLabel?: string | null;
  output: KernelOutput;
}

export function buildEnvelope({ def, params, requestLabel, output }: EnvelopeInput): Record<string, unknown> {
  return {
    schema: KERNEL_SCHEMA,
    kernel: def.id,
    kernel_version: def.version,
    technique: def.technique,
    references: def.references,
    seed: params.seed,
    params,
    // request kernels name their computation by the hash of the effective params (kernels-a 0.3)
    ...(def.input === 'request' ? { request_label: requestLabel ?? null, request_sha256: sha256Hex(canonicalJson(params)) } : {}),
    data_kind: 'computed',
    synthetic_inputs: true,
    ...(output.constants ? { constants: roundDeep(output.constants, '$.constants') } : {}),
    result: roundDeep(output.result, '$.result'),
    checks: roundDeep(output.checks ?? {}, '$.checks'),
    ...(def.informative ? { informative: def.informative } : {}),
    honesty: def.honesty,
  };
}

export function serializeEnvelope(input: EnvelopeInput): string {
  return JSON.stringify(buildEnvelope(input));
}
