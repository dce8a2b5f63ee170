/**
 * Parameter schemas for kernels. Query values arrive as strings and are parsed strictly
 * (kernels-a 0.2): integers are plain decimals (no `1.0`, `1e3`, blanks), numbers are finite
 * decimals, booleans are pydantic's set. Inside a JSON `request` object the same schemas accept
 * JSON numbers and booleans. Every numeric parameter has bounds: out of range is 422, never clamped.
 */
import type JoiBase from 'joi';
import { Joi as CodePointJoi } from './code-points.js';

const INT_RE = /^[+-]?\d+$/;
const NUM_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

export const Joi = CodePointJoi.extend(
  (joi) => ({
    type: 'qint',
    base: joi.number().integer().unsafe(), // huge values fail the bound, not a parse rule
    messages: { 'qint.parse': 'must be an integer' },
    // prepare runs before the base type's lenient coercion (which would accept `1.0` and ` 5`)
    prepare(value: unknown, helpers) {
      if (typeof value !== 'string') return { value };
      if (!INT_RE.test(value)) return { errors: [helpers.error('qint.parse')] };
      return { value: Number(value) };
    },
  }),
  (joi) => ({
    type: 'qnum',
    base: joi.number(),
    messages: { 'qnum.parse': 'must be a number' },
    prepare(value: unknown, helpers) {
      if (typeof value !== 'string') return { value };
      const n = Number(value);
      if (!NUM_RE.test(value) || !Number.isFinite(n)) return { errors: [helpers.error('qnum.parse')] };
      return { value: n };
    },
  }),
  (joi) => ({
    type: 'qbool',
    base: joi.boolean(),
    messages: { 'qbool.parse': 'must be a boolean' },
    prepare(value: unknown, helpers) {
      if (typeof value !== 'string') return { value };
      const v = value.toLowerCase();
      if (TRUE_WORDS.has(v)) return { value: true };
      if (FALSE_WORDS.has(v)) return { value: false };
      return { errors: [helpers.error('qbool.parse')] };
    },
  }),
);

export type Schema = JoiBase.Schema;

declare const VALUE: unique symbol;

/**
 * A schema that carries the type of the value it validates to, so a kernel's parameter types are
 * inferred from its declaration (`ParamValues`) instead of being written a second time. T is
 * boxed in a tuple: inferred from an optional property, a bare T would lose its `undefined`.
 */
export type Param<T> = Schema & { readonly [VALUE]?: [T] };

/** The validated type of a schema: what its `Param` carries, `unknown` for an untyped joi schema. */
export type ValueOf<S> = S extends { readonly [VALUE]?: [infer T] } ? T : unknown;

/** A schema joi cannot type from its calls (arrays, nullable, no default): its value type, stated once beside it. */
export function typed<T>(schema: Schema): Param<T> {
  return schema;
}

/** An object schema that carries the type of the value it validates to. */
export type ObjectParam<T> = JoiBase.ObjectSchema & { readonly [VALUE]?: [T] };

/** The value an object of these keys validates to, each key typed by `ValueOf`. */
export type ValuesOf<K extends Record<string, Schema>> = { [P in keyof K]: ValueOf<K[P]> };

/** `Joi.object(keys)`, typed by its keys: a route handler receives `ValuesOf<keys>`. */
export function objectOf<K extends Record<string, Schema>>(keys: K): ObjectParam<ValuesOf<K>> {
  return Joi.object(keys);
}

/** An object schema joi cannot type from its keys (built from a registry): its value type, stated once beside it. */
export function typedObject<T>(schema: JoiBase.ObjectSchema): ObjectParam<T> {
  return schema;
}

/** A key that must be present, typed as joi types the schema (`Joi.string()` validates to a string). */
export function required<T>(schema: JoiBase.AnySchema<T>): Param<T> {
  return schema.required();
}

/** A key that may be absent (no default), as object keys are unless required: `undefined` then. */
export function optional<T>(schema: JoiBase.AnySchema<T>): Param<T | undefined> {
  return schema;
}

/** Integer parameter in [min, max] with a default. */
export function int(min: number, max: number, dflt: number): Param<number> {
  return Joi.qint().min(min).max(max).default(dflt);
}

/** Finite number parameter in [min, max] with a default. */
export function num(min: number, max: number, dflt: number): Param<number> {
  return Joi.qnum().min(min).max(max).default(dflt);
}

export function bool(dflt: boolean): Param<boolean> {
  return Joi.qbool().default(dflt);
}

/** String parameter of 0..maxLen characters with a default. */
export function str(maxLen: number, dflt: string): Param<string> {
  return Joi.string().allow('').max(maxLen).default(dflt);
}

/** One of a fixed set of words, with a default: typed as their union. */
export function oneOf<const T extends string>(values: readonly T[], dflt: NoInfer<T>): Param<T> {
  return Joi.string().valid(...values).default(dflt);
}

/** The seed every kernel takes: uint32, default 42 (maps one-to-one onto the PRNG state). */
export const SEED_MAX = 4294967295;
export const seed = (): Param<number> => int(0, SEED_MAX, 42);
