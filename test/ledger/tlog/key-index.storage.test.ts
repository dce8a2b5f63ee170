// KeyIndex beyond the happy path: keys that share their first 4 or 6 bytes, every prefix length,
// run files that are torn or lack their fences, a disk that is full when a run is written, and
// lookups of many keys against a map built here.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs, { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyIndex, RUN_SPAN } from '../../../src/ledger/tlog/key-index.js';

/**
 * Keys: hashes, except that every 5,000th shares its first 6 bytes with the key before it, and
 * every 3,001st and the key after it share their first 4 bytes with the key before (three alike).
 */
function keysOf(n: number): Buffer {
  const keys = Buffer.alloc(n * 32);
  for (let i = 0; i < n; i++) {
    const k = createHash('sha256').update(`k ${i}`).digest();
    if (i > 0 && i % 5000 === 0) keys.copy(k, 0, (i - 1) * 32, (i - 1) * 32 + 6);
    else if (i > 0 && i % 3001 === 0) keys.copy(k, 0, (i - 1) * 32, (i - 1) * 32 + 4);
    else if (i > 1 && i % 3001 === 1) keys.copy(k, 0, (i - 2) * 32, (i - 2) * 32 + 4);
    k.copy(keys, i * 32);
  }
  return keys;
}

/** Two full runs and an open chunk. */
const N = 2 * RUN_SPAN + 9000;
const KEYS = keysOf(N);
const keyAt = (i: number): Buffer => KEYS.subarray(i * 32, i * 32 + 32);
const keysAt = (from: number, n: number): Buffer => KEYS.subarray(from * 32, (from + n) * 32);
const HEX = Array.from({ length: N }, (_, i) => keyAt(i).toString('hex'));
const hexOf = (i: number): string => HEX[i]!;

function scanPrefix(prefix: string, size: number, limit: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < size && out.length < limit; i++) if (hexOf(i).startsWith(prefix)) out.push(i);
  return out;
}

/** Key readers over the first `size` keys only, refusing more, as the ledger's PAE column does. */
function bounded(size: number): [(i: number) => Buffer, (from: number, n: number) => Buffer] {
  const check = (from: number, n: number) => {
    if (from < 0 || n < 0 || from + n > size) throw new RangeError(`keys ${from}..${from + n} of ${size}`);
  };
  return [
    (i) => (check(i, 1), keyAt(i)),
    (from, n) => (check(from, n), keysAt(from, n)),
  ];
}

const openFds = (): number => readdirSync('/proc/self/fd').length;

function filled(dir: string | null, n = N): KeyIndex {
  const index = new KeyIndex('t', dir, ...bounded(n));
  for (let i = 0; i < n; i++) index.add(keyAt(i), i);
  return index;
}

/** fs.writeFileSync fails (a full disk) while `fn` runs. */
function withFullDisk<T>(fn: () => T): T {
  const real = fs.writeFileSync;
  fs.writeFileSync = (() => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  }) as typeof fs.writeFileSync;
  syncBuiltinESMExports();
  try {
    return fn();
  } finally {
    fs.writeFileSync = real;
    syncBuiltinESMExports();
  }
}

describe('KeyIndex: collisions, prefixes, damaged and unwritten runs', function () {
  this.timeout(120_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-keyidx-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('every 13th key, in both runs and the open chunk, is found exactly (keys sharing 4 or 6 bytes are told apart)', () => {
    const index = filled(null);
    const newest = new Map<string, number>();
    for (let i = 0; i < N; i++) newest.set(hexOf(i), i);
    for (let i = 0; i < N; i += 13) expect(index.newest(keyAt(i)), `key ${i}`).to.equal(newest.get(hexOf(i)));
    // 135,000 and 135,055..135,057 are in the open chunk; 3,001·45 = 135,045
    for (const i of [5000, 4999, 3001, 3002, 3000, 135_000, 134_999, 135_045, 135_046, 135_044, 70_000, RUN_SPAN - 1, RUN_SPAN, 2 * RUN_SPAN - 1, 2 * RUN_SPAN]) {
      expect(index.newest(keyAt(i)), `key ${i}`).to.equal(i);
    }
    // the same 6 bytes, another key: nothing
    const near = Buffer.from(keyAt(5000));
    near[31]! ^= 1;
    expect(index.newest(near)).to.equal(undefined);
    const nearTail = Buffer.from(keyAt(135_045));
    nearTail[31]! ^= 1;
    expect(index.newest(nearTail)).to.equal(undefined);
    expect(index.length).to.equal(N);
  });

  it('an index of a few keys, all in the open chunk: the empty prefix lists each once, three keys alike in 4 bytes are told apart', () => {
    const index = filled(null, 3004);
    expect(index.withPrefix('', 5000)).to.deep.equal(Array.from({ length: 3004 }, (_, i) => i));
    for (const i of [3000, 3001, 3002, 3003]) expect(index.newest(keyAt(i)), `key ${i}`).to.equal(i);
    expect(index.withPrefix(hexOf(3000).slice(0, 8), 10)).to.deep.equal([3000, 3001, 3002]);
  });

  it('prefixes of every length from 0 to 14 hex digits, in the run and the open chunk, with limits that stop early', () => {
    const index = filled(null);
    for (const i of [5000, 135_045, 70_000, 12]) {
      for (let len = 0; len <= 14; len++) {
        const p = hexOf(i).slice(0, len);
        const limit = len < 3 ? 4 : 50;
        expect(index.withPrefix(p, limit), `${len} digits of ${i}`).to.deep.equal(scanPrefix(p, N, limit));
      }
    }
    // a prefix matched in both the run and the open chunk, oldest first, limited
    const shared = hexOf(135_999).slice(0, 2);
    const all = scanPrefix(shared, N, 1000);
    expect(all.some((i) => i < RUN_SPAN) && all.some((i) => i >= 2 * RUN_SPAN)).to.equal(true);
    expect(index.withPrefix(shared, 1000)).to.deep.equal(all);
    const inRun = all.filter((i) => i < RUN_SPAN).length;
    expect(index.withPrefix(shared, inRun)).to.deep.equal(all.slice(0, inRun));
    expect(index.withPrefix(shared, inRun + 1)).to.deep.equal(all.slice(0, inRun + 1));
    expect(index.withPrefix(shared, 0)).to.deep.equal([]);
    expect(index.withPrefix('ffffffffffffff', 5)).to.deep.equal(scanPrefix('ffffffffffffff', N, 5));
  });

  it('adds only the next index', () => {
    const index = new KeyIndex('pae', null, keyAt, keysAt);
    index.add(keyAt(0), 0);
    expect(() => index.add(keyAt(2), 2)).to.throw('key index pae: node 2 added at 1');
    expect(() => index.add(keyAt(0), 0)).to.throw('key index pae: node 0 added at 1');
  });

  it('resume reads no key past its size: at exactly one run no open chunk, past it only the open part', async () => {
    const index = filled(dir, RUN_SPAN + 50);
    await index.sync();
    index.close();
    const run = join(dir, 't-000000.run');
    const inode = statSync(run).ino;
    const again = new KeyIndex('t', dir, ...bounded(RUN_SPAN));
    again.resume(RUN_SPAN);
    expect([again.length, again.newest(keyAt(RUN_SPAN - 1)), again.newest(keyAt(0)), again.newest(keyAt(RUN_SPAN + 5))]).to.deep.equal([RUN_SPAN, RUN_SPAN - 1, 0, undefined]);
    expect(existsSync(join(dir, 't-000001.run'))).to.equal(false);
    again.close();
    const past = new KeyIndex('t', dir, ...bounded(RUN_SPAN + 10));
    past.resume(RUN_SPAN + 10);
    expect([past.length, past.newest(keyAt(RUN_SPAN + 9)), past.newest(keyAt(RUN_SPAN + 10))]).to.deep.equal([RUN_SPAN + 10, RUN_SPAN + 9, undefined]);
    past.close();
    // the stored run was opened, not written again
    expect(statSync(run).ino).to.equal(inode);
  });

  it('descriptors: a run file is opened when read, never more than the bound at once, all closed by close(), none left by sync(); a memory index syncs without files', async () => {
    const before = openFds();
    const index = filled(dir);
    await index.sync();
    expect(openFds(), 'runs written are not held open').to.equal(before);
    expect(index.newest(keyAt(5))).to.equal(5);
    expect(openFds(), 'a lookup reads both runs').to.equal(before + 2);
    index.close();
    expect(openFds()).to.equal(before);
    const again = new KeyIndex('t', dir, keyAt, keysAt, { openRuns: 1 });
    again.resume(N);
    expect([again.newest(keyAt(5)), again.newest(keyAt(RUN_SPAN + 5))]).to.deep.equal([5, RUN_SPAN + 5]);
    expect(openFds(), 'bound 1: one run file open').to.equal(before + 1);
    again.close();
    expect(openFds()).to.equal(before);
    const memory = filled(null, RUN_SPAN + 1);
    await memory.sync();
    expect(openFds()).to.equal(before);
    memory.close();
  });

  it('a failed fsync of a run file fails the sync', async () => {
    const index = new KeyIndex('t', dir, keyAt, keysAt);
    for (let i = 0; i < RUN_SPAN; i++) index.add(keyAt(i), i);
    const real = fs.fsync;
    fs.fsync = ((_fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => cb(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }))) as typeof fs.fsync;
    syncBuiltinESMExports();
    let err: NodeJS.ErrnoException | null = null;
    try {
      await index.sync();
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    } finally {
      fs.fsync = real;
      syncBuiltinESMExports();
    }
    expect(err?.code).to.equal('EIO');
    index.close();
  });

  it('a run file cut short is rebuilt from the keys; one without fences (or with wrong ones) is read through its blocks', async () => {
    const index = filled(dir);
    await index.sync();
    index.close();
    const run = join(dir, 't-000000.run');
    const good = readFileSync(run);
    const fences = readFileSync(`${run}.fences`);
    const check = (what: string) => {
      const again = new KeyIndex('t', dir, keyAt, keysAt);
      again.resume(N);
      for (const i of [0, 4999, 5000, 40_000, RUN_SPAN - 1, N - 1]) expect(again.newest(keyAt(i)), `${what}: key ${i}`).to.equal(i);
      expect(again.withPrefix(hexOf(40_000).slice(0, 9), 3), what).to.deep.equal(scanPrefix(hexOf(40_000).slice(0, 9), N, 3));
      again.close();
    };
    writeFileSync(run, good.subarray(0, good.length - 8));
    check('torn run');
    expect(readFileSync(run).equals(good)).to.equal(true);
    rmSync(`${run}.fences`);
    check('no fences');
    writeFileSync(`${run}.fences`, fences.subarray(0, 100));
    check('short fences');
    // fences of another run (the first key's top byte changed): read from the run, not trusted
    const wrong = Buffer.from(fences);
    wrong[7]! ^= 0xff;
    writeFileSync(`${run}.fences`, wrong);
    check('wrong fences');
    const again = new KeyIndex('t', dir, keyAt, keysAt);
    again.resume(N);
    for (let i = 0; i < RUN_SPAN; i += 50) expect(again.newest(keyAt(i)), `wrong fences: key ${i}`).to.equal(i);
    again.close();
    rmSync(run);
    check('run lost');
    expect(statSync(run).size).to.equal(RUN_SPAN * 8);
  });

  it('a full disk when a run fills: it is served from memory and written by the next sync', async () => {
    const index = new KeyIndex('t', dir, keyAt, keysAt);
    withFullDisk(() => {
      for (let i = 0; i < RUN_SPAN + 10; i++) index.add(keyAt(i), i);
    });
    const run = join(dir, 't-000000.run');
    expect(existsSync(run)).to.equal(false);
    expect([index.newest(keyAt(77)), index.newest(keyAt(RUN_SPAN + 3))]).to.deep.equal([77, RUN_SPAN + 3]);
    await index.sync();
    expect([statSync(run).size, statSync(`${run}.fences`).size]).to.deep.equal([RUN_SPAN * 8, (RUN_SPAN / 256) * 8]);
    expect(index.newest(keyAt(77))).to.equal(77);
    // a second sync has nothing left to write
    await index.sync();
    index.close();
    const again = new KeyIndex('t', dir, keyAt, keysAt);
    again.resume(RUN_SPAN + 10);
    expect(again.newest(keyAt(RUN_SPAN - 2))).to.equal(RUN_SPAN - 2);
    again.close();
  });

  it('a run is written sorted as key[0..6] ‖ uint16 offset, little-endian uint64s, and its fences are every 256th item', async () => {
    const index = filled(dir, RUN_SPAN);
    await index.sync();
    index.close();
    const bytes = readFileSync(join(dir, 't-000000.run'));
    const items = Array.from({ length: RUN_SPAN }, (_, i) => bytes.readBigUInt64LE(i * 8));
    const expected = Array.from({ length: RUN_SPAN }, (_, i) => (BigInt(`0x${hexOf(i).slice(0, 12)}`) << 16n) | BigInt(i)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(items.every((v, i) => v === expected[i])).to.equal(true);
    const fences = readFileSync(join(dir, 't-000000.run.fences'));
    expect(Array.from({ length: 256 }, (_, b) => fences.readBigUInt64LE(b * 8) === expected[b * 256]).every(Boolean)).to.equal(true);
  });
});
