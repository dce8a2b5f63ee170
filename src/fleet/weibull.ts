/**
 * Two-parameter Weibull life model: censored maximum-likelihood fit, conditional failure
 * probability, mean residual life through the upper incomplete gamma function, and the B10 residual
 * life. Pure numerics, no dataset knowledge.
 */

/** ln Γ(x), Lanczos (g = 7, n = 9), |error| < 1e-13 for x > 0. */
export function lnGamma(x: number): number {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Regularized upper incomplete gamma Q(a, x): series below a+1, Lentz continued fraction above (Numerical Recipes 6.2). */
export function gammaQ(a: number, x: number): number {
  if (x <= 0) return 1;
  const lnPre = a * Math.log(x) - x - lnGamma(a);
  if (x < a + 1) {
    let sum = 1 / a;
    let term = sum;
    for (let n = 1; n < 1000; n++) {
      term *= x / (a + n);
      sum += term;
      if (Math.abs(term) < Math.abs(sum) * 1e-16) break;
    }
    return 1 - sum * Math.exp(lnPre);
  }
  const tiny = 1e-300;
  let b = x + 1 - a;
  let c = 1 / tiny;
  let d = 1 / b;
  let h = d;
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (Math.abs(d) < tiny) d = tiny;
    c = b + an / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(lnPre) * h;
}

export interface WeibullParams {
  beta: number;
  eta: number;
}

export const reliability = ({ beta, eta }: WeibullParams, t: number): number => Math.exp(-((t / eta) ** beta));
export const hazard = ({ beta, eta }: WeibullParams, t: number): number => (beta / eta) * (t / eta) ** (beta - 1);

/** P(failure in (T, T+H] | survived to T) = 1 − exp(−[((T+H)/η)^β − (T/η)^β]). */
export function conditionalFailure({ beta, eta }: WeibullParams, t: number, h: number): number {
  return 1 - Math.exp(-(((t + h) / eta) ** beta - (t / eta) ** beta));
}

/** MRL(T) = (η/β)·e^{(T/η)^β}·Γ(1/β, (T/η)^β), with Γ(a,x) = Q(a,x)·Γ(a) (evaluated in logs). */
export function meanResidualLife({ beta, eta }: WeibullParams, t: number): number {
  const a = 1 / beta;
  const x = (t / eta) ** beta;
  return (eta / beta) * Math.exp(x + lnGamma(a) + Math.log(gammaQ(a, x)));
}

/** Time until conditional reliability falls to 0.9: η·((T/η)^β − ln 0.9)^{1/β} − T. */
export function b10Residual({ beta, eta }: WeibullParams, t: number): number {
  return eta * ((t / eta) ** beta - Math.log(0.9)) ** (1 / beta) - t;
}

/**
 * Censored MLE. The profile equation g(β) = Σt^β ln t / Σt^β − 1/β − (1/r)Σ_fail ln t = 0 is
 * increasing in β, so bisection on [0.05, 50] converges; then η = (Σt^β / r)^{1/β}.
 * Times are scaled by their maximum first so t^β never overflows.
 */
export function fitWeibull(lives: readonly { t: number; failed: boolean }[]): (WeibullParams & { iterations: number }) | null {
  const r = lives.filter((l) => l.failed).length;
  if (r === 0) return null;
  const scale = Math.max(...lives.map((l) => l.t));
  const ts = lives.map((l) => l.t / scale);
  const logs = ts.map(Math.log);
  const meanLogFail = lives.reduce((s, l, i) => (l.failed ? s + logs[i]! : s), 0) / r;
  const g = (b: number): number => {
    let num = 0;
    let den = 0;
    ts.forEach((t, i) => {
      const p = t ** b;
      num += p * logs[i]!;
      den += p;
    });
    return num / den - 1 / b - meanLogFail;
  };
  let lo = 0.05;
  let hi = 50;
  let iterations = 0;
  while (hi - lo > 1e-12 * hi && iterations < 200) {
    const mid = (lo + hi) / 2;
    if (g(mid) > 0) hi = mid;
    else lo = mid;
    iterations++;
  }
  const beta = (lo + hi) / 2;
  const eta = scale * (ts.reduce((s, t) => s + t ** beta, 0) / r) ** (1 / beta);
  return { beta, eta, iterations };
}
