/** The bounded memo behind `pureQuery` routes and kernels' effective parameters. */
import { expect } from 'chai';
import { RecentMemo } from '../../src/lib/memo.js';

describe('src/lib/memo', () => {
  it('computes a key once while it is recent, and drops the least recently used beyond capacity', () => {
    const memo = new RecentMemo<number>(2, 16);
    let calls = 0;
    const f = (v: number) => () => (calls++, v);
    expect(memo.get('a', f(1))).to.equal(1);
    expect(memo.get('a', f(9))).to.equal(1);
    expect(memo.get('b', f(2))).to.equal(2);
    expect(memo.get('a', f(9))).to.equal(1); // 'a' is now the most recent
    expect(memo.get('c', f(3))).to.equal(3); // evicts 'b'
    expect(memo.size).to.equal(2);
    expect(memo.get('b', f(4))).to.equal(4);
    expect(calls).to.equal(4);
  });

  it('keeps no throw and no key over its length limit', () => {
    const memo = new RecentMemo<number>(4, 3);
    expect(() => memo.get('bad', () => { throw new Error('no'); })).to.throw('no');
    expect(memo.get('bad', () => 5)).to.equal(5);
    let calls = 0;
    memo.get('long', () => ++calls);
    memo.get('long', () => ++calls);
    expect(calls).to.equal(2);
    expect(memo.size).to.equal(1);
  });
});
