/**
 * PAC-Bayes certified floor by inverting the binary KL (Seeger 2002; Maurer 2004 for the
 * ln(2√n/δ) term): the floor is the smallest p ≤ q̂ with kl(q̂ ‖ p) ≤ (KL(Q‖P) + ln(2√n/δ)) / n.
 */

export const KL_POSTERIOR_PRIOR = 0.5;
export const DELTA = 0.05;

/** a·ln(a/b), with 0·ln 0 = 0 (a module function: the bisection calls it ~80 times a verdict). */
const klTerm = (a: number, b: number): number => (a === 0 ? 0 : b === 0 ? Infinity : a * Math.log(a / b));

/** Binary KL divergence kl(q ‖ p) in nats, with 0·ln 0 = 0. */
export function binaryKl(q: number, p: number): number {
  return klTerm(q, p) + klTerm(1 - q, 1 - p);
}

export function pacBayesBound(n: number, kl = KL_POSTERIOR_PRIOR, delta = DELTA): number {
  return (kl + Math.log((2 * Math.sqrt(n)) / delta)) / n;
}

/** Lower inverse: inf { p ∈ [0, q] : kl(q ‖ p) ≤ bound }, by bisection to 1e-12. */
export function klInverseLower(q: number, bound: number): number {
  if (bound <= 0) return q;
  let lo = 0;
  let hi = q;
  if (binaryKl(q, 0) <= bound) return 0;
  for (let i = 0; i < 80 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    // kl(q‖p) decreases as p rises towards q: keep the infimum inside [lo, hi]
    if (binaryKl(q, mid) > bound) lo = mid;
    else hi = mid;
  }
  return hi;
}
