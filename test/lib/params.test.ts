/**
 * The strict parameter types (README "Parameters are strict"): query strings are parsed by the
 * project's own rules before Joi's lenient coercion could read `1.0`, ` 5` or `1e3` as integers;
 * values that are not strings (inside a JSON `request` object) go to the base type unchanged.
 */
import { expect } from 'chai';
import { bool, int, Joi, num, seed, SEED_MAX, str, type Schema } from '../../src/lib/params.js';

/** The value a schema accepts, or the type of its first error. */
function check(schema: Schema, value: unknown): { value: unknown } | { error: string } {
  const r = schema.validate(value);
  return r.error ? { error: r.error.details[0]!.type } : { value: r.value };
}

describe('src/lib/params', () => {
  describe('int (qint)', () => {
    // built inside each test: a schema built while mocha loads the file would not see Stryker's active mutant
    const s = () => int(-10, 10, 3);

    it('reads plain decimal strings, with an optional sign', () => {
      expect(check(s(), '5')).to.deep.equal({ value: 5 });
      expect(check(s(), '-7')).to.deep.equal({ value: -7 });
      expect(check(s(), '007')).to.deep.equal({ value: 7 });
      // the sign is part of a plain decimal (INT_RE allows it); Joi turns −0 into 0
      expect(check(s(), '+5')).to.deep.equal({ value: 5 });
      expect(Object.is((check(s(), '-0') as { value: number }).value, 0)).to.equal(true);
    });

    it('refuses everything else a lenient parser would read as an integer', () => {
      for (const v of ['1.0', '1e3', '1E1', ' 5', '5 ', '\t5', '0x5', '0b1', '0o7', '', '+', '-', '5.', '.5', '1_0', '٣', 'Infinity', 'NaN', '5n'])
        expect(check(s(), v), JSON.stringify(v)).to.deep.equal({ error: 'qint.parse' });
    });

    it('passes JSON numbers to the base type (integer rule, no coercion of other types)', () => {
      expect(check(s(), 5)).to.deep.equal({ value: 5 });
      expect(check(s(), 5.5)).to.deep.equal({ error: 'number.integer' });
      expect(check(s(), true)).to.deep.equal({ error: 'number.base' });
      expect(check(s(), null)).to.deep.equal({ error: 'number.base' });
      expect(check(s(), [5])).to.deep.equal({ error: 'number.base' });
    });

    it('bounds are errors, not clamps, on both sides and both inputs; the default fills a missing value', () => {
      expect(check(s(), '10')).to.deep.equal({ value: 10 });
      expect(check(s(), '-10')).to.deep.equal({ value: -10 });
      expect(check(s(), '11')).to.deep.equal({ error: 'number.max' });
      expect(check(s(), '-11')).to.deep.equal({ error: 'number.min' });
      expect(check(s(), 11)).to.deep.equal({ error: 'number.max' });
      expect(check(s(), -11)).to.deep.equal({ error: 'number.min' });
      // a huge integer is out of bounds, not a parse error (the base is .unsafe())
      expect(check(s(), '99999999999999999999')).to.deep.equal({ error: 'number.max' });
      expect(check(s(), undefined)).to.deep.equal({ value: 3 });
      expect(check(int(2, 4, 2), '1')).to.deep.equal({ error: 'number.min' });
    });
  });

  describe('num (qnum)', () => {
    const s = () => num(-1000, 1000, 0.5);

    it('reads finite decimals with optional sign, fraction and exponent', () => {
      const cases: [string, number][] = [
        ['1.5', 1.5], ['.5', 0.5], ['5.', 5], ['-2', -2], ['+.25', 0.25], ['1e3', 1000], ['1E-3', 0.001], ['-2.5e+2', -250], ['0', 0], ['00.10', 0.1],
      ];
      for (const [v, x] of cases) expect(check(s(), v), v).to.deep.equal({ value: x });
    });

    it('refuses non-finite words, blanks, hex and other forms Number() would accept', () => {
      for (const v of ['Infinity', '-Infinity', 'NaN', '', ' ', ' 1', '1 ', '0x10', '0b1', '.', 'e3', '1e', '1.2.3', '1_000', '--1', '1e400'])
        expect(check(s(), v), JSON.stringify(v)).to.deep.equal({ error: 'qnum.parse' });
    });

    it('passes JSON numbers to the base type', () => {
      expect(check(s(), 2.5)).to.deep.equal({ value: 2.5 });
      expect(check(s(), true)).to.deep.equal({ error: 'number.base' });
      expect(check(s(), Infinity)).to.deep.equal({ error: 'number.infinity' });
    });

    it('bounds are errors, not clamps; the default fills a missing value', () => {
      expect(check(s(), '1000')).to.deep.equal({ value: 1000 });
      expect(check(s(), '1000.001')).to.deep.equal({ error: 'number.max' });
      expect(check(s(), '-1e4')).to.deep.equal({ error: 'number.min' });
      expect(check(s(), -1000.5)).to.deep.equal({ error: 'number.min' });
      expect(check(s(), undefined)).to.deep.equal({ value: 0.5 });
    });
  });

  describe('bool (qbool)', () => {
    const s = () => bool(false);

    it('reads the accepted words in any case', () => {
      for (const w of ['true', '1', 'yes', 'on', 't', 'y']) {
        for (const v of [w, w.toUpperCase(), w[0]!.toUpperCase() + w.slice(1)]) expect(check(s(), v), v).to.deep.equal({ value: true });
      }
      for (const w of ['false', '0', 'no', 'off', 'f', 'n']) {
        for (const v of [w, w.toUpperCase(), w[0]!.toUpperCase() + w.slice(1)]) expect(check(s(), v), v).to.deep.equal({ value: false });
      }
    });

    it('refuses other words', () => {
      for (const v of ['', ' true', 'true ', 'tru', 'yess', '2', '-1', '00', 'null', 'none', 'ja', 'O'])
        expect(check(s(), v), JSON.stringify(v)).to.deep.equal({ error: 'qbool.parse' });
    });

    it('passes JSON booleans to the base type, refuses numbers there; the default fills a missing value', () => {
      expect(check(s(), true)).to.deep.equal({ value: true });
      expect(check(s(), false)).to.deep.equal({ value: false });
      expect(check(s(), 1)).to.deep.equal({ error: 'boolean.base' });
      expect(check(s(), undefined)).to.deep.equal({ value: false });
      expect(check(bool(true), undefined)).to.deep.equal({ value: true });
    });
  });

  it('str: 0..maxLen characters, the empty string allowed, a default when missing', () => {
    const s = () => str(3, 'ab');
    expect(check(s(), '')).to.deep.equal({ value: '' });
    expect(check(s(), 'xyz')).to.deep.equal({ value: 'xyz' });
    expect(check(s(), 'wxyz')).to.deep.equal({ error: 'string.max' });
    expect(check(s(), undefined)).to.deep.equal({ value: 'ab' });
    expect(check(s(), 5)).to.deep.equal({ error: 'string.base' });
  });

  it('seed: an integer in 0..4294967295 (uint32), default 42', () => {
    expect(SEED_MAX).to.equal(2 ** 32 - 1);
    expect(check(seed(), undefined)).to.deep.equal({ value: 42 });
    expect(check(seed(), '0')).to.deep.equal({ value: 0 });
    expect(check(seed(), '4294967295')).to.deep.equal({ value: 4294967295 });
    expect(check(seed(), '4294967296')).to.deep.equal({ error: 'number.max' });
    expect(check(seed(), '-1')).to.deep.equal({ error: 'number.min' });
    expect(check(seed(), '7.0')).to.deep.equal({ error: 'qint.parse' });
  });

  it('the extended types are usable inside an object schema (a JSON request)', () => {
    const schema = Joi.object({ n: int(1, 9, 1), x: num(0, 1, 0.5), b: bool(false) });
    expect(schema.validate({ n: 4, x: 0.25, b: true }).value).to.deep.equal({ n: 4, x: 0.25, b: true });
    expect(schema.validate({ n: '4', x: '.25', b: 'on' }).value).to.deep.equal({ n: 4, x: 0.25, b: true });
    expect(schema.validate({}).value).to.deep.equal({ n: 1, x: 0.5, b: false });
    expect(schema.validate({ n: '4.0' }).error?.details[0]).to.include({ type: 'qint.parse' });
  });
});
