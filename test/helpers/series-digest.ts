/**
 * The documented digest of a reported series, recomputed from a test's own reference values: SHA-256
 * of the canonical JSON of the whole series at 12 significant digits, so a kernel that digests only
 * the sampled points, or unrounded values, or a different series, answers a different hex string.
 */
import { canonicalJson, roundNumber, sha256Hex } from '../../src/lib/numbers.js';

/** sha256(canonical JSON of every value rounded as the body rounds it). */
export function seriesDigest(values: ArrayLike<number>): string {
  return sha256Hex(canonicalJson(Array.from(values, (v) => roundNumber(v))));
}

/** The sampled index the body reports: every point up to `cap`, else ⌊(k+1)·n/cap⌋ − 1 for k < cap (ends at the last). */
export function sampledIndex(length: number, cap = 256): number[] {
  if (length <= cap) return Array.from({ length }, (_, i) => i);
  return Array.from({ length: cap }, (_, k) => Math.floor(((k + 1) * length) / cap) - 1);
}
