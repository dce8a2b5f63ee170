// TileLog while it grows past several level-1 hashes (2,100 leaves, small enough to check every
// step): roots, ranges and proofs at every step and at earlier sizes against the RFC 6962
// reference, the stored tiles and interiors, resumption at any size in memory, and sync to files.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consistencyProof, inclusionProof, leafHash, rootFromLeafHashes } from '../../../src/lib/merkle.js';
import { FileColumn } from '../../../src/ledger/tlog/column.js';
import { ENTRY_RECORD, INTERIOR_HASHES, memoryTileColumns, TileLog, tileInterior } from '../../../src/ledger/tlog/tile-log.js';

const N = 2100;
const digest = (i: number): Buffer => createHash('sha256').update(`grow ${i}`).digest();
const DIGESTS = Array.from({ length: N }, (_, i) => digest(i));
const LEAVES = DIGESTS.map((d) => leafHash(d));
const hex = (b: Buffer[]): string[] => b.map((h) => h.toString('hex'));
/** Batch sizes that cross tile edges at different offsets. */
const batches = (): number[] => {
  const out: number[] = [];
  for (let i = 0, k = 0; i < N; k++) {
    const n = Math.min(N - i, [1, 255, 2, 300, 17, 256, 511, 3][k % 8]!);
    out.push(n);
    i += n;
  }
  return out;
};

describe('TileLog growing past several tiles', function () {

  it('after every append: the root, right-edge ranges, proofs at the size and at earlier sizes equal the reference', () => {
    const log = new TileLog(memoryTileColumns());
    let size = 0;
    for (const n of batches()) {
      log.append(DIGESTS.slice(size, size + n));
      size += n;
      const leaves = LEAVES.slice(0, size);
      expect(log.size).to.equal(size);
      expect(log.root().equals(rootFromLeafHashes(leaves)), `root at ${size}`).to.equal(true);
      for (const lo of [0, 1, 255, 256, 511, 512, 1024].filter((x) => x < size)) expect(log.rangeHash(lo, size).equals(rootFromLeafHashes(leaves, lo, size)), `[${lo}, ${size})`).to.equal(true);
      for (const i of [0, 255, 256, 700, size - 1].filter((x) => x < size)) expect(hex(log.inclusionProof(i)), `leaf ${i} of ${size}`).to.deep.equal(hex(inclusionProof(leaves, i)));
      for (const m of [1, 256, 512, 513, 1536].filter((x) => x < size)) {
        expect(hex(log.consistencyProof(m)), `${m} -> ${size}`).to.deep.equal(hex(consistencyProof(leaves, m)));
        expect(log.root(m).equals(rootFromLeafHashes(leaves, 0, m)), `root(${m}) at ${size}`).to.equal(true);
      }
    }
  });

  it('stores the leaf hashes, one level-1 hash per full tile, the interior of each full tile and the entry records', () => {
    const cols = memoryTileColumns();
    const log = new TileLog(cols);
    for (let i = 0; i < N; i += 300) log.append(DIGESTS.slice(i, i + 300));
    expect([log.levelLength(0), log.levelLength(1), log.levelLength(2)]).to.deep.equal([N, 8, 0]);
    for (let t = 0; t < 8; t++) expect(log.levelHashes(1, t, 1).equals(rootFromLeafHashes(LEAVES, t * 256, t * 256 + 256)), `level-1 hash ${t}`).to.equal(true);
    expect([cols.interior(0).length, cols.interior(1).length]).to.deep.equal([8 * INTERIOR_HASHES, 0]);
    // row r of a tile's interior holds the subtrees of height r, left to right
    const interior = cols.interior(0).read(5 * INTERIOR_HASHES, INTERIOR_HASHES);
    let at = 0;
    for (let r = 1; r < 8; r++) {
      const width = 256 >> r;
      for (const k of [0, width - 1]) {
        const lo = 5 * 256 + k * (1 << r);
        expect(interior.subarray((at + k) * 32, (at + k + 1) * 32).equals(rootFromLeafHashes(LEAVES, lo, lo + (1 << r))), `row ${r}, subtree ${k}`).to.equal(true);
      }
      at += width;
    }
    expect(at).to.equal(INTERIOR_HASHES);
    for (const i of [0, 1, 1999, N - 1]) {
      expect([log.entry(i).equals(DIGESTS[i]!), log.leaf(i).equals(LEAVES[i]!), log.levelHashes(0, i, 1).equals(LEAVES[i]!)], `entry ${i}`).to.deep.equal([true, true, true]);
    }
    const records = log.entryRecords(N - 2, 2);
    expect(records.equals(Buffer.concat([Buffer.from([0, 32]), DIGESTS[N - 2]!, Buffer.from([0, 32]), DIGESTS[N - 1]!]))).to.equal(true);
    // a partial tile's interior holds only its complete pairs; the rest is zero
    const partial = tileInterior(log.levelHashes(0, 2048, 52));
    expect(partial.subarray(0, 32).equals(rootFromLeafHashes(LEAVES, 2048, 2050))).to.equal(true);
    expect(partial.subarray(26 * 32, 128 * 32).equals(Buffer.alloc(102 * 32))).to.equal(true);
    expect(partial.subarray(128 * 32, 129 * 32).equals(rootFromLeafHashes(LEAVES, 2048, 2052))).to.equal(true);
    expect(log.append([])).to.equal(undefined);
    expect(log.size).to.equal(N);
  });

  it('resumes in memory at any size (cutting the leaves, level-1 hashes, interiors and entries after it) and grows on to the same tree', () => {
    const cols = memoryTileColumns();
    const log = new TileLog(cols);
    log.append(DIGESTS);
    const sizes = [N - 1, 1792, 1537, 1024, 513, 256, 255, 3, 1, 0];
    for (const size of sizes) {
      log.resume(size);
      expect([log.size, log.levelLength(0), log.levelLength(1), cols.entries.length, cols.interior(0).length], `resume(${size})`).to.deep.equal([size, size, Math.floor(size / 256), size, Math.floor(size / 256) * INTERIOR_HASHES]);
      expect(log.root().equals(rootFromLeafHashes(LEAVES, 0, size)), `root after resume(${size})`).to.equal(true);
      if (size > 1) expect(hex(log.inclusionProof(size - 2)), `proof after resume(${size})`).to.deep.equal(hex(inclusionProof(LEAVES.slice(0, size), size - 2)));
    }
    for (let i = 0; i < N; i += 333) log.append(DIGESTS.slice(i, Math.min(N, i + 333)));
    expect(log.root().equals(rootFromLeafHashes(LEAVES))).to.equal(true);
    expect(cols.interior(0).read(7 * INTERIOR_HASHES, INTERIOR_HASHES).equals(tileInterior(cols.level(0).read(7 * 256, 256)))).to.equal(true);
    expect(hex(log.inclusionProof(1500))).to.deep.equal(hex(inclusionProof(LEAVES, 1500)));
  });

  it('roots exist for sizes 0 to the log size only', () => {
    const log = new TileLog(memoryTileColumns());
    log.append(DIGESTS.slice(0, 5));
    expect(() => log.root(6)).to.throw(RangeError, 'no tree of size 6 in a log of 5');
    expect(() => log.root(-1)).to.throw(RangeError, 'no tree of size -1 in a log of 5');
    expect(log.root(0).equals(rootFromLeafHashes([]))).to.equal(true);
  });

  it('resuming at a size past what is stored is refused, naming leaves and entries', () => {
    const cols = memoryTileColumns();
    const log = new TileLog(cols);
    log.append(DIGESTS.slice(0, 10));
    cols.entries.truncate(9);
    expect(() => log.resume(10)).to.throw('tiles hold 10 leaves and 9 entries, not 10');
  });

  it('sync() writes every column it has to its file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tilesync-'));
    try {
      const files: FileColumn[] = [];
      const col = (name: string, width: number) => {
        const c = new FileColumn(join(dir, name), width);
        files.push(c);
        return c;
      };
      const levels: FileColumn[] = [];
      const interiors: FileColumn[] = [];
      const log = new TileLog({ level: (l) => (levels[l] ??= col(`level-${l}`, 32)), interior: (l) => (interiors[l] ??= col(`interior-${l}`, 32)), entries: col('entries', ENTRY_RECORD) });
      log.append(DIGESTS.slice(0, 600));
      await log.sync();
      const size = (name: string) => statSync(join(dir, name)).size;
      expect([size('entries'), size('level-0'), size('level-1'), size('interior-0')]).to.deep.equal([600 * ENTRY_RECORD, 600 * 32, 2 * 32, 2 * INTERIOR_HASHES * 32]);
      files.forEach((f) => f.close());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
