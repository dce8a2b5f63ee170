/**
 * joi → pydantic v2 error translation, so 422 bodies match what FastAPI clients already parse:
 * `{type, loc, msg, input, ctx?}`, every error of a request at once.
 */
import type { ObjectSchema, ValidationError, ValidationErrorItem } from 'joi';
import { Errors, MAX_ISSUES, tooMany, type ValidationIssue } from './errors.js';
import { fastAccept } from './fast-accept.js';
import { described, describedAt, hasRule, ruleLimit, walkDescribed, type Described } from './schema-walk.js';

export type Source = 'query' | 'path' | 'body';

function rawAt(raw: unknown, path: (string | number)[]): unknown {
  let node = raw;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/** Whether the field a value path leads to is an integer. */
function isIntegerSchema(schema: ObjectSchema | undefined, path: (string | number)[]): boolean {
  if (!schema || path.length === 0) return false;
  const node = describedAt(described(schema), path);
  return node !== undefined && (node.type === 'qint' || hasRule(node, 'integer'));
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

function quoteList(values: unknown[]): string {
  const q = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)));
  return q.length <= 1 ? q.join('') : `${q.slice(0, -1).join(', ')} or ${q.at(-1)}`;
}

/** One joi detail → one pydantic issue. */
function translate(d: ValidationErrorItem, schema: ObjectSchema | undefined, source: Source, raw: unknown, prefix: (string | number)[]): ValidationIssue {
  const path = d.path;
  const loc = [source, ...prefix, ...path];
  const input = rawAt(raw, path);
  const ctx = d.context ?? {};
  const limit = ctx.limit as number;
  const issue = (type: string, msg: string, extra?: Record<string, unknown>): ValidationIssue => ({
    type,
    loc,
    msg,
    input: input === undefined ? null : input,
    ...(extra ? { ctx: extra } : {}),
  });
  switch (d.type) {
    case 'any.required':
      // FastAPI reports null for a missing parameter; inside a body model, the enclosing object
      return { type: 'missing', loc, msg: 'Field required', input: source === 'body' ? (rawAt(raw, path.slice(0, -1)) ?? null) : null };
    case 'qint.parse':
      return issue('int_parsing', 'Input should be a valid integer, unable to parse string as an integer');
    case 'number.integer':
      return issue('int_from_float', 'Input should be a valid integer, got a number with a fractional part');
    case 'number.base':
      return isIntegerSchema(schema, path) ? issue('int_type', 'Input should be a valid integer') : issue('float_type', 'Input should be a valid number');
    case 'qnum.parse':
      return issue('float_parsing', 'Input should be a valid number, unable to parse string as a number');
    case 'number.infinity':
      return issue('finite_number', 'Input should be a finite number');
    case 'qbool.parse':
      return issue('bool_parsing', 'Input should be a valid boolean, unable to interpret input');
    case 'boolean.base':
      return issue('bool_type', 'Input should be a valid boolean');
    case 'number.min':
      return issue('greater_than_equal', `Input should be greater than or equal to ${limit}`, { ge: limit });
    case 'number.max':
      return issue('less_than_equal', `Input should be less than or equal to ${limit}`, { le: limit });
    case 'number.greater':
      return issue('greater_than', `Input should be greater than ${limit}`, { gt: limit });
    case 'number.less':
      return issue('less_than', `Input should be less than ${limit}`, { lt: limit });
    case 'string.base':
      return issue('string_type', 'Input should be a valid string');
    case 'string.empty':
      return issue('string_too_short', 'String should have at least 1 character', { min_length: 1 });
    case 'string.min':
      return issue('string_too_short', `String should have at least ${plural(limit, 'character')}`, { min_length: limit });
    case 'string.max':
      return issue('string_too_long', `String should have at most ${plural(limit, 'character')}`, { max_length: limit });
    case 'string.pattern.base':
      return issue('string_pattern_mismatch', `String should match pattern '${String(ctx.regex).slice(1, -1)}'`, { pattern: String(ctx.regex).slice(1, -1) });
    case 'array.base':
      return issue('list_type', 'Input should be a valid list');
    case 'array.min':
      return issue('too_short', `List should have at least ${plural(limit, 'item')} after validation, not ${(input as unknown[])?.length ?? 0}`, {
        field_type: 'List',
        min_length: limit,
        actual_length: (input as unknown[])?.length ?? 0,
      });
    case 'array.max':
      return issue('too_long', `List should have at most ${plural(limit, 'item')} after validation, not ${(input as unknown[])?.length ?? 0}`, {
        field_type: 'List',
        max_length: limit,
        actual_length: (input as unknown[])?.length ?? 0,
      });
    case 'any.only': {
      const expected = quoteList((ctx.valids as unknown[]) ?? []);
      return issue('literal_error', `Input should be ${expected}`, { expected });
    }
    case 'object.unknown':
      return issue('extra_forbidden', 'Extra inputs are not permitted');
    case 'object.base':
      return source === 'body' && path.length === 0
        ? issue('model_attributes_type', 'Input should be a valid dictionary or object to extract fields from')
        : issue('dict_type', 'Input should be a valid dictionary');
    default:
      return issue('value_error', `Value error, ${d.message.replace(/"/g, '')}`, { error: {} });
  }
}

export function joiToIssues(error: ValidationError, schema: ObjectSchema | undefined, source: Source, raw: unknown, prefix: (string | number)[] = []): ValidationIssue[] {
  return error.details.slice(0, MAX_ISSUES).map((d) => translate(d, schema, source, raw, prefix));
}

const arrayLimitCache = new WeakMap<ObjectSchema, { path: string[]; max: number }[]>();

/** Array `max` rules reachable through object keys only (no array items): checked before joi walks the items. */
function arrayLimits(schema: ObjectSchema): { path: string[]; max: number }[] {
  let found = arrayLimitCache.get(schema);
  if (found) return found;
  const list: { path: string[]; max: number }[] = (found = []);
  walkDescribed(
    described(schema),
    (node, path) => {
      const max = node.type === 'array' ? ruleLimit(node, 'max') : undefined;
      if (max !== undefined) list.push({ path: [...path], max });
    },
    { items: false, alternatives: false },
  );
  arrayLimitCache.set(schema, found);
  return found;
}

/** Arrays over their maximum, found without validating a single item. */
function oversizedArrays(schema: ObjectSchema, source: Source, raw: unknown, prefix: (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const { path, max } of arrayLimits(schema)) {
    const value = rawAt(raw, path);
    if (Array.isArray(value) && value.length > max) {
      issues.push({
        type: 'too_long',
        loc: [source, ...prefix, ...path],
        msg: `List should have at most ${plural(max, 'item')} after validation, not ${value.length}`,
        input: value,
        ctx: { field_type: 'List', max_length: max, actual_length: value.length },
      });
    }
  }
  return issues;
}

/**
 * Keys no schema declares, found by a walk of the value beside the description (object keys and
 * array items). joi builds one error, message included, per unknown key: a 256 KB body of 20,000
 * of them cost 54 ms of main-thread CPU. Counting them first is a hash lookup per key.
 */
function unknownKeys(d: Described, raw: unknown, path: (string | number)[], found: { issues: ValidationIssue[]; total: number }): void {
  if (raw === null || typeof raw !== 'object') return;
  if (Array.isArray(raw)) {
    const item = d.type === 'array' && d.items?.length === 1 ? d.items[0]! : undefined;
    if (item) for (let i = 0; i < raw.length; i++) unknownKeys(item, raw[i], [...path, i], found);
    return;
  }
  if (d.type !== 'object' || !d.keys || d.flags?.unknown === true || d.patterns) return;
  for (const key in raw) {
    const child = Object.hasOwn(d.keys, key) ? d.keys[key] : undefined;
    if (child) unknownKeys(child, (raw as Record<string, unknown>)[key], [...path, key], found);
    else if (++found.total <= MAX_ISSUES) found.issues.push({ type: 'extra_forbidden', loc: [...path, key], msg: 'Extra inputs are not permitted', input: (raw as Record<string, unknown>)[key] ?? null });
  }
}

/** Validates one request part; returns the converted value or the issues found. */
export function validatePart<T>(
  schema: ObjectSchema | undefined,
  source: Source,
  raw: unknown,
  prefix: (string | number)[] = [],
): { value: T; issues: ValidationIssue[] } {
  if (!schema) return { value: raw as T, issues: [] };
  // a plainly valid JSON body skips joi (fast-accept.ts): joi would return it unchanged
  if (source === 'body' && fastAccept(schema)?.(raw)) return { value: raw as T, issues: [] };
  // a list far over its limit is refused before joi visits (and reports) every item
  const oversized = oversizedArrays(schema, source, raw, prefix);
  if (oversized.length) return { value: raw as T, issues: oversized };
  // so are more unknown keys than a 422 reports: up to that many, joi reports them beside the rest
  const unknown = { issues: [] as ValidationIssue[], total: 0 };
  unknownKeys(described(schema), raw, [source, ...prefix], unknown);
  if (unknown.total > MAX_ISSUES) return { value: raw as T, issues: [...unknown.issues, tooMany(unknown.issues.length, unknown.total)] };
  // JSON bodies carry types: a number sent as a string is a wrong type (422), not converted.
  // Query and path values are strings by nature and are parsed by the schema's own types.
  const convert = source !== 'body';
  const { value, error } = schema.validate(raw, { abortEarly: false, convert, allowUnknown: false, errors: { label: false } });
  const issues = error ? joiToIssues(error, schema, source, raw, prefix) : [];
  // joi skips a `__proto__` key silently (prototype-pollution guard); every other unknown key is 422
  if (raw !== null && typeof raw === 'object' && Object.hasOwn(raw, '__proto__')) {
    issues.push({ type: 'extra_forbidden', loc: [source, ...prefix, '__proto__'], msg: 'Extra inputs are not permitted', input: (raw as Record<string, unknown>)['__proto__'] ?? null });
  }
  if (error && error.details.length > issues.length) {
    issues.push(tooMany(issues.length, error.details.length));
  }
  return { value: value as T, issues };
}

export function throwIfIssues(issues: ValidationIssue[]): void {
  if (issues.length) throw Errors.validation(issues);
}
