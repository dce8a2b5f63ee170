/**
 * The one project-wide PRNG: mulberry32 over a 32-bit state, with named sub-streams.
 *
 * Stream state = fmix32(seed_u32 XOR fnv1a32("<kernel id>/<label>")), so each ingredient of a
 * kernel draws from its own stream and growing one array never shifts another (common random
 * numbers, kernels-b 0.3 / kernels-c C2). Math.random is never used by a kernel.
 */

/** FNV-1a, 32-bit, over the UTF-8 bytes of `text` (labels are ASCII, so bytes = code units). */
export function fnv1a32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3 finaliser: spreads nearby seeds over the whole state space. */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export class Rng {
  private state: number;

  constructor(state: number) {
    this.state = state >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }

  bernoulli(p: number): boolean {
    return this.next() < p;
  }

  /** Standard normal by Box–Muller, cosine branch only: exactly two uniforms per normal. */
  normal(): number {
    const u1 = 1 - this.next(); // in (0, 1], keeps the logarithm finite
    const u2 = this.next();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** n standard normals into a Float64Array (prefix-stable: 2n uniforms, in order). */
  normals(n: number, scale = 1): Float64Array {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = this.normal() * scale;
    return out;
  }

  /** Standard Gumbel: -ln(-ln u) with u kept inside (0, 1). */
  gumbel(): number {
    const u = Math.min(Math.max(this.next(), 2 ** -32), 1 - 2 ** -53);
    return -Math.log(-Math.log(u));
  }

  /** Index drawn from unnormalised non-negative weights (inverse CDF; the last index absorbs rounding). */
  categorical(weights: ArrayLike<number>): number {
    let total = 0;
    for (let i = 0; i < weights.length; i++) total += weights[i]!;
    let u = this.next() * total;
    for (let i = 0; i < weights.length - 1; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** k distinct indices of [0, n), by partial Fisher–Yates from the front. */
  sample(n: number, k: number): number[] {
    const idx = Array.from({ length: n }, (_, i) => i);
    for (let i = 0; i < k; i++) {
      const j = i + Math.floor(this.next() * (n - i));
      const tmp = idx[i]!;
      idx[i] = idx[j]!;
      idx[j] = tmp;
    }
    return idx.slice(0, k);
  }

  /** In-place Fisher–Yates shuffle from the last index down. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = items[i]!;
      items[i] = items[j]!;
      items[j] = tmp;
    }
    return items;
  }

  /** Poisson(lambda) by Knuth's product method (lambda <= ~200). */
  poisson(lambda: number): number {
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k++;
      p *= this.next();
    }
    return k;
  }
}

/** Named sub-streams of one kernel call. */
export class RngStreams {
  constructor(
    readonly seed: number,
    readonly kernelId: string,
  ) {}

  /** The stream `<kernel id>/<label>` of this call. */
  stream(label: string): Rng {
    return this.shared(`${this.kernelId}/${label}`);
  }

  /** A stream several kernels share by full name (e.g. `fgbrain/graph`, so they all see one graph). */
  shared(fullLabel: string): Rng {
    return new Rng(fmix32((this.seed >>> 0) ^ fnv1a32(fullLabel)));
  }
}
