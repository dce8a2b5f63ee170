import { expect } from 'chai';
import { add, compare, div, equals, format, isZero, mul, parse, rat, sub, toNumber } from '../../../workers/lib/rational.js';
import { Rng } from '../../../src/lib/prng.js';

describe('lib/rational', () => {
  it('normalises sign and common factors', () => {
    expect(rat(6, -4)).to.deep.equal({ p: -3, q: 2 });
    expect(rat(0, -7)).to.deep.equal({ p: 0, q: 1 });
    expect(Object.is(rat(0, -7).p, -0)).to.equal(false);
    expect(() => rat(1, 0)).to.throw(RangeError);
    expect(() => rat(0.5, 1)).to.throw(RangeError);
    expect(isZero(rat(0, 5))).to.equal(true);
    expect(isZero(rat(-1, 5))).to.equal(false);
    // surrounding whitespace is trimmed before parsing
    expect(parse('  -6/4 ')).to.deep.equal({ p: -3, q: 2 });
  });

  it('field operations agree with cross-multiplied integers on random operands', () => {
    const rng = new Rng(5);
    for (let i = 0; i < 500; i++) {
      const a = rat(rng.int(41) - 20, 1 + rng.int(12));
      const b = rat(rng.int(41) - 20, 1 + rng.int(12));
      // (a ∘ b)·q_a·q_b·q_r written back to integers
      const s = add(a, b);
      expect(s.p * a.q * b.q).to.equal((a.p * b.q + b.p * a.q) * s.q);
      const d = sub(a, b);
      expect(d.p * a.q * b.q).to.equal((a.p * b.q - b.p * a.q) * d.q);
      const m = mul(a, b);
      expect(m.p * a.q * b.q).to.equal(a.p * b.p * m.q);
      const qd = div(a, b);
      if (b.p === 0) expect(qd).to.equal(null);
      else expect(equals(mul(qd!, b), a)).to.equal(true);
      expect(compare(a, b)).to.equal(Math.sign(toNumber(a) - toNumber(b)) || 0);
      expect(equals(add(d, b), a)).to.equal(true);
    }
  });

  it('formats and parses integers and fractions', () => {
    expect(format(rat(24))).to.equal('24');
    expect(format(rat(-8, 6))).to.equal('-4/3');
    expect(parse('-4/3')).to.deep.equal(rat(-4, 3));
    expect(parse('12')).to.deep.equal(rat(12));
    expect(parse('1/0')).to.equal(null);
    expect(parse('1.5')).to.equal(null);
    // 8 / (3 − 8/3) = 24, the classic fraction-only solution
    expect(equals(div(rat(8), sub(rat(3), div(rat(8), rat(3))!))!, rat(24))).to.equal(true);
  });
});
