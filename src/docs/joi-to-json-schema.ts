/**
 * The subset of joi the routes use, described as JSON Schema (2020-12, as OpenAPI 3.1 embeds):
 * request schemas (query, path, body) and the response schemas of `RouteDef.response`.
 *
 * Beyond the plain types: `allow(null)` becomes a `null` type member, `isoDate()` the `date-time`
 * format, `less`/`greater` the exclusive bounds, `multiple` `multipleOf`, `object().pattern()`
 * `additionalProperties`, `array().ordered()` `prefixItems`, and `.prefs({ presence: 'required' })`
 * makes every key below it required unless marked `.optional()`; a schema named with `.id(name)`
 * goes under `$defs` and is referenced, so a `Joi.link('#name')` inside it recurses. A `.meta({ jsonSchema })` object is
 * merged in last: documentation-only keywords (a cross-field rule the handler enforces, e.g.
 * `not: { multipleOf: 2 }` for an odd distance) that joi does not check itself.
 */
import type { Schema } from 'joi';
import { described, hasRule, ruleArgs as rule, type Described as Desc } from '../http/schema-walk.js';

export type JsonSchema = Record<string, unknown>;

type Presence = 'optional' | 'required';

function isRequired(d: Desc, inherited: Presence): boolean {
  const own = d.flags?.presence;
  return own === 'required' || (own === undefined && inherited === 'required');
}

/** `allow(null)` on a typed schema: the type becomes `[type, 'null']` (or a null member of `anyOf`). */
function addNull(out: JsonSchema): void {
  if (Array.isArray(out.enum)) return; // `valid(..., null)`: null is already listed
  if (typeof out.type === 'string') out.type = [out.type, 'null'];
  else if (Array.isArray(out.anyOf)) out.anyOf = [...(out.anyOf as JsonSchema[]), { type: 'null' }];
  else if (out.type === undefined && Object.keys(out).length > 0) {
    const copy = { ...out };
    for (const k of Object.keys(out)) delete out[k];
    out.anyOf = [copy, { type: 'null' }];
  }
}

/** Where a named schema (`.id(name)`) is defined: `$defs` of the converted schema's root. */
export const DEFS_REF = '#/$defs/';

export function describeToJsonSchema(d: Desc, inherited: Presence = 'optional', defs: Map<string, JsonSchema> = new Map()): JsonSchema {
  const id = d.flags?.id;
  if (typeof id === 'string') {
    // a named schema is defined once under `$defs` and referenced, so a `Joi.link` to it can recurse
    if (!defs.has(id)) {
      const body: JsonSchema = {};
      defs.set(id, body);
      const { id: _id, description: _description, ...flags } = d.flags!;
      Object.assign(body, describeToJsonSchema({ ...d, flags, allow: d.allow?.filter((v) => v !== null) }, inherited, defs));
    }
    const ref: JsonSchema = { $ref: `${DEFS_REF}${id}` };
    if (d.allow?.includes(null)) addNull(ref);
    if (d.flags?.description) ref.description = d.flags.description;
    return ref;
  }
  const out: JsonSchema = {};
  const presence: Presence = d.preferences?.presence === 'required' ? 'required' : d.preferences?.presence === 'optional' ? 'optional' : inherited;
  switch (d.type) {
    case 'qint':
      out.type = 'integer';
      break;
    case 'qnum':
      out.type = 'number';
      break;
    case 'number':
      out.type = hasRule(d, 'integer') ? 'integer' : 'number';
      break;
    case 'qbool':
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'string':
      out.type = 'string';
      break;
    case 'array':
      out.type = 'array';
      if (d.ordered?.length) {
        out.prefixItems = d.ordered.map((x) => describeToJsonSchema(x, presence, defs));
        out.items = false;
      } else if (d.items?.length === 1) out.items = describeToJsonSchema(d.items[0]!, presence, defs);
      else if (d.items && d.items.length > 1) out.items = { anyOf: d.items.map((x) => describeToJsonSchema(x, presence, defs)) };
      break;
    case 'object': {
      out.type = 'object';
      // `Joi.object()` without keys takes any keys; `Joi.object({})` takes none
      if (d.keys === undefined && !d.patterns) break;
      const props: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [k, v] of Object.entries(d.keys ?? {})) {
        if (v.flags?.presence === 'forbidden') continue;
        props[k] = describeToJsonSchema(v, presence, defs);
        if (isRequired(v, presence)) required.push(k);
      }
      if (d.keys !== undefined) out.properties = props;
      if (required.length) out.required = required;
      const pattern = d.patterns?.[0];
      if (pattern && d.flags?.unknown !== true) out.additionalProperties = describeToJsonSchema(pattern.rule, presence, defs);
      else out.additionalProperties = d.flags?.unknown === true;
      break;
    }
    case 'alternatives':
      out.anyOf = (d.matches ?? []).flatMap((m) => (m.schema ? [describeToJsonSchema(m.schema, presence, defs)] : []));
      break;
    case 'link': {
      const target = (d as { link?: { ref?: { path?: string[] } } }).link?.ref?.path?.[0];
      if (!target) throw new Error('a Joi.link converts only as a link to a named schema (`Joi.link(\'#name\')`)');
      out.$ref = `${DEFS_REF}${target}`;
      break;
    }
    default:
      break;
  }
  const min = rule(d, 'min')?.limit;
  const max = rule(d, 'max')?.limit;
  const length = rule(d, 'length')?.limit;
  if (out.type === 'string') {
    if (typeof min === 'number') out.minLength = min;
    if (typeof max === 'number') out.maxLength = max;
    if (typeof length === 'number') out.minLength = out.maxLength = length;
    const pattern = rule(d, 'pattern')?.regex;
    if (pattern) out.pattern = String(pattern).slice(1, String(pattern).lastIndexOf('/'));
    if (hasRule(d, 'isoDate')) out.format = 'date-time';
  } else if (out.type === 'array') {
    if (typeof min === 'number') out.minItems = min;
    if (typeof max === 'number') out.maxItems = max;
    if (typeof length === 'number') out.minItems = out.maxItems = length;
  } else if (out.type === 'integer' || out.type === 'number') {
    if (typeof min === 'number') out.minimum = min;
    if (typeof max === 'number') out.maximum = max;
    const greater = rule(d, 'greater')?.limit;
    const less = rule(d, 'less')?.limit;
    if (typeof greater === 'number') out.exclusiveMinimum = greater;
    if (typeof less === 'number') out.exclusiveMaximum = less;
    const multiple = rule(d, 'multiple')?.base;
    if (typeof multiple === 'number') out.multipleOf = multiple;
  }
  if (d.flags?.only && d.allow) out.enum = d.allow;
  else if (d.allow?.includes(null)) addNull(out);
  if (d.flags?.default !== undefined && typeof d.flags.default !== 'function') out.default = d.flags.default;
  if (d.flags?.description) out.description = d.flags.description;
  for (const m of d.metas ?? []) if (m.jsonSchema && typeof m.jsonSchema === 'object') Object.assign(out, m.jsonSchema);
  return out;
}

/** The JSON Schema of `schema`, standing alone: named schemas it uses are under its root's `$defs`. */
export function toJsonSchema(schema: Schema): JsonSchema {
  const defs = new Map<string, JsonSchema>();
  const out = describeToJsonSchema(described(schema), 'optional', defs);
  return defs.size ? { ...out, $defs: Object.fromEntries(defs) } : out;
}
