/**
 * Building blocks for `RouteDef.response`: joi schemas that describe what a route sends (never used
 * to validate in production). `shape` is the usual top level: every listed key is present, nothing
 * else is, a key that may be absent says `.optional()`. Nested objects whose keys vary with state or
 * configuration are `openShape` (listed keys checked, others allowed) or `mapOf`.
 */
import Joi from 'joi';
import type { ObjectSchema, Schema } from 'joi';

/** An object with exactly these keys, each required unless `.optional()`. */
export function shape(keys: Record<string, Schema>): ObjectSchema {
  return Joi.object(keys).prefs({ presence: 'required' });
}

/** An object with at least these keys (each required unless `.optional()`); others are allowed. */
export function openShape(keys: Record<string, Schema> = {}): ObjectSchema {
  return Joi.object(keys).prefs({ presence: 'required' }).unknown(true);
}

/** An object keyed by names that vary (ids, route templates), every value of one shape. */
export function mapOf(value: Schema): ObjectSchema {
  return Joi.object().pattern(Joi.string(), value);
}

export const nullable = <T extends Schema>(s: T): T => s.allow(null) as T;

export const str = (): Joi.StringSchema => Joi.string();
export const int = (): Joi.NumberSchema => Joi.number().integer();
export const num = (): Joi.NumberSchema => Joi.number();
export const bool = (): Joi.BooleanSchema => Joi.boolean();
export const any = (): Joi.AnySchema => Joi.any();
/** An ISO 8601 / RFC 3339 timestamp (`Date.toISOString()`). */
export const isoTime = (): Joi.StringSchema => Joi.string().isoDate();
/** A calendar date, `YYYY-MM-DD` (JSON Schema `format: date`). */
export const isoDay = (): Joi.StringSchema => Joi.string().pattern(/^\d{4}-\d{2}-\d{2}$/).meta({ jsonSchema: { format: 'date' } });
/** A lower-case hex SHA-256 (keyids, digests, roots). */
export const hex64 = (): Joi.StringSchema => Joi.string().pattern(/^[0-9a-f]{64}$/);
/** One of these literal values. */
export const oneOf = (...values: (string | number | boolean | null)[]): Joi.AnySchema => Joi.any().valid(...values);
export const listOf = (item: Schema): Joi.ArraySchema => Joi.array().items(item);
/** A JSON array of any items. */
export const list = (): Joi.ArraySchema => Joi.array();
/** A JSON object with any keys. */
export const object = (): ObjectSchema => Joi.object();

const scalar = (): Joi.AlternativesSchema => Joi.alternatives(Joi.string(), Joi.number(), Joi.boolean()).allow(null);
const nested = (inner: Schema): Joi.AlternativesSchema => Joi.alternatives(scalar(), Joi.array().items(inner), Joi.object().pattern(Joi.string(), inner));

/**
 * A JSON value nested at most three levels (scalars, lists and string-keyed maps of them): the values
 * of a record whose keys and types vary by design (a check's observations).
 */
export const jsonValue = (): Joi.AlternativesSchema => nested(nested(nested(scalar())));

/** The body of a route that does not send JSON (HTML, XML, text, PEM, SSE): a string of its `produces` type. */
export const text = (description: string): Joi.StringSchema => Joi.string().description(description);
