/**
 * joi's `describe()` output, read in one place: the 422 translation (is this field an integer?
 * which arrays have a maximum?), the OpenAPI document, the security inventory's bound check, the
 * kernel table and the tests all walk the same tree with these helpers. Descriptions are cached per
 * schema object: `describe()` rebuilds the whole tree on every call.
 */
import type { Schema } from 'joi';

export interface Described {
  type?: string;
  flags?: { default?: unknown; presence?: string; description?: string; only?: boolean; unknown?: boolean } & Record<string, unknown>;
  /** `.prefs()`: `presence` cascades to the keys below (response schemas make every key required). */
  preferences?: { presence?: string } & Record<string, unknown>;
  rules?: { name: string; args?: Record<string, unknown> }[];
  keys?: Record<string, Described>;
  /** `object().pattern(key, value)`: keys not listed in `keys`. */
  patterns?: { schema?: Described; regex?: string; rule: Described }[];
  items?: Described[];
  /** `array().ordered(...)`: a tuple. */
  ordered?: Described[];
  allow?: unknown[];
  matches?: { schema?: Described; then?: Described; otherwise?: Described }[];
  /** `.meta({...})` objects, in order. */
  metas?: Record<string, unknown>[];
}

/** A step into a described tree: an object key, `[]` for array items, `|n` for the n-th alternative. */
export type Step = string;

const cache = new WeakMap<Schema, Described>();

export function described(schema: Schema): Described;
export function described(schema: Schema | undefined): Described | undefined;
export function described(schema: Schema | undefined): Described | undefined {
  if (!schema) return undefined;
  let d = cache.get(schema);
  if (!d) cache.set(schema, (d = schema.describe() as Described));
  return d;
}

/** The arguments of a rule (`min`, `max`, `pattern`…), or undefined. */
export function ruleArgs(d: Described, name: string): Record<string, unknown> | undefined {
  return d.rules?.find((r) => r.name === name)?.args;
}

export function hasRule(d: Described, name: string): boolean {
  return Boolean(d.rules?.some((r) => r.name === name));
}

/** A numeric rule limit (`min`, `max`), or undefined. */
export function ruleLimit(d: Described, name: string): number | undefined {
  const limit = ruleArgs(d, name)?.limit;
  return typeof limit === 'number' ? limit : undefined;
}

/**
 * Visits every node depth-first with its path. `visit` returning false keeps the walk out of that
 * node's children; `into` chooses which kinds of children are entered (all by default).
 */
export function walkDescribed(
  d: Described | undefined,
  visit: (node: Described, path: readonly Step[]) => boolean | void,
  into: { items?: boolean; alternatives?: boolean } = {},
  path: readonly Step[] = [],
): void {
  if (!d || visit(d, path) === false) return;
  for (const [k, child] of Object.entries(d.keys ?? {})) walkDescribed(child, visit, into, [...path, k]);
  if (into.items !== false) for (const item of d.items ?? []) walkDescribed(item, visit, into, [...path, '[]']);
  if (into.alternatives !== false) {
    (d.matches ?? []).forEach((m, i) => {
      for (const s of [m.schema, m.then, m.otherwise]) walkDescribed(s, visit, into, [...path, `|${i}`]);
    });
  }
}

/** The node a value path leads to (array indices step into `items`), or undefined. */
export function describedAt(d: Described | undefined, path: readonly (string | number)[]): Described | undefined {
  let node = d;
  for (const key of path) {
    node = typeof key === 'number' ? node?.items?.[0] : node?.keys?.[key];
    if (!node) return undefined;
  }
  return node;
}
