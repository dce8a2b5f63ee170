/**
 * A shortcut past joi for request bodies that are plainly valid. joi builds ~13 KB of state per
 * validation of an 11-key telemetry frame (a sixth of everything a verdict allocates); most
 * requests under load are well formed. From a schema's `describe()` tree this compiles a predicate
 * that says yes only when joi, with the options validatePart uses (convert off for bodies, no
 * unknown keys), would accept the value unchanged. Anything else, including every value it is
 * unsure of, goes to joi, which stays the one source of the answer and of every 422 body.
 *
 * Only a small, exactly understood subset compiles: objects of known keys (no defaults, object rules,
 * patterns or preferences), numbers with min/max/greater/less/integer, strings with pattern and
 * length limits, booleans, `valid()` lists of primitives, and arrays of one item schema with
 * min/max. A key's string rule outside the subset (isoDate…) is checked by joi on that key alone. A
 * schema using anything else gets no predicate (null) and is always validated by joi.
 */
import type { ObjectSchema, Schema } from 'joi';
import { codePointsWithin } from '../lib/code-points.js';
import { described, type Described } from './schema-walk.js';

export type Accept = (value: unknown) => boolean;

const compiled = new WeakMap<ObjectSchema, Accept | null>();

/** The predicate of a JSON body schema, compiled once; null when the schema is outside the subset. */
export function fastAccept(schema: ObjectSchema): Accept | null {
  let accept = compiled.get(schema);
  if (accept === undefined) compiled.set(schema, (accept = compile(described(schema), schema)));
  return accept;
}

/** Flags that document, or say whether a key must be present (enforced by the object), or list valid values. */
const KNOWN_FLAGS = new Set(['description', 'label', 'presence', 'only']);

/** Members of a description this compiler knows; any other member means "not in the subset". `metas` only document. */
function onlyMembers(d: Described, members: readonly string[]): boolean {
  return Object.keys(d).every((m) => m === 'type' || m === 'flags' || m === 'metas' || members.includes(m));
}

/** `schema`: the joi schema `d` describes, when known (object keys), for a per-key fallback. */
function compile(d: Described, schema?: Schema): Accept | null {
  const flags = d.flags ?? {};
  if (!Object.keys(flags).every((f) => KNOWN_FLAGS.has(f)) || (flags.presence !== undefined && flags.presence !== 'required' && flags.presence !== 'optional')) return null;
  if (flags.only) return compileValid(d);
  switch (d.type) {
    case 'object':
      return compileObject(d, schema);
    case 'array':
      return compileArray(d, schema);
    case 'number':
      return compileNumber(d);
    case 'string':
      return compileString(d, schema);
    case 'boolean':
      return onlyMembers(d, []) ? (v) => typeof v === 'boolean' : null;
    default:
      return null;
  }
}

function compileObject(d: Described, schema?: Schema): Accept | null {
  if (!onlyMembers(d, ['keys']) || !d.keys) return null;
  const keys = new Map<string, Accept>();
  const required: string[] = [];
  for (const [name, child] of Object.entries(d.keys)) {
    if (child.flags?.presence === 'required') required.push(name);
    const accept = compile(child, (schema as ObjectSchema | undefined)?.extract(name));
    if (!accept) return null;
    keys.set(name, accept);
  }
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.getPrototypeOf(v) !== Object.prototype) return false;
    const o = v as Record<string, unknown>;
    for (const k in o) {
      // an unknown key is joi's to report
      const accept = keys.get(k);
      if (!accept || !accept(o[k])) return false;
    }
    // JSON.parse makes `__proto__` an own key; joi skips it silently and validatePart reports it
    if (Object.hasOwn(o, '__proto__')) return false;
    for (const k of required) if (o[k] === undefined) return false;
    return true;
  };
}

/** `valid(a, b, …)` of primitives: the value is one of them (strict equality, as joi compares). */
function compileValid(d: Described): Accept | null {
  if (!onlyMembers(d, ['allow']) || !d.allow?.every((a) => a === null || ['string', 'number', 'boolean'].includes(typeof a))) return null;
  const allowed = new Set(d.allow);
  // joi turns -0 into 0: -0 is left to joi
  return (v) => allowed.has(v) && !Object.is(v, -0);
}

function compileArray(d: Described, schema?: Schema): Accept | null {
  if (!onlyMembers(d, ['items', 'rules']) || d.items?.length !== 1) return null;
  // the item schema itself ($_terms is joi's documented extension surface), for its keys' fallback
  const item = compile(d.items[0]!, (schema as { $_terms?: { items?: Schema[] } } | undefined)?.$_terms?.items?.[0]);
  const limits = lengthLimits(d.rules ?? []);
  if (!item || !limits) return null;
  return (v) => Array.isArray(v) && limits(v.length) && v.every(item);
}

type Rule = NonNullable<Described['rules']>[number];

/** A rule with a single numeric `limit` argument (no reference, no option), or undefined. */
function plainLimit(r: Rule): number | undefined {
  const limit = r.args?.limit;
  return typeof limit === 'number' && Object.keys(r.args!).length === 1 ? limit : undefined;
}

/** min/max rules on a length, or null when other rules (or options) are present. */
function lengthLimits(rules: readonly Rule[]): ((n: number) => boolean) | null {
  let min = 0;
  let max = Infinity;
  for (const r of rules) {
    const limit = plainLimit(r);
    if (limit === undefined) return null;
    if (r.name === 'min') min = Math.max(min, limit);
    else if (r.name === 'max') max = Math.min(max, limit);
    else return null;
  }
  return (n) => n >= min && n <= max;
}

/** The character bounds of a string's min and max rules (both plain limits). */
function charLimits(rules: readonly Rule[]): { min: number; max: number } {
  let min = 0;
  let max = Infinity;
  for (const r of rules) {
    if (r.name === 'min') min = Math.max(min, plainLimit(r)!);
    else max = Math.min(max, plainLimit(r)!);
  }
  return { min, max };
}

function compileNumber(d: Described): Accept | null {
  if (!onlyMembers(d, ['rules'])) return null;
  const checks: ((x: number) => boolean)[] = [];
  for (const r of d.rules ?? []) {
    const limit = plainLimit(r);
    if (r.name === 'integer' && !r.args) checks.push((x) => Math.trunc(x) - x === 0); // joi's own test
    else if (limit === undefined) return null;
    else if (r.name === 'min') checks.push((x) => x >= limit);
    else if (r.name === 'max') checks.push((x) => x <= limit);
    else if (r.name === 'greater') checks.push((x) => x > limit);
    else if (r.name === 'less') checks.push((x) => x < limit);
    else return null;
  }
  // finite and safe (joi's number.infinity and number.unsafe); -0 is left to joi, which makes it 0
  return (v) =>
    typeof v === 'number' && Number.isFinite(v) && v <= Number.MAX_SAFE_INTEGER && v >= Number.MIN_SAFE_INTEGER && !Object.is(v, -0) && checks.every((c) => c(v));
}

function compileString(d: Described, schema?: Schema): Accept | null {
  if (!onlyMembers(d, ['rules'])) return null;
  const patterns: RegExp[] = [];
  const lengths: Rule[] = [];
  let other = false;
  for (const r of d.rules ?? []) {
    const regex = r.name === 'pattern' ? parseRegex(r.args) : null;
    if (regex) patterns.push(regex);
    else if ((r.name === 'min' || r.name === 'max') && plainLimit(r) !== undefined) lengths.push(r);
    // any other rule is joi's to check, on this key alone, when its arguments are plain values
    // (a reference to another key would need the whole object)
    else if (schema && Object.values(r.args ?? {}).every((a) => a === null || typeof a !== 'object')) other = true;
    else return null;
  }
  // string lengths are characters (code points), as the schemas' own rules count them
  const limits = charLimits(lengths);
  const byJoi = other ? (v: string) => { const r = schema!.validate(v, { convert: false }); return r.error === undefined && r.value === v; } : null;
  // joi refuses the empty string unless allowed
  return (v) => typeof v === 'string' && v !== '' && codePointsWithin(v, limits.min, limits.max) && patterns.every((p) => p.test(v)) && (byJoi === null || byJoi(v));
}

/** A pattern rule's regex from its description ("/source/flags"), without joi's invert or name options. */
function parseRegex(args: Record<string, unknown> | undefined): RegExp | null {
  if (!args || Object.keys(args).length !== 1 || typeof args.regex !== 'string') return null;
  const m = /^\/(.*)\/([a-z]*)$/s.exec(args.regex);
  // a global or sticky regex keeps state between tests: left to joi
  if (!m || /[gy]/.test(m[2]!)) return null;
  return new RegExp(m[1]!, m[2]);
}
