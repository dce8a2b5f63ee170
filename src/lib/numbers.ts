/**
 * Serialisation rules for kernel bodies (one rule for the whole project, so the same query always
 * gives byte-identical bodies): every float is rounded once, at serialisation, to 12 significant
 * digits; -0 becomes 0; a non-finite number is a kernel bug and throws (the front end answers 500,
 * never `null`).
 */
import { hash } from 'node:crypto';
import { ServiceError } from './service-error.js';

export const SIGNIFICANT_DIGITS = 12;

export class NonFiniteError extends ServiceError {
  readonly code = 'SVC_NON_FINITE';

  constructor(readonly path: string) {
    super(`non-finite number at ${path}`);
  }
}

export function roundNumber(x: number, path = '$'): number {
  if (!Number.isFinite(x)) throw new NonFiniteError(path);
  if (Number.isInteger(x) && Math.abs(x) <= Number.MAX_SAFE_INTEGER) return x === 0 ? 0 : x;
  const r = Number(x.toPrecision(SIGNIFICANT_DIGITS));
  return r === 0 ? 0 : r;
}

/** Deep copy with every number rounded; typed arrays become plain arrays. */
export function roundDeep(value: unknown, path = '$'): unknown {
  if (typeof value === 'number') return roundNumber(value, path);
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    return Array.from(value as unknown as ArrayLike<number>, (v, i) => roundNumber(v, `${path}[${i}]`));
  }
  if (Array.isArray(value)) return value.map((v, i) => roundDeep(v, `${path}[${i}]`));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v !== undefined) out[k] = roundDeep(v, `${path}.${k}`);
  }
  return out;
}

/** Canonical JSON (RFC 8785 for the ASCII-keyed finite data used here): sorted keys, no whitespace. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (ArrayBuffer.isView(value)) return canonicalJson(Array.from(value as unknown as ArrayLike<number>));
  // string building without entry arrays: this runs for every receipt and every kernel body
  let out: string;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + (canonicalJson(value[i]) ?? '');
    return `${out}]`;
  }
  // the default sort orders by UTF-16 code units, as RFC 8785 asks
  const keys = Object.keys(value).sort();
  out = '{';
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(k)}:${canonicalJson(v)}`;
  }
  return `${out}}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/**
 * `count` evenly spaced indices of [0, n), r_k = floor((k+1)·n/count) − 1, so the last index is
 * always n − 1 (kernels-c C6); distinct when count ≤ n.
 */
export function evenlySpaced(n: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => Math.floor(((k + 1) * n) / count) - 1);
}

/**
 * Long series in a body: at most `cap` entries sampled at evenly spaced indices (always including
 * the last), with the indices and the SHA-256 of the full rounded series (kernels-c C3).
 */
export function sampleSeries(series: ArrayLike<number>, cap = 256): { values: number[]; index: number[]; digest: string; length: number } {
  const full = Array.from(series, (v, i) => roundNumber(v, `series[${i}]`));
  const n = full.length;
  const index = n <= cap ? full.map((_, i) => i) : evenlySpaced(n, cap);
  return { values: index.map((i) => full[i]!), index, digest: sha256Hex(canonicalJson(full)), length: n };
}
