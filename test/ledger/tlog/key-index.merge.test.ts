// Merging key-index runs: mergeRuns against a BigInt reference, the number of runs a log of c
// chunks keeps (the base-4 digits of c), lookups of duplicated keys and shared prefixes across
// merged runs, resuming from merged files, what a crash mid-merge leaves, a failed merge, the
// merge thread, and an index in memory that never merges.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyIndex, mergeHere, RUN_SPAN, type Merger } from '../../../src/ledger/tlog/key-index.js';
import { mergeInThread } from '../../../src/ledger/tlog/run-merge-host.js';
import { mergeRuns } from '../../../src/ledger/tlog/run-merge.js';
import { LOWEST_PRIORITY_MS } from '../../helpers/until.js';

const CHUNKS = 16;
const N = CHUNKS * RUN_SPAN + 777;
/** Key i is an exact copy of key i - DUP_BACK when i % DUP_EVERY == 0. */
const DUP_EVERY = 100_003;
const DUP_BACK = 70_001;
/** Key i shares its first 6 bytes with key i - SHARE_BACK when i % SHARE_EVERY == 5. */
const SHARE_EVERY = 77_777;
const SHARE_BACK = 300_000;

const KEYS = Buffer.alloc(N * 32);
for (let i = 0; i < N; i++) {
  const k = createHash('sha256').update(`merge ${i}`).digest();
  if (i % DUP_EVERY === 0 && i >= DUP_EVERY) KEYS.copy(k, 0, (i - DUP_BACK) * 32, (i - DUP_BACK + 1) * 32);
  else if (i % SHARE_EVERY === 5 && i >= SHARE_BACK) KEYS.copy(k, 0, (i - SHARE_BACK) * 32, (i - SHARE_BACK) * 32 + 6);
  k.copy(KEYS, i * 32);
}
const keyAt = (i: number): Buffer => KEYS.subarray(i * 32, i * 32 + 32);
const keysAt = (from: number, n: number): Buffer => {
  if (from < 0 || n < 0 || from + n > N) throw new RangeError(`keys ${from}..${from + n}`);
  return KEYS.subarray(from * 32, (from + n) * 32);
};

/** Every index below `size` whose key starts with the bytes of the even-length hex `prefix`, by a scan. */
function scan(prefix: string, size: number): number[] {
  const p = Buffer.from(prefix, 'hex');
  const out: number[] = [];
  for (let i = 0; i < size; i++) if (KEYS.compare(p, 0, p.length, i * 32, i * 32 + p.length) === 0) out.push(i);
  return out;
}

/** The newest index below `size` holding key `k`, by a scan. */
function scanNewest(k: Buffer, size: number): number | undefined {
  return scan(k.toString('hex'), size).at(-1);
}

/** The levels a log of `c` full chunks keeps, oldest first: the base-4 digits of c, most significant first. */
function digitsOf(c: number): number[] {
  const out: number[] = [];
  for (let level = 0; c > 0; level++, c = Math.floor(c / 4)) for (let d = 0; d < c % 4; d++) out.unshift(level);
  return out;
}

const SAMPLES = [0, 1, 255, 256, RUN_SPAN - 1, RUN_SPAN, 3 * RUN_SPAN + 17, 4 * RUN_SPAN, 9 * RUN_SPAN + 4242, 15 * RUN_SPAN + 1, N - 1, N - 777];
const PLANTED = Array.from({ length: Math.floor(N / DUP_EVERY) }, (_, m) => (m + 1) * DUP_EVERY);

function fill(index: KeyIndex, from: number, to: number): void {
  for (let i = from; i < to; i++) index.add(keyAt(i), i);
}

function expectLookups(index: KeyIndex, size: number, what: string): void {
  for (const i of SAMPLES.filter((s) => s < size)) expect(index.newest(keyAt(i)), `${what}: key of ${i}`).to.equal(scanNewest(keyAt(i), size));
  for (const i of PLANTED.filter((p) => p < size)) {
    // the copy is newer than its original, whichever runs the two landed in
    expect(index.newest(keyAt(i - DUP_BACK)), `${what}: duplicated key ${i}`).to.equal(i);
  }
  for (let i = SHARE_BACK + 5; i < size; i += SHARE_EVERY) {
    if (i % SHARE_EVERY !== 5) continue;
    const six = keyAt(i).subarray(0, 6).toString('hex');
    expect(index.withPrefix(six, 10), `${what}: 6 shared bytes at ${i}`).to.deep.equal(scan(six, size));
    expect(index.newest(keyAt(i)), `${what}: key ${i} (its first 6 bytes shared)`).to.equal(i);
  }
  const four = keyAt(5 * RUN_SPAN + 3).subarray(0, 2).toString('hex');
  expect(index.withPrefix(four, 1000), `${what}: a 4-hex prefix`).to.deep.equal(scan(four, size));
  expect(index.newest(createHash('sha256').update('absent').digest()), what).to.equal(undefined);
}

const runFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith('.run')).sort();

describe('KeyIndex: runs merged four into one', function () {
  // the merge thread runs at the lowest priority: on a loaded machine it waits behind every other thread
  this.timeout(LOWEST_PRIORITY_MS + 300_000);
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-keymerge-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('mergeRuns writes the four sources as one run: every item with two key bits fewer and its offset in the whole, ordered by key, with its fences', async () => {
    const index = new KeyIndex('m', dir, keyAt, keysAt, { merger: () => new Promise<void>(() => {}) });
    fill(index, 0, 4 * RUN_SPAN);
    const sources = runFiles(dir).map((f) => join(dir, f));
    expect(sources.map((f) => f.slice(dir.length + 1))).to.deep.equal(['m-000000.run', 'm-000001.run', 'm-000002.run', 'm-000003.run']);
    const target = join(dir, 'merged.run');
    mergeRuns({ sources, level: 0, target });
    const out = new BigUint64Array(new Uint8Array(readFileSync(target)).buffer);
    expect(out.length).to.equal(4 * RUN_SPAN);
    // the reference: the first 46 bits of each key, then its index, as BigInts
    const expected = new BigUint64Array(4 * RUN_SPAN);
    for (let i = 0; i < 4 * RUN_SPAN; i++) expected[i] = ((keyAt(i).readBigUInt64BE(0) >> 18n) << 18n) | BigInt(i);
    for (let i = 1; i < out.length; i++) if (out[i]! >> 18n < out[i - 1]! >> 18n) expect.fail(`item ${i} is out of key order`);
    expect([...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).to.deep.equal([...expected].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const fences = new BigUint64Array(new Uint8Array(readFileSync(`${target}.fences`)).buffer);
    expect([...fences]).to.deep.equal(Array.from({ length: out.length / 256 }, (_, b) => out[b * 256]!));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    index.close();
  });

  it('keeps the base-4 digits of its chunk count as runs (one block read each), and answers like a scan at every step', async () => {
    const index = new KeyIndex('m', dir, keyAt, keysAt);
    for (let c = 1; c <= CHUNKS; c++) {
      fill(index, (c - 1) * RUN_SPAN, c * RUN_SPAN);
      await index.settled();
      expect(index.runLevels, `after ${c} chunks`).to.deep.equal(digitsOf(c));
      if (c === 7 || c === 13) expectLookups(index, c * RUN_SPAN, `${c} chunks`);
    }
    fill(index, CHUNKS * RUN_SPAN, N);
    expectLookups(index, N, 'merged into one run of level 2');
    expect(runFiles(dir)).to.deep.equal(['m-000000-L2.run']);
    expect(readdirSync(dir).sort()).to.deep.equal(['m-000000-L2.run', 'm-000000-L2.run.fences']);
    await index.sync();
    index.close();
    // opened again: the merged run is read, not rebuilt
    const inode = statSync(join(dir, 'm-000000-L2.run')).ino;
    const again = new KeyIndex('m', dir, keyAt, keysAt, { merger: mergeHere });
    again.resume(N);
    expect(again.runLevels).to.deep.equal([2]);
    expectLookups(again, N, 'resumed');
    expect(statSync(join(dir, 'm-000000-L2.run')).ino).to.equal(inode);
    again.close();
  });

  it('after a crash mid-merge: a complete merged run wins over its leftover sources, which go; a torn one gives way to them; temporaries go', async () => {
    const size = 8 * RUN_SPAN + 10;
    const never: Merger = () => new Promise<void>(() => {});
    const index = new KeyIndex('m', dir, keyAt, keysAt, { merger: never });
    fill(index, 0, size);
    await index.sync();
    index.close();
    const sources = (from: number) => [0, 1, 2, 3].map((k) => join(dir, `m-${String(from + k).padStart(6, '0')}.run`));
    // the first merge finished but its sources were not removed; the second was cut short mid-write
    mergeRuns({ sources: sources(0), level: 0, target: join(dir, 'm-000000-L1.run') });
    mergeRuns({ sources: sources(4), level: 0, target: join(dir, 'm-000004-L1.run') });
    truncateSync(join(dir, 'm-000004-L1.run'), RUN_SPAN * 8);
    writeFileSync(join(dir, 'm-000008-L1.run.tmp'), 'partial');
    const again = new KeyIndex('m', dir, keyAt, keysAt, { merger: never });
    again.resume(size);
    expect(again.runLevels).to.deep.equal([1, 0, 0, 0, 0]);
    expectLookups(again, size, 'after the crash');
    expect(runFiles(dir)).to.deep.equal(['m-000000-L1.run', ...sources(4).map((f) => f.slice(dir.length + 1))]);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    again.close();
    // merging resumes where it stopped
    const merging = new KeyIndex('m', dir, keyAt, keysAt, { merger: mergeHere });
    merging.resume(size);
    await merging.settled();
    expect(merging.runLevels).to.deep.equal([1, 1]);
    expect(runFiles(dir)).to.deep.equal(['m-000000-L1.run', 'm-000004-L1.run']);
    expectLookups(merging, size, 'merged again');
    merging.close();
  });

  it('a merge that fails leaves the runs as they were, says why, and is tried again at the next sync', async () => {
    let fail = true;
    const flaky: Merger = (job, signal) => (fail ? Promise.reject(new Error('ENOSPC: no space left on device, write')) : mergeHere(job, signal));
    const index = new KeyIndex('m', dir, keyAt, keysAt, { merger: flaky });
    fill(index, 0, 4 * RUN_SPAN + 3);
    await index.settled();
    expect(index.runLevels).to.deep.equal([0, 0, 0, 0]);
    expect(index.lastMergeFailure).to.equal('ENOSPC: no space left on device, write');
    expectLookups(index, 4 * RUN_SPAN + 3, 'after the failure');
    fail = false;
    await index.sync();
    await index.settled();
    expect([index.runLevels, index.lastMergeFailure]).to.deep.equal([[1], null]);
    expect(runFiles(dir)).to.deep.equal(['m-000000-L1.run']);
    index.close();
  });

  it('merges in a thread of its own (as the service does); an index in memory never merges', async () => {
    const index = new KeyIndex('m', dir, keyAt, keysAt, { merger: mergeInThread });
    fill(index, 0, 4 * RUN_SPAN + 1);
    await index.settled();
    expect([index.runLevels, index.lastMergeFailure]).to.deep.equal([[1], null]);
    expect(existsSync(join(dir, 'm-000000.run'))).to.equal(false);
    expectLookups(index, 4 * RUN_SPAN + 1, 'merged by the thread');
    index.close();
    const memory = new KeyIndex('m', null, keyAt, keysAt);
    fill(memory, 0, 4 * RUN_SPAN + 1);
    await memory.settled();
    expect(memory.runLevels).to.deep.equal([0, 0, 0, 0]);
    expectLookups(memory, 4 * RUN_SPAN + 1, 'in memory');
  });
});
