/**
 * Effective params of a kernel call, echoed in every body so an answer says what it computed. The
 * route layer has already validated the query against the kernel's schema (`query` kernels) or
 * `request` as a 1..4096-char string (`request` kernels). Here: cross-parameter constraints, and
 * for `request` kernels the JSON object inside `request` (validated like query keys,
 * `loc: ["query","request",<key>]`) or, for any other string, an opaque label with defaults.
 */
import type { ObjectSchema } from 'joi';
import { Joi } from '../lib/code-points.js';
import { toJsonSchema } from '../docs/joi-to-json-schema.js';
import { described } from '../http/schema-walk.js';
import { kernelParamsSchema, orderParams, type KernelDef } from '../../workers/kernel-def.js';
import { Errors, type ValidationIssue } from '../http/errors.js';
import { parseRequestParam } from '../http/request-param.js';
import type { ObjectParam } from '../lib/params.js';

export const REQUEST_MAX_CHARS = 4096;

export const requestQuerySchema = Joi.object({
  request: Joi.string().min(1).max(REQUEST_MAX_CHARS).required(),
});

/**
 * `request` documented for one route: a JSON object of `keys` (described by `keysSchema`, which
 * also becomes the JSON Schema `contentSchema` of the string) or any other string as a label.
 */
export function requestParamSchema(keysSchema: ObjectSchema, what: string): ObjectParam<{ request: string }> {
  const keys = Object.keys(described(keysSchema).keys ?? {});
  return Joi.object({
    request: Joi.string()
      .min(1)
      .max(REQUEST_MAX_CHARS)
      .required()
      .description(
        `${what}: a JSON object whose keys are the parameters (${keys.join(', ')}; each optional, validated like a query parameter, a bad one is 422 at ` +
          `loc ["query", "request", <key>], an unknown key extra_forbidden), or any other string of 1 to ${REQUEST_MAX_CHARS} characters, ` +
          'an opaque label echoed as request_label with every default applied. contentSchema gives the keys.',
      )
      .meta({ jsonSchema: { contentMediaType: 'application/json', contentSchema: toJsonSchema(keysSchema) } }),
  });
}

const requestSchemas = new WeakMap<KernelDef, ObjectSchema>();

/** The query schema of a `request` kernel route (same validation as `requestQuerySchema`, documented). */
export function kernelRequestQuerySchema(def: KernelDef): ObjectParam<{ request: string }> {
  let s = requestSchemas.get(def);
  if (!s) requestSchemas.set(def, (s = requestParamSchema(kernelParamsSchema(def), `The parameters of ${def.id}`)));
  return s;
}

/** The cross-parameter rules the kernel declares, as the route's description; undefined when it has none. */
export function kernelRulesDescription(def: KernelDef): string | undefined {
  const rules = def.rules ?? [];
  if (!rules.length) return undefined;
  const where = def.input === 'request' ? ' (keys of the JSON `request`)' : '';
  return `Cross-parameter rules${where}, each checked after the per-parameter bounds; a violation is 422 \`value_error\` at the parameter it names: ${rules.map((r) => `${r}.`).join(' ')}`;
}

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
