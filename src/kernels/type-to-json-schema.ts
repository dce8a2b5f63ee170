/**
 * A TypeScript type as the JSON Schema of what it becomes in a kernel body (workers/lib/envelope.ts:
 * `roundDeep` turns typed arrays into arrays of numbers and drops undefined properties, then
 * JSON.stringify). Build-time only: it needs the TypeScript compiler, which production never loads.
 */
import ts from 'typescript';
import { ServiceError } from '../lib/service-error.js';

export type JsonSchema = Record<string, unknown>;

/** Typed arrays serialise as arrays of numbers; the integer ones hold only integers. */
const TYPED_ARRAYS: Readonly<Record<string, 'number' | 'integer'>> = {
  Float64Array: 'number',
  Float32Array: 'number',
  Int8Array: 'integer',
  Int16Array: 'integer',
  Int32Array: 'integer',
  Uint8Array: 'integer',
  Uint8ClampedArray: 'integer',
  Uint16Array: 'integer',
  Uint32Array: 'integer',
};

/** Types JSON.stringify would turn into something other than their declared shape: refused, never guessed. */
const NOT_JSON = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Date', 'Promise', 'RegExp', 'BigInt64Array', 'BigUint64Array', 'ArrayBuffer', 'DataView']);

export class UnsupportedTypeError extends ServiceError {
  readonly code = 'SVC_UNSUPPORTED_TYPE';
}

/** Deterministic order for union members: the checker's type ids depend on what it checked first. */
function byJson(a: JsonSchema, b: JsonSchema): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export class TypeToJsonSchema {
  private readonly stack: ts.Type[] = [];

  constructor(private readonly checker: ts.TypeChecker) {}

  /** The schema of `type` at `where` (a dotted path named in errors). */
  convert(type: ts.Type, where: string): JsonSchema {
    if (this.stack.includes(type)) throw new UnsupportedTypeError(`${where}: recursive type ${this.checker.typeToString(type)}`);
    this.stack.push(type);
    try {
      return this.convertOnce(type, where);
    } finally {
      this.stack.pop();
    }
  }

  /** The members of `type` that reach JSON: a union's, without `undefined` (an optional property's value; JSON drops it). */
  definedMembers(type: ts.Type): ts.Type[] {
    const all = type.isUnion() ? type.types : [type];
    return all.filter((t) => !(t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)));
  }

  /** Whether `type` may be `undefined`. */
  maybeUndefined(type: ts.Type): boolean {
    return (type.isUnion() ? type.types : [type]).some((t) => (t.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) !== 0);
  }

  /** The schema of a value that is one of `types` (a union's members). */
  convertAny(types: readonly ts.Type[], where: string): JsonSchema {
    if (types.length === 1) return this.convert(types[0]!, where);
    if (!types.length) throw new UnsupportedTypeError(`${where}: no type`);
    return this.union(types, where);
  }

  private convertOnce(type: ts.Type, where: string): JsonSchema {
    const f = type.flags;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & ts.TypeFlags.Never) throw new UnsupportedTypeError(`${where}: never`);
    if (f & ts.TypeFlags.Null) return { type: 'null' };
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void)) throw new UnsupportedTypeError(`${where}: undefined outside an optional property`);
    if (f & ts.TypeFlags.BigIntLike) throw new UnsupportedTypeError(`${where}: bigint is not JSON`);
    if (f & ts.TypeFlags.StringLiteral) return { const: (type as ts.StringLiteralType).value };
    if (f & ts.TypeFlags.NumberLiteral) return { const: (type as ts.NumberLiteralType).value };
    if (f & ts.TypeFlags.BooleanLiteral) return { const: (type as unknown as { intrinsicName: string }).intrinsicName === 'true' };
    if (f & ts.TypeFlags.StringLike) return { type: 'string' };
    if (f & ts.TypeFlags.NumberLike) return { type: 'number' };
    if (f & ts.TypeFlags.BooleanLike) return { type: 'boolean' };
    if (type.isUnion()) return this.convertAny(this.definedMembers(type), where);
    if (f & (ts.TypeFlags.Object | ts.TypeFlags.Intersection)) return this.object(type, where);
    throw new UnsupportedTypeError(`${where}: unsupported type ${this.checker.typeToString(type)}`);
  }

  private union(members: readonly ts.Type[], where: string): JsonSchema {
    const literals: (string | number)[] = [];
    const booleans = new Set<boolean>();
    const others: JsonSchema[] = [];
    for (const t of members) {
      if (t.flags & ts.TypeFlags.StringLiteral) literals.push((t as ts.StringLiteralType).value);
      else if (t.flags & ts.TypeFlags.NumberLiteral) literals.push((t as ts.NumberLiteralType).value);
      else if (t.flags & ts.TypeFlags.BooleanLiteral) booleans.add((t as unknown as { intrinsicName: string }).intrinsicName === 'true');
      else others.push(this.convert(t, where));
    }
    const parts: JsonSchema[] = [...others];
    if (booleans.size === 2) parts.push({ type: 'boolean' });
    else for (const b of booleans) parts.push({ const: b });
    if (literals.length) {
      const sorted = [...literals].sort((a, b) => (typeof a === typeof b ? (a < b ? -1 : a > b ? 1 : 0) : typeof a === 'number' ? -1 : 1));
      parts.push(sorted.length === 1 ? { const: sorted[0] } : { enum: sorted });
    }
    const unique = [...new Map(parts.map((p) => [JSON.stringify(p), p])).values()];
    if (unique.length === 1) return unique[0]!;
    // a nullable primitive as one `type` list, the form openapi-typescript and joi-to-json-schema write
    const plain = unique.every((p) => Object.keys(p).length === 1 && typeof p.type === 'string');
    if (plain) return { type: unique.map((p) => p.type as string).sort() };
    return { anyOf: unique.sort(byJson) };
  }

  private object(type: ts.Type, where: string): JsonSchema {
    const name = type.getSymbol()?.getName() ?? '';
    const typed = TYPED_ARRAYS[name];
    if (typed) return { type: 'array', items: { type: typed } };
    if (NOT_JSON.has(name)) throw new UnsupportedTypeError(`${where}: ${name} is not JSON`);
    if (this.checker.isTupleType(type)) return this.tuple(type as ts.TupleTypeReference, where);
    if (this.checker.isArrayType(type)) {
      const [item] = this.checker.getTypeArguments(type as ts.TypeReference);
      const items = this.convertAny(this.definedMembers(item!), `${where}[]`);
      // JSON.stringify writes an undefined array element as null
      return { type: 'array', items: this.maybeUndefined(item!) ? { anyOf: [items, { type: 'null' }] } : items };
    }
    if (type.getCallSignatures().length) throw new UnsupportedTypeError(`${where}: a function is not JSON`);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const prop of this.checker.getPropertiesOfType(type)) {
      const declared = this.checker.getTypeOfSymbol(prop);
      const members = this.definedMembers(declared);
      // a property that is only ever undefined never reaches the body
      if (!members.length) continue;
      const schema = this.convertAny(members, `${where}.${prop.name}`);
      const doc = ts.displayPartsToString(prop.getDocumentationComment(this.checker)).trim();
      properties[prop.name] = doc ? { description: doc, ...schema } : schema;
      const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0 || this.maybeUndefined(declared);
      if (!optional) required.push(prop.name);
    }
    const index = this.checker.getIndexInfoOfType(type, ts.IndexKind.String) ?? this.checker.getIndexInfoOfType(type, ts.IndexKind.Number);
    const additional = index ? this.convertAny(this.definedMembers(index.type), `${where}[*]`) : false;
    return {
      type: 'object',
      ...(Object.keys(properties).length ? { properties } : {}),
      ...(required.length ? { required } : {}),
      additionalProperties: additional,
    };
  }

  private tuple(type: ts.TupleTypeReference, where: string): JsonSchema {
    const elements = this.checker.getTypeArguments(type);
    const flags = type.target.elementFlags;
    const prefixItems: JsonSchema[] = [];
    let minItems = 0;
    let rest: JsonSchema | undefined;
    elements.forEach((t, i) => {
      const flag = flags[i]!;
      if (flag & ts.ElementFlags.Variable) {
        rest = this.convert(t, `${where}[${i}...]`);
        return;
      }
      prefixItems.push(this.convertAny(this.definedMembers(t), `${where}[${i}]`));
      if (flag & ts.ElementFlags.Required) minItems = i + 1;
    });
    return {
      type: 'array',
      prefixItems,
      minItems,
      ...(rest ? { items: rest } : { items: false, maxItems: prefixItems.length }),
    };
  }
}
