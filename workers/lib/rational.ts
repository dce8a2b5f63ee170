/**
 * Exact rationals p/q as pairs of safe integers reduced by gcd, q > 0 (kernels-a 0.8). Used by the
 * Game-of-24 search of `/gitthoughts/tree`, whose operands stay far below 2^53 (|p|, q ≤ 13⁴). Every
 * operation checks that its result is still a safe integer pair and throws otherwise, so a result
 * is exact or absent, never silently rounded.
 */

export interface Rational {
  readonly p: number;
  readonly q: number;
}

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}

/** p/q reduced, sign on the numerator; throws on q = 0 or a non-safe-integer part. */
export function rat(p: number, q = 1): Rational {
  if (!Number.isSafeInteger(p) || !Number.isSafeInteger(q)) throw new RangeError(`rational: ${p}/${q} is not a pair of safe integers`);
  if (q === 0) throw new RangeError('rational: zero denominator');
  const g = gcd(p, q) || 1;
  const s = q < 0 ? -1 : 1;
  return { p: (s * p) / g || 0, q: (s * q) / g };
}

export const add = (a: Rational, b: Rational): Rational => rat(a.p * b.q + b.p * a.q, a.q * b.q);
export const sub = (a: Rational, b: Rational): Rational => rat(a.p * b.q - b.p * a.q, a.q * b.q);
export const mul = (a: Rational, b: Rational): Rational => rat(a.p * b.p, a.q * b.q);
/** a / b, or null when b = 0. */
export const div = (a: Rational, b: Rational): Rational | null => (b.p === 0 ? null : rat(a.p * b.q, a.q * b.p));

export const isZero = (a: Rational): boolean => a.p === 0;
export const equals = (a: Rational, b: Rational): boolean => a.p === b.p && a.q === b.q;
/** Sign of a − b, exactly. */
export const compare = (a: Rational, b: Rational): number => Math.sign(a.p * b.q - b.p * a.q);
export const toNumber = (a: Rational): number => a.p / a.q;
/** `p` for integers, else `p/q`. */
export const format = (a: Rational): string => (a.q === 1 ? String(a.p) : `${a.p}/${a.q}`);

/** Parses `p` or `p/q` (optional leading minus); null when malformed or q = 0. */
export function parse(text: string): Rational | null {
  const m = /^(-?\d+)(?:\/(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const q = m[2] === undefined ? 1 : Number(m[2]);
  if (q === 0) return null;
  return rat(Number(m[1]), q);
}
