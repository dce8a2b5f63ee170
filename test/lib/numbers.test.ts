import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { canonicalJson, evenlySpaced, NonFiniteError, roundDeep, roundNumber, sampleSeries, sha256Hex } from '../../src/lib/numbers.js';
import { Rng } from '../../src/lib/prng.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** The error roundNumber/roundDeep/sampleSeries throws, or undefined. */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

function expectNonFinite(f: () => unknown, path: string): void {
  const e = thrown(f);
  expect(e).to.be.instanceOf(NonFiniteError);
  expect((e as NonFiniteError).path).to.equal(path);
  expect((e as Error).message).to.contain(path);
}

/** Significant digits of the shortest round-trip decimal of x (what JSON.stringify prints). */
function significantDigits(x: number): number {
  const mantissa = Math.abs(x).toExponential().split('e')[0]!.replace('.', '');
  return mantissa.length;
}

describe('src/lib/numbers', () => {
  describe('roundNumber', () => {
    it('rounds to 12 significant digits (hand values)', () => {
      expect(roundNumber(0.1 + 0.2)).to.equal(0.3);
      expect(roundNumber(Math.PI)).to.equal(3.14159265359);
      expect(roundNumber(-1 / 3)).to.equal(-0.333333333333);
      expect(roundNumber(123456.7890123456)).to.equal(123456.789012);
      expect(roundNumber(2 / 3 * 1e-200)).to.equal(6.66666666667e-201);
      expect(roundNumber(1.5)).to.equal(1.5);
    });

    it('keeps integers up to MAX_SAFE_INTEGER exact (15-16 digits), rounds 2**53 and beyond', () => {
      expect(roundNumber(123456789012345)).to.equal(123456789012345);
      expect(roundNumber(Number.MAX_SAFE_INTEGER)).to.equal(9007199254740991);
      expect(roundNumber(-Number.MAX_SAFE_INTEGER)).to.equal(-9007199254740991);
      // 2**53 = 9007199254740992 → 9.00719925474e15
      expect(roundNumber(2 ** 53)).to.equal(9007199254740000);
      expect(roundNumber(-(2 ** 53))).to.equal(-9007199254740000);
      expect(roundNumber(1e21 + 2 ** 20)).to.equal(1e21);
    });

    it('turns -0 into 0', () => {
      expect(Object.is(roundNumber(-0), 0)).to.equal(true);
      expect(Object.is(roundNumber(0), 0)).to.equal(true);
    });

    it('NaN and ±Infinity throw NonFiniteError carrying the path', () => {
      expectNonFinite(() => roundNumber(Number.NaN), '$');
      expectNonFinite(() => roundNumber(Infinity, '$.x'), '$.x');
      expectNonFinite(() => roundNumber(-Infinity, '$.y[3]'), '$.y[3]');
    });

    it('on random doubles of every magnitude: at most 12 significant digits, within half a unit of the 12th', () => {
      const rng = new Rng(11);
      for (let i = 0; i < 2000; i++) {
        const x = (rng.next() - 0.5) * 10 ** Math.floor(rng.uniform(-300, 300));
        const r = roundNumber(x);
        if (Number.isInteger(x) && Math.abs(x) <= Number.MAX_SAFE_INTEGER) {
          expect(r).to.equal(x);
          continue;
        }
        expect(significantDigits(r), `${x}`).to.be.at.most(12);
        const unit = 10 ** (Math.floor(Math.log10(Math.abs(x))) - 11);
        // half a unit of the 12th digit, plus the double rounding of the decimal
        expect(Math.abs(r - x), `${x}`).to.be.at.most(0.5 * unit * (1 + 1e-9) + Math.abs(x) * 2 ** -52);
      }
    });
  });

  describe('roundDeep', () => {
    it('rounds numbers at every depth, typed arrays become plain arrays, other values are kept', () => {
      const input = {
        a: [1, { b: 0.1 + 0.2, c: undefined }, 'x'],
        d: new Float64Array([Math.PI, -0]),
        e: null,
        f: true,
        g: 's',
        h: -0,
        u: undefined,
        n: { m: [new Int32Array([3, -4])] },
      };
      const out = roundDeep(input) as Record<string, any>;
      expect(out).to.deep.equal({ a: [1, { b: 0.3 }, 'x'], d: [3.14159265359, 0], e: null, f: true, g: 's', h: 0, n: { m: [[3, -4]] } });
      expect(Array.isArray(out.d)).to.equal(true);
      expect(Array.isArray(out.n.m[0])).to.equal(true);
      expect(Object.is(out.d[1], 0) && Object.is(out.h, 0)).to.equal(true);
      // undefined members are dropped, not kept as keys
      expect(Object.keys(out)).to.deep.equal(['a', 'd', 'e', 'f', 'g', 'h', 'n']);
      expect(Object.keys(out.a[1])).to.deep.equal(['b']);
      // a copy: the input is untouched
      expect(input.d).to.be.instanceOf(Float64Array);
      expect(input.a[1]).to.deep.equal({ b: 0.1 + 0.2, c: undefined });
    });

    it('a bare number is rounded, a bare primitive returned as is', () => {
      expect(roundDeep(0.1 + 0.2)).to.equal(0.3);
      expect(roundDeep('0.30000000000000004')).to.equal('0.30000000000000004');
      expect(roundDeep(null)).to.equal(null);
      expect(roundDeep(false)).to.equal(false);
      expect(roundDeep(undefined)).to.equal(undefined);
    });

    it('a DataView is not read as numbers (it is an object without own members)', () => {
      const out = roundDeep({ v: new DataView(new Float64Array([1.5, 2.5]).buffer) }) as Record<string, unknown>;
      expect(out).to.deep.equal({ v: {} });
      expect(Array.isArray(out.v)).to.equal(false);
    });

    it('names the path of a non-finite value deep inside', () => {
      expectNonFinite(() => roundDeep({ a: [0, { b: Number.NaN }] }), '$.a[1].b');
      expectNonFinite(() => roundDeep({ x: { y: new Float32Array([1, Infinity]) } }), '$.x.y[1]');
      expectNonFinite(() => roundDeep([1, -Infinity], '$.result'), '$.result[1]');
      expectNonFinite(() => roundDeep(Number.NaN, '$.k'), '$.k');
    });
  });

  describe('canonicalJson', () => {
    it('sorts keys at every depth, no whitespace, undefined members dropped, typed arrays as arrays', () => {
      expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: 'x' }, u: undefined })).to.equal('{"a":{"c":"x","d":[1,{"e":3,"f":2}]},"b":1}');
      expect(canonicalJson({ v: new Float64Array([0.5, 2]), w: new Uint8Array([]) })).to.equal('{"v":[0.5,2],"w":[]}');
      expect(canonicalJson(new Int16Array([1, -2]))).to.equal('[1,-2]');
      expect(canonicalJson([])).to.equal('[]');
      expect(canonicalJson({})).to.equal('{}');
      expect(canonicalJson(null)).to.equal('null');
      expect(canonicalJson('a"b')).to.equal('"a\\"b"');
      // integer-like keys are enumerated first by JS, but sorted as strings here: "10" < "9" < "B" < "a"
      expect(canonicalJson({ a: 3, B: 4, 9: 2, 10: 1 })).to.equal('{"10":1,"9":2,"B":4,"a":3}');
    });

    it('reproduces the RFC 8785 §3.2.2 example', () => {
      const input = JSON.parse(
        String.raw`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`,
      );
      expect(canonicalJson(input)).to.equal(
        String.raw`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
      );
    });

    it('sorts keys by UTF-16 code units as RFC 8785 §3.2.3 does', () => {
      const input = JSON.parse(
        String.raw`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`,
      );
      // read the order from the text (re-parsing would enumerate "1" first again)
      const order = [...canonicalJson(input).matchAll(/:"([^"]+)"/g)].map((m) => m[1]);
      expect(order).to.deep.equal([
        'Carriage Return',
        'One',
        'Control',
        'Latin Small Letter O With Diaeresis',
        'Euro Sign',
        'Emoji: Grinning Face',
        'Hebrew Letter Dalet With Dagesh',
      ]);
    });

    it('equals JSON.stringify with a key-sorting replacer on random nested data', () => {
      // the reference: JSON.stringify drops undefined members itself; the replacer rebuilds each
      // plain object with sorted keys (no integer-like keys below, which JS would enumerate first)
      const sortingReplacer = (_k: string, x: unknown) => {
        if (ArrayBuffer.isView(x)) return Array.from(x as unknown as ArrayLike<number>);
        if (x && typeof x === 'object' && !Array.isArray(x)) {
          const o = x as Record<string, unknown>;
          return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
        }
        return x;
      };
      const rng = new Rng(5);
      const KEY_CHARS = 'aAbBzZ_-é';
      const key = () => Array.from({ length: 1 + rng.int(3) }, () => KEY_CHARS[rng.int(KEY_CHARS.length)]).join('');
      const leaf = (): unknown => {
        switch (rng.int(7)) {
          case 0: return rng.normal() * 10 ** rng.int(20);
          case 1: return rng.int(1000) - 500;
          case 2: return ['', 'x', 'q"uote', 'back\\slash', 'line\nfeed', 'é€'][rng.int(6)];
          case 3: return rng.next() < 0.5;
          case 4: return null;
          case 5: return Float64Array.from({ length: rng.int(4) }, () => rng.normal());
          default: return undefined;
        }
      };
      const value = (depth: number): unknown => {
        const r = rng.int(3);
        if (depth === 0 || r === 0) return leaf();
        if (r === 1) return Array.from({ length: rng.int(4) }, () => value(depth - 1) ?? 0);
        const o: Record<string, unknown> = {};
        for (let i = 0, n = rng.int(6); i < n; i++) o[key()] = value(depth - 1);
        return o;
      };
      for (let t = 0; t < 300; t++) {
        const v: Record<string, unknown> = {};
        for (let i = 0; i < 6; i++) v[key()] = value(4);
        expect(canonicalJson(v)).to.equal(JSON.stringify(v, sortingReplacer));
      }
    });
  });

  it('sha256Hex reproduces the FIPS 180-2 vectors, for strings and bytes', () => {
    expect(sha256Hex('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).to.equal('248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1');
    expect(sha256Hex('')).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  describe('evenlySpaced', () => {
    it('hand values: r_k = floor((k+1)·n/count) − 1', () => {
      expect(evenlySpaced(10, 4)).to.deep.equal([1, 4, 6, 9]); // 2.5, 5, 7.5, 10 floored, minus 1
      expect(evenlySpaced(7, 3)).to.deep.equal([1, 3, 6]);
      expect(evenlySpaced(1000, 1)).to.deep.equal([999]);
      expect(evenlySpaced(5, 0)).to.deep.equal([]);
    });

    it('count = n is the identity; count ≤ n gives distinct indices in [0, n) ending at n − 1, gaps ⌊n/c⌋ or ⌈n/c⌉', () => {
      const bad: string[] = [];
      for (let n = 1; n <= 64; n++) {
        expect(evenlySpaced(n, n)).to.deep.equal(Array.from({ length: n }, (_, i) => i));
        for (let c = 1; c <= n; c++) {
          const r = evenlySpaced(n, c);
          const lo = Math.floor(n / c); // ≥ 1, so steps of lo or lo + 1 are strictly increasing
          const gapsOk = r.every((x, k) => (k === 0 ? x >= 0 && x < lo : x - r[k - 1]! === lo || x - r[k - 1]! === Math.ceil(n / c)));
          if (r.length !== c || r[c - 1] !== n - 1 || !gapsOk) bad.push(`${n},${c}: ${r.join(' ')}`);
        }
      }
      expect(bad).to.deep.equal([]);
    });
  });

  describe('sampleSeries', () => {
    it('keeps a series of at most cap entries whole, rounded, with its digest', () => {
      const s = sampleSeries([0.1 + 0.2, -0, 1 / 3]);
      expect(s).to.deep.equal({ values: [0.3, 0, 0.333333333333], index: [0, 1, 2], digest: sha256('[0.3,0,0.333333333333]'), length: 3 });
      expect(Object.is(s.values[1], 0)).to.equal(true);
      // exactly cap entries: still whole
      expect(sampleSeries([5, 6, 7, 8, 9], 5).index).to.deep.equal([0, 1, 2, 3, 4]);
      expect(sampleSeries([])).to.deep.equal({ values: [], index: [], digest: sha256('[]'), length: 0 });
    });

    it('samples a longer series at evenly spaced indices; the digest covers the whole rounded series', () => {
      const s = sampleSeries(Float64Array.from([10, 11, 12, 13, 14, Math.E]), 5);
      // evenlySpaced(6, 5): floor(6/5, 12/5, 18/5, 24/5, 30/5) − 1
      expect(s.index).to.deep.equal([0, 1, 2, 3, 5]);
      expect(s.values).to.deep.equal([10, 11, 12, 13, 2.71828182846]);
      expect(s.length).to.equal(6);
      expect(s.digest).to.equal(sha256('[10,11,12,13,14,2.71828182846]'));
    });

    it('default cap 256: 256 values, the last index is the last entry, each value the rounded entry at its index', () => {
      const series = Float64Array.from({ length: 300 }, (_, i) => Math.sqrt(i));
      const s = sampleSeries(series);
      expect(s.values).to.have.length(256);
      expect(s.index).to.have.length(256);
      expect(s.index[255]).to.equal(299);
      expect(s.length).to.equal(300);
      for (let k = 0; k < 256; k++) {
        if (k) expect(s.index[k]).to.be.above(s.index[k - 1]!);
        expect(s.values[k]).to.equal(Number(Math.sqrt(s.index[k]!).toPrecision(12)));
      }
      expect(s.digest).to.equal(sha256(`[${Array.from(series, (v) => Number(v.toPrecision(12))).join(',')}]`));
    });

    it('a non-finite entry throws with its index', () => {
      expectNonFinite(() => sampleSeries([1, 2, Number.NaN]), 'series[2]');
    });
  });
});
