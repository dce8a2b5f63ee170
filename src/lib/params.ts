/**
 * Parameter schemas for kernels (compiled from their declarations, param-spec.ts) and routes, on
 * the main thread. Query values arrive as strings and are parsed strictly (kernels-a 0.2):
 * integers are plain decimals (no `1.0`, `1e3`, blanks), numbers are finite decimals, booleans
 * are pydantic's set. Inside a JSON `request` object the same schemas accept
 * JSON numbers and booleans. Every numeric parameter has bounds: out of range is 422, never clamped.
 */
import JoiBase from 'joi';
import { isDeepStrictEqual } from 'node:util';
import * as declare from './param-spec.js';
import type { ParamSpec } from './param-spec.js';

const INT_RE = /^[+-]?\d+$/;
const NUM_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const TRUE_WORDS = new Set(['true', '1', 'yes', 'on', 't', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off', 'f', 'n']);

export const Joi: StrictJoi = JoiBase.extend(
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
/** Joi with the strict query types (`qint`, `qnum`, `qbool`); joi types `extend` loosely. */
export type StrictJoi = JoiBase.Root & { qint(): JoiBase.NumberSchema; qnum(): JoiBase.NumberSchema; qbool(): JoiBase.BooleanSchema };

/**
 * The joi schema of a parameter declaration (param-spec.ts). A `joi` declaration's stated default
 * must be its schema's: the workers read the stated one, the main thread validates with the schema.
 */
export function compileParam(spec: ParamSpec): Schema {
  switch (spec.kind) {
    case 'int':
      return Joi.qint().min(spec.min).max(spec.max).default(spec.default);
    case 'num':
      return Joi.qnum().min(spec.min).max(spec.max).default(spec.default);
    case 'bool':
      return Joi.qbool().default(spec.default);
    case 'str':
      return Joi.string().allow('').max(spec.maxLen).default(spec.default);
    case 'joi': {
      const schema = spec.build(Joi);
      const stated = (schema.describe() as { flags?: { default?: unknown } }).flags?.default;
      if (!isDeepStrictEqual(stated, spec.default)) throw new Error(`parameter default ${JSON.stringify(spec.default)} differs from its schema's ${JSON.stringify(stated)}`);
      return schema;
    }
  }
}

/** Integer parameter in [min, max] with a default. */
export function int(min: number, max: number, dflt: number): Schema {
  return compileParam(declare.int(min, max, dflt));
}

/** Finite number parameter in [min, max] with a default. */
export function num(min: number, max: number, dflt: number): Schema {
  return compileParam(declare.num(min, max, dflt));
}

export function bool(dflt: boolean): Schema {
  return compileParam(declare.bool(dflt));
}

/** String parameter of 0..maxLen characters with a default. */
export function str(maxLen: number, dflt: string): Schema {
  return compileParam(declare.str(maxLen, dflt));
}

export { SEED_MAX } from './param-spec.js';
/** The seed every kernel takes: uint32, default 42 (maps one-to-one onto the PRNG state). */
export const seed = (): Schema => compileParam(declare.seedSpec());
