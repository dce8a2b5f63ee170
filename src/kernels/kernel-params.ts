/**
 * Effective params of a kernel call (design section 3). The route layer has already validated the
 * query against the kernel's schema (`query` kernels) or `request` as a 1..4096-char string
 * (`request` kernels). Here: cross-parameter constraints, and for `request` kernels the JSON object
 * inside `request` (validated like query keys, `loc: ["query","request",<key>]`) or, for any other
 * string, an opaque label with defaults.
 */
import Joi from 'joi';
import { kernelParamsSchema, orderParams, type KernelDef } from '../../workers/kernel-def.js';
import { Errors, type ValidationIssue } from '../http/errors.js';
import { validatePart } from '../http/validation.js';

export const REQUEST_MAX_CHARS = 4096;

export const requestQuerySchema = Joi.object({
  request: Joi.string().min(1).max(REQUEST_MAX_CHARS).required(),
});

export interface EffectiveParams {
  params: Record<string, unknown>;
  requestLabel: string | null;
}

function fail(issues: ValidationIssue[]): never {
  throw Errors.validation(issues);
}

function checkConstraints(def: KernelDef, value: Record<string, unknown>, raw: Record<string, unknown>, prefix: string[]): void {
  const issues = (def.constraints?.(value) ?? []).map(
    (v): ValidationIssue => ({ type: 'value_error', loc: ['query', ...prefix, v.param], msg: `Value error, ${v.msg}`, input: raw[v.param] ?? null, ctx: { error: {} } }),
  );
  if (issues.length) fail(issues);
}

/** `validated` is the query after the route schema; `raw` the query as received. */
export function effectiveParams(def: KernelDef, validated: Record<string, unknown>, raw: Record<string, unknown>): EffectiveParams {
  if (def.input === 'query') {
    checkConstraints(def, validated, raw, []);
    return { params: orderParams(def, validated), requestLabel: null };
  }
  const text = String(validated.request);
  if (!text.trimStart().startsWith('{')) {
    const { value } = kernelParamsSchema(def).validate({});
    return { params: orderParams(def, value as Record<string, unknown>), requestLabel: text };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    fail([{ type: 'json_invalid', loc: ['query', 'request'], msg: `request must be a JSON object: ${msg}`, input: text.slice(0, 200), ctx: { error: msg } }]);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail([{ type: 'dict_type', loc: ['query', 'request'], msg: 'Input should be a JSON object', input: text.slice(0, 200) }]);
  }
  const inner = validatePart<Record<string, unknown>>(kernelParamsSchema(def), 'query', parsed, ['request']);
  if (inner.issues.length) fail(inner.issues);
  checkConstraints(def, inner.value, parsed as Record<string, unknown>, ['request']);
  return { params: orderParams(def, inner.value), requestLabel: null };
}
