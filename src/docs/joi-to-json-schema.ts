/** The subset of joi the routes use, described as JSON Schema (2020-12, as OpenAPI 3.1 embeds). */
import type { Schema } from 'joi';
import { described } from '../http/describe.js';

type Desc = {
  type?: string;
  flags?: { default?: unknown; presence?: string; description?: string; only?: boolean; unknown?: boolean };
  rules?: { name: string; args?: Record<string, unknown> }[];
  keys?: Record<string, Desc>;
  items?: Desc[];
  allow?: unknown[];
  matches?: { schema: Desc }[];
};

export type JsonSchema = Record<string, unknown>;

function rule(d: Desc, name: string): Record<string, unknown> | undefined {
  return d.rules?.find((r) => r.name === name)?.args;
}

export function describeToJsonSchema(d: Desc): JsonSchema {
  const out: JsonSchema = {};
  switch (d.type) {
    case 'qint':
      out.type = 'integer';
      break;
    case 'qnum':
      out.type = 'number';
      break;
    case 'number':
      out.type = rule(d, 'integer') !== undefined || d.rules?.some((r) => r.name === 'integer') ? 'integer' : 'number';
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
      if (d.items?.[0]) out.items = describeToJsonSchema(d.items[0]);
      break;
    case 'object': {
      out.type = 'object';
      const props: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const [k, v] of Object.entries(d.keys ?? {})) {
        props[k] = describeToJsonSchema(v);
        if (v.flags?.presence === 'required') required.push(k);
      }
      out.properties = props;
      if (required.length) out.required = required;
      out.additionalProperties = d.flags?.unknown === true;
      break;
    }
    case 'alternatives':
      out.anyOf = (d.matches ?? []).map((m) => describeToJsonSchema(m.schema));
      break;
    default:
      break;
  }
  const min = rule(d, 'min')?.limit;
  const max = rule(d, 'max')?.limit;
  if (out.type === 'string') {
    if (typeof min === 'number') out.minLength = min;
    if (typeof max === 'number') out.maxLength = max;
    const pattern = rule(d, 'pattern')?.regex;
    if (pattern) out.pattern = String(pattern).slice(1, String(pattern).lastIndexOf('/'));
  } else if (out.type === 'array') {
    if (typeof min === 'number') out.minItems = min;
    if (typeof max === 'number') out.maxItems = max;
  } else if (out.type === 'integer' || out.type === 'number') {
    if (typeof min === 'number') out.minimum = min;
    if (typeof max === 'number') out.maximum = max;
  }
  if (d.flags?.only && d.allow) out.enum = d.allow;
  if (d.flags?.default !== undefined && typeof d.flags.default !== 'function') out.default = d.flags.default;
  if (d.flags?.description) out.description = d.flags.description;
  return out;
}

export function toJsonSchema(schema: Schema): JsonSchema {
  return describeToJsonSchema(described(schema) as Desc);
}
