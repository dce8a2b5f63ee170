import { expect } from 'chai';
import { Rng, RngStreams, fnv1a32, fmix32 } from '../../../workers/lib/prng.js';

describe('workers/lib/prng', () => {
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
});
