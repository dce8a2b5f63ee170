/**
 * String lengths in characters (Unicode code points), as JSON Schema's maxLength and minLength
 * count them, instead of joi's UTF-16 code units: an emoji is one character, not two. A lone
 * surrogate counts as one character, as it does in a JSON Schema validator's code point walk.
 * `Joi` here is joi whose `string()` min, max and length count code points; the rules keep their
 * names and `limit` argument, so `describe()`, the OpenAPI document and the 422 bodies
 * (`string.max` → `string_too_long`) read them exactly as before.
 */
import JoiBase, { type CustomHelpers, type Extension, type Root, type StringSchema } from 'joi';

/** The number of code points of `s`: its UTF-16 length less one per well-formed surrogate pair. */
export function codePointLength(s: string): number {
  let pairs = 0;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return s.length - pairs;
}

/** The first `n` code points of `s` (all of it when shorter), never half a surrogate pair. */
export function sliceCodePoints(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = 0;
  for (let seen = 0; seen < n && i < s.length; seen++) {
    const c = s.charCodeAt(i);
    const d = s.charCodeAt(i + 1);
    i += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
  }
  return s.slice(0, i);
}

/** Whether `s` has between `min` and `max` code points; code points lie between half the UTF-16 length and all of it, so most strings need no walk. */
export function codePointsWithin(s: string, min: number, max: number): boolean {
  if (s.length <= max && Math.ceil(s.length / 2) >= min) return true;
  if (s.length < min || Math.ceil(s.length / 2) > max) return false;
  const n = codePointLength(s);
  return n >= min && n <= max;
}

type Operator = '<=' | '>=' | '=';

interface CharRule {
  name: string;
  operator: Operator;
  args: { limit: number };
}

function addCharRule(schema: StringSchema, name: 'min' | 'max' | 'length', limit: number, operator: Operator): StringSchema {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`string ${name}: limit must be a non-negative integer, got ${String(limit)}`);
  return (schema as StringSchema & { $_addRule(rule: object): StringSchema }).$_addRule({ name, method: 'chars', args: { limit }, operator });
}

/** The methods joi's string min, max and length become (no encoding argument: lengths here are characters). */
const lengthOverrides = {
  min(this: StringSchema, limit: number) {
    return addCharRule(this, 'min', limit, '>=');
  },
  max(this: StringSchema, limit: number) {
    return addCharRule(this, 'max', limit, '<=');
  },
  length(this: StringSchema, limit: number) {
    return addCharRule(this, 'length', limit, '=');
  },
};

function validateChars(value: string, helpers: CustomHelpers, _args: Record<string, unknown>, rule: unknown): unknown {
  const { name, operator, args } = rule as CharRule;
  const { limit } = args;
  const within = operator === '<=' ? codePointsWithin(value, 0, limit) : operator === '>=' ? codePointsWithin(value, limit, Infinity) : codePointsWithin(value, limit, limit);
  return within ? value : helpers.error(`string.${name}`, { limit, value });
}

/** joi's string type with min, max and length in code points. */
export const codePointStrings: Extension = {
  type: 'string',
  base: JoiBase.string(),
  overrides: lengthOverrides as unknown as Extension['overrides'],
  rules: {
    chars: {
      method: false,
      args: [{ name: 'limit', assert: (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0, message: 'must be a non-negative integer' }],
      validate: validateChars,
    },
  },
};

/** joi, with string lengths counted in code points: the Joi request schemas are built with. */
export const Joi: Root = JoiBase.extend(codePointStrings) as Root;

/** Whether a string schema's length rules count code points (it was built by this module's Joi). */
export function countsCodePoints(schema: StringSchema): boolean {
  return ['min', 'max', 'length'].every((name) => {
    const rule = schema.$_getRule(name) as { method?: string } | undefined;
    return rule === undefined || rule.method === 'chars';
  });
}
