/**
 * The `request` query parameter, untyped in the interface: either a JSON object of parameters or a
 * free label. A value that starts with `{` is JSON and must be a valid object for `schema` (422
 * otherwise, with locations under `query.request`); anything else is a label and the schema's
 * defaults apply. One reader for every route that takes `request` (the kernels and the khipu DAG).
 */
import type { ObjectSchema } from 'joi';
import { Errors } from './errors.js';
import { validatePart } from './validation.js';

export interface RequestParam<T> {
  value: T;
  /** The label, when `request` was not JSON. */
  label: string | null;
  /** The parsed object as sent (for error inputs of later checks); empty for a label. */
  raw: Record<string, unknown>;
}

export function parseRequestParam<T>(text: string, schema: ObjectSchema): RequestParam<T> {
  if (!text.trimStart().startsWith('{')) return { value: schema.validate({}).value as T, label: text, raw: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    throw Errors.validation([{ type: 'json_invalid', loc: ['query', 'request'], msg: `request must be a JSON object: ${msg}`, input: text.slice(0, 200), ctx: { error: msg } }]);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw Errors.validation([{ type: 'dict_type', loc: ['query', 'request'], msg: 'Input should be a JSON object', input: text.slice(0, 200) }]);
  }
  const { value, issues } = validatePart<T>(schema, 'query', parsed, ['request']);
  if (issues.length) throw Errors.validation(issues);
  return { value, label: null, raw: parsed as Record<string, unknown> };
}
