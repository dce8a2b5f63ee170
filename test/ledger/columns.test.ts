// The packed columns under the ledger mirror (src/ledger/columns.ts): HashColumn across a 1 MiB slab
// boundary (32768 hashes a slab), longer inputs cut to 32 bytes, views not copies; ByteArena parts
// back to back, byte-exact offsets, rollover exactly when a string no longer fits, oversized strings
// in a slab of their own; U32Column growth past 1024 and 2048 keeping every value up to 2^32 − 1;
// Interner dense first-seen ids.
import { expect } from 'chai';
import { ByteArena, HashColumn, Interner, U32Column } from '../../src/ledger/columns.js';

const SLAB = 1 << 20;
const PER_SLAB = SLAB / 32; // 32768

/** Hash i: u32be(i) ‖ 24 bytes of (i·7 + 1) mod 256 ‖ u32be(~i): distinct for every i, never all-zero. */
function hashOf(i: number): Buffer {
  const h = Buffer.alloc(32, (i * 7 + 1) & 0xff);
  h.writeUInt32BE(i, 0);
  h.writeUInt32BE(~i >>> 0, 28);
  return h;
}

describe('ledger columns', () => {
  describe('HashColumn', () => {
    it('holds hashes across a slab boundary; views sit at slot·32 of a slab of their own', () => {
      const col = new HashColumn();
      expect(col.length).to.equal(0);
      const n = PER_SLAB + 3; // 32771: two slabs
      // the last hash of the first slab comes as a longer array: only its first 32 bytes are stored
      // (storing all 64 would run past the end of the slab)
      const long = Buffer.concat([hashOf(PER_SLAB - 1), Buffer.alloc(32, 0xee)]);
      for (let i = 0; i < n; i++) col.push(i === PER_SLAB - 1 ? long : hashOf(i));
      expect(col.length).to.equal(n);
      for (const i of [0, 1, 2, PER_SLAB - 2, PER_SLAB - 1, PER_SLAB, PER_SLAB + 1, n - 1]) {
        const h = col.get(i);
        expect(h.length, `length of ${i}`).to.equal(32);
        expect(h.toString('hex'), `hash ${i}`).to.equal(hashOf(i).toString('hex'));
      }
      // every hash, not only the probes
      let bad = -1;
      for (let i = 0; i < n && bad < 0; i++) if (!col.get(i).equals(hashOf(i))) bad = i;
      expect(bad).to.equal(-1);
      // views into 1 MiB slabs: slot i of slab ⌊i/32768⌋ at byte (i mod 32768)·32
      const first = col.get(0);
      expect(first.buffer.byteLength).to.equal(SLAB);
      expect(first.byteOffset).to.equal(0);
      expect(col.get(5).byteOffset).to.equal(5 * 32);
      expect(col.get(5).buffer).to.equal(first.buffer);
      expect(col.get(PER_SLAB - 1).byteOffset).to.equal(SLAB - 32);
      expect(col.get(PER_SLAB - 1).buffer).to.equal(first.buffer);
      const second = col.get(PER_SLAB);
      expect(second.buffer).to.not.equal(first.buffer);
      expect(second.buffer.byteLength).to.equal(SLAB);
      expect(second.byteOffset).to.equal(0);
      expect(col.get(n - 1).byteOffset).to.equal((n - 1 - PER_SLAB) * 32);
      expect(col.get(n - 1).buffer).to.equal(second.buffer);
    });

    it('a longer array stores only its first 32 bytes and leaves the neighbours alone', () => {
      const col = new HashColumn();
      const a = hashOf(1);
      const b = hashOf(2);
      const c = hashOf(3);
      col.push(a);
      col.push(new Uint8Array(Buffer.concat([b, Buffer.alloc(40, 0xee)])));
      col.push(c);
      expect(col.length).to.equal(3);
      expect([col.get(0).toString('hex'), col.get(1).toString('hex'), col.get(2).toString('hex')]).to.deep.equal([a, b, c].map((x) => x.toString('hex')));
    });

    it('get returns a view, not a copy, of exactly hash i', () => {
      const col = new HashColumn();
      for (let i = 0; i < 4; i++) col.push(hashOf(i));
      const v = col.get(2);
      v[0] = 0xaa;
      v[31] = 0xbb;
      const again = col.get(2);
      expect([again[0], again[31]]).to.deep.equal([0xaa, 0xbb]);
      // the neighbours are untouched by writing through the view
      expect(col.get(1).equals(hashOf(1))).to.equal(true);
      expect(col.get(3).equals(hashOf(3))).to.equal(true);
      // the pushed array is copied in: changing it afterwards does not change the column
      const src = hashOf(9);
      col.push(src);
      src.fill(0);
      expect(col.get(4).equals(hashOf(9))).to.equal(true);
    });
  });

  describe('ByteArena', () => {
    it('stores parts back to back and returns where the first begins; offsets advance by byte lengths', () => {
      const arena = new ByteArena();
      expect(arena.add(Buffer.from('abc'), Buffer.from('de'))).to.deep.equal({ slab: 0, offset: 0 });
      // 'é€' is 5 bytes in UTF-8 (2 characters)
      expect(arena.add(Buffer.from('é€'))).to.deep.equal({ slab: 0, offset: 5 });
      expect(arena.add(new Uint8Array([1, 2, 3, 4]))).to.deep.equal({ slab: 0, offset: 10 });
      expect(arena.add()).to.deep.equal({ slab: 0, offset: 14 });
      expect(arena.add(new Uint8Array(0), Buffer.from('x'), Buffer.from('yz'))).to.deep.equal({ slab: 0, offset: 14 });
      expect(arena.add(Buffer.from('!'))).to.deep.equal({ slab: 0, offset: 17 });
      expect(arena.view(0, 0, 5).toString()).to.equal('abcde');
      expect(arena.view(0, 3, 2).toString()).to.equal('de');
      expect(arena.view(0, 5, 5).toString()).to.equal('é€');
      expect([...arena.view(0, 10, 4)]).to.deep.equal([1, 2, 3, 4]);
      expect(arena.view(0, 14, 3).toString()).to.equal('xyz');
      expect(arena.view(0, 0, 18).toString()).to.equal('abcdeé€\u0001\u0002\u0003\u0004xyz!');
      const v = arena.view(0, 3, 2);
      expect(v.length).to.equal(2);
      // a view into the slab, not a copy
      expect(v.byteOffset).to.equal(3);
      expect(v.buffer.byteLength).to.equal(SLAB);
      v[0] = 0x44; // 'D'
      expect(arena.view(0, 0, 5).toString()).to.equal('abcDe');
    });

    it('rolls over to a new slab exactly when used + length exceeds the slab', () => {
      // exactly filling the rest stays in the slab
      const fits = new ByteArena();
      expect(fits.add(Buffer.from('0123456789'))).to.deep.equal({ slab: 0, offset: 0 });
      expect(fits.add(Buffer.alloc(5, 0x41), Buffer.alloc(SLAB - 15, 0x42))).to.deep.equal({ slab: 0, offset: 10 });
      expect(fits.view(0, 0, 10).toString()).to.equal('0123456789');
      expect(fits.view(0, SLAB - 1, 1)[0]).to.equal(0x42);
      expect(fits.view(0, 14, 2).toString()).to.equal('AB');
      // a full slab still takes an empty string at its end; one more byte moves
      expect(fits.add(new Uint8Array(0))).to.deep.equal({ slab: 0, offset: SLAB });
      expect(fits.add(Buffer.from('z'))).to.deep.equal({ slab: 1, offset: 0 });
      expect(fits.add(Buffer.from('w'))).to.deep.equal({ slab: 1, offset: 1 });
      expect(fits.view(1, 0, 2).toString()).to.equal('zw');
      // the first slab is untouched by the move
      expect(fits.view(0, 0, 10).toString()).to.equal('0123456789');
      expect(fits.view(0, SLAB - 1, 1)[0]).to.equal(0x42);

      // one byte more than the rest moves the whole add (all its parts) to a new slab
      const over = new ByteArena();
      expect(over.add(Buffer.from('0123456789'))).to.deep.equal({ slab: 0, offset: 0 });
      const big = Buffer.alloc(SLAB - 9, 0x43);
      big[0] = 0x61;
      big[big.length - 1] = 0x7a;
      expect(over.add(Buffer.from('<'), big.subarray(1))).to.deep.equal({ slab: 1, offset: 0 });
      expect(over.view(1, 0, 2).toString()).to.equal('<C');
      expect(over.view(1, SLAB - 10, 1).toString()).to.equal('z');
      // the rest of the new slab (9 bytes) is used exactly, then a new slab again
      expect(over.add(Buffer.from('123456789'))).to.deep.equal({ slab: 1, offset: SLAB - 9 });
      expect(over.add(Buffer.from('.'))).to.deep.equal({ slab: 2, offset: 0 });
      expect(over.view(1, SLAB - 9, 9).toString()).to.equal('123456789');
      expect(over.view(0, 0, 10).toString()).to.equal('0123456789');
    });

    it('a string larger than a slab gets a slab of its own size; the next add starts a new one', () => {
      const arena = new ByteArena();
      expect(arena.add(Buffer.from('head'))).to.deep.equal({ slab: 0, offset: 0 });
      const big = Buffer.alloc(SLAB + 100, 0x55);
      big.write('start', 0);
      big.write('end', big.length - 3);
      expect(arena.add(big.subarray(0, 50), big.subarray(50))).to.deep.equal({ slab: 1, offset: 0 });
      const back = arena.view(1, 0, SLAB + 100);
      expect(back.equals(big)).to.equal(true);
      expect(back.buffer.byteLength).to.equal(SLAB + 100);
      expect(arena.add(Buffer.from('a'))).to.deep.equal({ slab: 2, offset: 0 });
      // and that one is an ordinary 1 MiB slab again: it takes the rest, then rolls over
      expect(arena.add(Buffer.alloc(SLAB - 2, 1))).to.deep.equal({ slab: 2, offset: 1 });
      expect(arena.add(Buffer.from('b'))).to.deep.equal({ slab: 2, offset: SLAB - 1 });
      expect(arena.add(Buffer.from('c'))).to.deep.equal({ slab: 3, offset: 0 });
      expect(arena.view(0, 0, 4).toString()).to.equal('head');
      expect(arena.view(2, 0, 1).toString()).to.equal('a');
      expect(arena.view(2, SLAB - 1, 1).toString()).to.equal('b');
      expect(arena.view(3, 0, 1).toString()).to.equal('c');

      // exactly one slab's worth into an empty arena: one slab, nothing to spare
      const exact = new ByteArena();
      expect(exact.add(Buffer.alloc(SLAB, 2))).to.deep.equal({ slab: 0, offset: 0 });
      expect(exact.view(0, 0, SLAB).buffer.byteLength).to.equal(SLAB);
      expect(exact.add(Buffer.from('d'))).to.deep.equal({ slab: 1, offset: 0 });
    });
  });

  describe('U32Column', () => {
    it('grows past 1024 and 2048 keeping every earlier value, up to 2^32 − 1', () => {
      const col = new U32Column();
      expect(col.length).to.equal(0);
      const value = (i: number): number => (i === 7 ? 0xffffffff : i === 1500 ? 2 ** 31 : Math.imul(i + 1, 0x9e3779b1) >>> 0);
      const check = (upto: number): void => {
        let bad = -1;
        for (let i = 0; i < upto && bad < 0; i++) if (col.get(i) !== value(i)) bad = i;
        expect(bad, `first wrong index of ${upto}`).to.equal(-1);
      };
      for (let i = 0; i < 1024; i++) col.push(value(i));
      expect(col.length).to.equal(1024);
      check(1024);
      col.push(value(1024));
      expect(col.length).to.equal(1025);
      check(1025);
      for (let i = 1025; i < 2048; i++) col.push(value(i));
      expect(col.length).to.equal(2048);
      check(2048);
      for (let i = 2048; i < 4100; i++) col.push(value(i));
      expect(col.length).to.equal(4100);
      check(4100);
      expect(col.get(7)).to.equal(4294967295);
      expect(col.get(1500)).to.equal(2147483648);
      expect(col.get(0)).to.equal(0x9e3779b1);
      expect(col.get(4099)).to.equal(value(4099));
    });
  });

  describe('Interner', () => {
    it('gives dense ids from 0 in first-seen order; a repeated value keeps its id; value(id) round-trips', () => {
      const strings = new Interner();
      expect(strings.id('kind-a')).to.equal(0);
      expect(strings.id('key-1')).to.equal(1);
      expect(strings.id('kind-a')).to.equal(0);
      expect(strings.id('')).to.equal(2);
      expect(strings.id('key-1')).to.equal(1);
      expect(strings.id('constructor')).to.equal(3);
      expect(strings.id('')).to.equal(2);
      expect(strings.id('kind-b')).to.equal(4);
      expect([0, 1, 2, 3, 4].map((i) => strings.value(i))).to.deep.equal(['kind-a', 'key-1', '', 'constructor', 'kind-b']);
      // many values: still dense and round-tripping
      for (let i = 0; i < 300; i++) expect(strings.id(`v${i}`)).to.equal(5 + i);
      for (let i = 0; i < 300; i++) expect(strings.id(`v${i}`)).to.equal(5 + i);
      expect(strings.value(304)).to.equal('v299');
      expect(strings.value(0)).to.equal('kind-a');
    });
  });
});
