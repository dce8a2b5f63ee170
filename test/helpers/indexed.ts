/**
 * Checked element access for tests (noUncheckedIndexedAccess): an index outside the array throws,
 * so a test with a wrong index fails loudly instead of computing with `undefined` (NaN).
 */

interface NumberArray {
  [i: number]: number;
  readonly length: number;
}

/** xs[i], or a throw when i is not an index of xs. */
export function at<T>(xs: ArrayLike<T>, i: number): T {
  if (!Number.isInteger(i) || i < 0 || i >= xs.length) throw new RangeError(`index ${i} outside 0…${xs.length - 1}`);
  return xs[i] as T;
}

/** xs[i] += by (a histogram bin, an accumulator); throws when i is not an index of xs. */
export function addAt(xs: NumberArray, i: number, by = 1): void {
  xs[i] = at(xs, i) + by;
}

/** Consecutive pairs of xs: [xs[0], xs[1]], [xs[1], xs[2]], … (none for fewer than two). */
export function pairs<T>(xs: readonly T[]): [T, T][] {
  return xs.slice(1).map((next, i) => [xs[i] as T, next]);
}

/** xs[i] ^= mask (a GF(2) row, a byte to corrupt); throws when i is not an index of xs. */
export function xorAt(xs: NumberArray, i: number, mask: number): void {
  xs[i] = at(xs, i) ^ mask;
}
