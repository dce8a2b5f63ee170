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
import { parseRequestParam } from '../http/request-param.js';

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
  const req = parseRequestParam<Record<string, unknown>>(String(validated.request), kernelParamsSchema(def));
  if (req.label === null) checkConstraints(def, req.value, req.raw, ['request']);
  return { params: orderParams(def, req.value), requestLabel: req.label };
}
