import { expect } from 'chai';
import { Rng, RngStreams, fnv1a32, fmix32 } from '../../src/lib/prng.js';

/**
 * mulberry32 written independently, in BigInt arithmetic modulo 2^32 (no Math.imul, no int32
 * wrap-around): the uniforms every draw below is checked against.
 */
function mulberry32(seed: number): () => number {
  const M = 1n << 32n;
  let s = BigInt(seed >>> 0);
  return () => {
    s = (s + 0x6d2b79f5n) % M;
    let t = s;
    t = ((t ^ (t >> 15n)) * (t | 1n)) % M;
    t = t ^ ((t + ((t ^ (t >> 7n)) * (t | 61n)) % M) % M);
    return Number(t ^ (t >> 14n)) / 2 ** 32;
  };
}

/** n uniforms of the reference from `seed`. */
const uniforms = (seed: number, n: number) => {
  const u = mulberry32(seed);
  return Array.from({ length: n }, () => u());
};

/** Mean and (population) variance. */
function moments(xs: number[]): { mean: number; variance: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return { mean, variance: xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length };
}

describe('src/lib/prng', () => {
  it('reproduces the mulberry32 check values of kernels-a 0.5 (state 42)', () => {
    const r = new Rng(42);
    expect([r.next(), r.next(), r.next()]).to.deep.equal([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
  });

  it('implements FNV-1a 32 (offset basis for "", published vector for "a")', () => {
    expect(fnv1a32('')).to.equal(0x811c9dc5);
    expect(fnv1a32('a')).to.equal(0xe40c292c);
    expect(fnv1a32('foobar')).to.equal(0xbf9cf968);
  });

  it('fmix32 is the MurmurHash3 finaliser (0 fixed point, bijective on a sample)', () => {
    expect(fmix32(0)).to.equal(0);
    const seen = new Set<number>();
    for (let i = 0; i < 10000; i++) seen.add(fmix32(i));
    expect(seen.size).to.equal(10000);
  });

  it('gives independent, reproducible named streams', () => {
    const a = new RngStreams(7, 'k/x').stream('data');
    const b = new RngStreams(7, 'k/x').stream('data');
    const c = new RngStreams(7, 'k/x').stream('noise');
    const seqA = [a.next(), a.next()];
    expect(seqA).to.deep.equal([b.next(), b.next()]);
    expect(seqA).to.not.deep.equal([c.next(), c.next()]);
  });

  it('draws normals with mean 0 and variance 1 (4 sigma over 20k draws)', () => {
    const r = new Rng(1);
    const n = 20000;
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const z = r.normal();
      s += z;
      s2 += z * z;
    }
    expect(Math.abs(s / n)).to.be.below(4 / Math.sqrt(n));
    expect(Math.abs(s2 / n - 1)).to.be.below(4 * Math.sqrt(2 / n));
  });

  it('samples k distinct indices and categorical draws proportional to weights', () => {
    const r = new Rng(3);
    const picked = r.sample(50, 20);
    expect(new Set(picked).size).to.equal(20);
    expect(picked.every((i) => i >= 0 && i < 50)).to.equal(true);
    const counts = [0, 0, 0];
    for (let i = 0; i < 30000; i++) counts[r.categorical([1, 2, 7])]!++;
    expect(counts[2]! / 30000).to.be.closeTo(0.7, 0.02);
    expect(counts[0]! / 30000).to.be.closeTo(0.1, 0.01);
  });

  it('next() equals the independent BigInt mulberry32 for several states (the published three first)', () => {
    expect(uniforms(42, 3)).to.deep.equal([0.6011037519201636, 0.44829055899754167, 0.8524657934904099]);
    for (const seed of [0, 1, 42, 0x9e3779b9, 2 ** 32 - 1]) {
      const r = new Rng(seed);
      expect(Array.from({ length: 500 }, () => r.next()), `state ${seed}`).to.deep.equal(uniforms(seed, 500));
    }
    // the state is a uint32: −1 is 2^32 − 1
    expect(new Rng(-1).next()).to.equal(uniforms(2 ** 32 - 1, 1)[0]);
  });

  it('uniform(lo, hi) = lo + (hi − lo)·u and int(n) = ⌊n·u⌋, one uniform each', () => {
    const u = uniforms(42, 4);
    const r = new Rng(42);
    expect(r.uniform(2, 5)).to.equal(2 + 3 * u[0]!);
    expect(r.uniform(-1, -0.5)).to.equal(-1 + 0.5 * u[1]!);
    expect(r.int(10)).to.equal(Math.floor(10 * u[2]!));
    expect(r.next()).to.equal(u[3]);
  });

  it('bernoulli(p) is u < p: false when p equals the uniform, true just above; frequency p', () => {
    const [u0, u1] = uniforms(42, 2) as [number, number];
    const r = new Rng(42);
    expect(r.bernoulli(u0)).to.equal(false);
    expect(r.bernoulli(u1 + 2 ** -40)).to.equal(true);
    const s = new Rng(8);
    const n = 20000;
    let hits = 0;
    for (let i = 0; i < n; i++) if (s.bernoulli(0.3)) hits++;
    expect(Math.abs(hits / n - 0.3)).to.be.below(4 * Math.sqrt((0.3 * 0.7) / n));
    expect(Array.from({ length: 200 }, () => s.bernoulli(0)).some(Boolean)).to.equal(false);
    expect(Array.from({ length: 200 }, () => s.bernoulli(1)).every(Boolean)).to.equal(true);
  });

  it('normals(n, scale) are scale·√(−2 ln(1 − u₁))·cos(2π u₂) of consecutive pairs, exactly 2n uniforms', () => {
    const u = uniforms(9, 7);
    const r = new Rng(9);
    const z = r.normals(3, 2.5);
    expect(z).to.be.instanceOf(Float64Array);
    expect(z).to.have.length(3);
    for (let i = 0; i < 3; i++) expect(z[i]).to.be.closeTo(2.5 * Math.sqrt(-2 * Math.log(1 - u[2 * i]!)) * Math.cos(2 * Math.PI * u[2 * i + 1]!), 1e-14);
    // prefix-stable: the next draw is the 7th uniform
    expect(r.next()).to.equal(u[6]);
    expect(new Rng(9).normals(0)).to.have.length(0);
  });

  it('gumbel() is −ln(−ln u); the draws have the Gumbel mean γ, variance π²/6 and P(G ≤ 0) = 1/e', () => {
    const u = uniforms(42, 3);
    const r = new Rng(42);
    for (let i = 0; i < 3; i++) expect(r.gumbel()).to.equal(-Math.log(-Math.log(u[i]!)));
    const s = new Rng(12);
    const n = 20000;
    const g = Array.from({ length: n }, () => s.gumbel());
    const { mean, variance } = moments(g);
    const v = Math.PI ** 2 / 6;
    expect(Math.abs(mean - 0.5772156649015329)).to.be.below(4 * Math.sqrt(v / n));
    // Var(s²) ≈ (μ₄ − σ⁴)/n with μ₄ = 5.4 σ⁴ (excess kurtosis 12/5)
    expect(Math.abs(variance - v)).to.be.below(4 * v * Math.sqrt(4.4 / n));
    const p0 = g.filter((x) => x <= 0).length / n;
    expect(Math.abs(p0 - Math.exp(-1))).to.be.below(4 * Math.sqrt((Math.exp(-1) * (1 - Math.exp(-1))) / n));
  });

  it('categorical: half-open intervals (a uniform on a boundary goes up), zero weights never drawn', () => {
    // weights [t, 2^32 − t] with t = 2^32·u: u·total lands exactly on the boundary between 0 and 1
    const t = uniforms(42, 1)[0]! * 2 ** 32;
    expect(Number.isInteger(t)).to.equal(true);
    expect(new Rng(42).categorical([t, 2 ** 32 - t])).to.equal(1);
    expect(new Rng(42).categorical([t + 1, 2 ** 32 - t - 1])).to.equal(0);
    expect(new Rng(42).categorical([t, 0, 2 ** 32 - t])).to.equal(2);
    expect(new Rng(42).categorical([5])).to.equal(0);
    const r = new Rng(4);
    const seen = new Set<number>();
    for (let i = 0; i < 5000; i++) seen.add(r.categorical([0, 1, 0, 2, 0]));
    expect([...seen].sort()).to.deep.equal([1, 3]);
  });

  it('sample(n, k): partial Fisher–Yates from the front (hand-derived values), k uniforms, each index with probability k/n', () => {
    // u = 0.601, 0.448, 0.852: j₀ = ⌊6.01⌋ = 6; j₁ = 1 + ⌊0.448·9⌋ = 5; j₂ = 2 + ⌊0.852·8⌋ = 8
    const r = new Rng(42);
    expect(r.sample(10, 3)).to.deep.equal([6, 5, 8]);
    expect(r.next()).to.equal(uniforms(42, 4)[3]);
    expect(new Rng(42).sample(4, 0)).to.deep.equal([]);
    expect([...new Rng(5).sample(6, 6)].sort()).to.deep.equal([0, 1, 2, 3, 4, 5]);
    const s = new Rng(13);
    const n = 10000;
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < n; i++) for (const j of s.sample(10, 3)) counts[j] = counts[j]! + 1;
    const sd = Math.sqrt(n * 0.3 * 0.7);
    for (const c of counts) expect(Math.abs(c - 0.3 * n)).to.be.below(4 * sd);
  });

  it('shuffle: in place, Fisher–Yates from the last index down (hand-derived), n − 1 uniforms, all orders equally likely', () => {
    // u = 0.601, 0.448, 0.852: i = 3 ↔ ⌊2.40⌋ = 2, i = 2 ↔ ⌊1.34⌋ = 1, i = 1 ↔ ⌊1.70⌋ = 1
    const r = new Rng(42);
    const items = ['a', 'b', 'c', 'd'];
    expect(r.shuffle(items)).to.equal(items);
    expect(items).to.deep.equal(['a', 'd', 'b', 'c']);
    expect(r.next()).to.equal(uniforms(42, 4)[3]);
    const e = new Rng(42);
    expect(e.shuffle([])).to.deep.equal([]);
    expect(e.shuffle(['x'])).to.deep.equal(['x']);
    expect(e.next()).to.equal(uniforms(42, 1)[0]); // nothing drawn for 0 or 1 items
    const s = new Rng(21);
    const n = 24000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const k = s.shuffle([0, 1, 2, 3]).join('');
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    expect(counts.size).to.equal(24);
    const sd = Math.sqrt((n * (1 / 24) * 23) / 24);
    for (const c of counts.values()) expect(Math.abs(c - n / 24)).to.be.below(4 * sd);
  });

  it('poisson(λ): the count of leading uniform products above e^−λ (hand values); mean, variance and P(0) of Poisson(λ)', () => {
    // state 42: u₁ = 0.601 > e^−1, u₁u₂ = 0.269 < e^−1 → 1. For λ = 5 the products stay above
    // e^−5 = 0.00674 through u₁…u₆ = 0.0142 and fall below at u₁…u₇ = 0.00387 → 6
    expect(new Rng(42).poisson(1)).to.equal(1);
    expect(new Rng(42).poisson(5)).to.equal(6);
    expect(new Rng(42).poisson(0)).to.equal(0);
    // Knuth's loop runs while p > e^−λ: a product equal to e^−λ stops it (λ = −ln u₁, exact here)
    const u1 = uniforms(42, 1)[0]!;
    expect(Math.exp(Math.log(u1))).to.equal(u1);
    expect(new Rng(42).poisson(-Math.log(u1))).to.equal(0);
    const s = new Rng(17);
    const n = 20000;
    const lambda = 3.7;
    const k = Array.from({ length: n }, () => s.poisson(lambda));
    const { mean, variance } = moments(k);
    expect(Math.abs(mean - lambda)).to.be.below(4 * Math.sqrt(lambda / n));
    // Var(s²) ≈ (μ₄ − σ⁴)/n = (λ + 2λ²)/n for a Poisson
    expect(Math.abs(variance - lambda)).to.be.below(4 * Math.sqrt((lambda + 2 * lambda ** 2) / n));
    const p0 = Math.exp(-lambda);
    expect(Math.abs(k.filter((x) => x === 0).length / n - p0)).to.be.below(4 * Math.sqrt((p0 * (1 - p0)) / n));
  });
});
