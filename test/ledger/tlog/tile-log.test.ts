// The tiled Merkle log against the recursive RFC 6962 definitions, in memory and in files, and its
// resumption from stored tiles alone.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { consistencyProof, inclusionProof, leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '../../../src/lib/merkle.js';
import { FileColumn } from '../../../src/ledger/tlog/column.js';
import { ENTRY_RECORD, INTERIOR_HASHES, memoryTileColumns, TileLog, tileInterior } from '../../../src/ledger/tlog/tile-log.js';

const digest = (i: number): Buffer => createHash('sha256').update(`entry ${i}`).digest();
const hex = (b: Buffer[]): string[] => b.map((h) => h.toString('hex'));

const memoryColumns = memoryTileColumns;

function fileColumns(dir: string) {
  const levels: FileColumn[] = [];
  const interiors: FileColumn[] = [];
  const entries = new FileColumn(join(dir, 'entries'), ENTRY_RECORD);
  return {
    level: (l: number) => (levels[l] ??= new FileColumn(join(dir, String(l)), 32)),
    interior: (l: number) => (interiors[l] ??= new FileColumn(join(dir, `interior-${l}`), 32)),
    entries,
    close: () => [...levels, ...interiors, entries].forEach((c) => c?.close()),
  };
}

describe('TileLog (C2SP tiles as the Merkle log)', function () {
  // tens of thousands of hashes against a reference: up to 17 s on a quiet machine, minutes on a loaded one
  this.timeout(300_000);
  const N = 70_000;
  const leaves = Array.from({ length: N }, (_, i) => leafHash(digest(i)));
  const log = new TileLog(memoryColumns());
  before(() => {
    // appended in uneven batches, as group commits do
    for (let i = 0; i < N; ) {
      const n = 1 + ((i * 7919) % 300);
      log.append(Array.from({ length: Math.min(n, N - i) }, (_, k) => digest(i + k)));
      i += n;
    }
  });

  it('stores the tiles the specification describes for 70,000 entries: 70,000 leaf hashes, 273 level-1 and 1 level-2 hashes', () => {
    expect([log.size, log.levelLength(0), log.levelLength(1), log.levelLength(2), log.levelLength(3)]).to.deep.equal([N, N, 273, 1, 0]);
    // level 1 holds the root of each full level-0 tile; level 2 the root of the first 65,536 leaves
    expect(log.levelHashes(1, 5, 1).equals(rootFromLeafHashes(leaves, 5 * 256, 6 * 256))).to.equal(true);
    expect(log.levelHashes(2, 0, 1).equals(rootFromLeafHashes(leaves, 0, 65_536))).to.equal(true);
    const bundle = log.entryRecords(256, 2);
    expect(bundle.length).to.equal(68);
    expect([bundle.readUInt16BE(0), bundle.readUInt16BE(34)]).to.deep.equal([32, 32]);
    expect(bundle.subarray(2, 34).equals(digest(256))).to.equal(true);
  });

  it('root at any size equals the recursive MTH', () => {
    for (const size of [1, 2, 255, 256, 257, 65_535, 65_536, 65_537, 69_999, N]) expect(log.root(size).equals(rootFromLeafHashes(leaves, 0, size)), `size ${size}`).to.equal(true);
  });

  it('inclusion and consistency proofs equal the RFC 9162 reference and verify', () => {
    const root = log.root();
    for (const i of [0, 1, 255, 256, 4097, 65_535, 65_536, 69_998, N - 1]) {
      const proof = log.inclusionProof(i);
      expect(hex(proof), `index ${i}`).to.deep.equal(hex(inclusionProof(leaves, i)));
      expect(verifyInclusion(leaves[i]!, i, N, proof, root)).to.equal(true);
    }
    expect(hex(log.inclusionProof(300, 1000))).to.deep.equal(hex(inclusionProof(leaves.slice(0, 1000), 300)));
    for (const m of [1, 256, 1000, 65_536, 65_537, N - 1]) {
      const proof = log.consistencyProof(m);
      expect(hex(proof), `from ${m}`).to.deep.equal(hex(consistencyProof(leaves, m)));
      expect(verifyConsistency(m, N, log.root(m), root, proof)).to.equal(true);
    }
  });

  it('in files: resumes from the stored tiles alone at any earlier size, cutting what came after, and appends on', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tiles-'));
    try {
      const cols = fileColumns(dir);
      const a = new TileLog(cols);
      a.append(Array.from({ length: 66_000 }, (_, i) => digest(i)));
      expect(a.root().equals(rootFromLeafHashes(leaves, 0, 66_000))).to.equal(true);
      cols.close();
      const again = fileColumns(dir);
      const b = new TileLog(again);
      b.resume(65_600);
      expect([b.size, b.levelLength(1), b.levelLength(2)]).to.deep.equal([65_600, 256, 1]);
      expect(b.root().equals(rootFromLeafHashes(leaves, 0, 65_600))).to.equal(true);
      b.append(Array.from({ length: N - 65_600 }, (_, k) => digest(65_600 + k)));
      expect(b.root().equals(log.root())).to.equal(true);
      expect(hex(b.inclusionProof(65_599))).to.deep.equal(hex(log.inclusionProof(65_599)));
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps the interior of every full tile, recomputable from the tile, and proofs read it', () => {
    const cols = memoryColumns();
    const a = new TileLog(cols);
    a.append(Array.from({ length: 66_000 }, (_, i) => digest(i)));
    expect([cols.interior(0).length, cols.interior(1).length, cols.interior(2).length]).to.deep.equal([257 * INTERIOR_HASHES, INTERIOR_HASHES, 0]);
    for (const [level, tile] of [[0, 0], [0, 256], [1, 0]] as const) {
      expect(cols.interior(level).read(tile * INTERIOR_HASHES, INTERIOR_HASHES).equals(tileInterior(cols.level(level).read(tile * 256, 256))), `${level}/${tile}`).to.equal(true);
    }
    // a damaged interior (the pair of leaves 768, 769) changes the proofs that cross it: read, not recomputed
    const tampered = memoryColumns();
    const b = new TileLog(tampered);
    b.append(Array.from({ length: 66_000 }, (_, i) => digest(i)));
    const bytes = tampered.interior(0).read(0, 257 * INTERIOR_HASHES);
    bytes[3 * INTERIOR_HASHES * 32]! ^= 1;
    tampered.interior(0).truncate(0);
    tampered.interior(0).append(bytes);
    expect(hex(b.inclusionProof(3 * 256 + 2, 66_000))).to.not.deep.equal(hex(inclusionProof(leaves.slice(0, 66_000), 3 * 256 + 2)));
    expect(hex(b.inclusionProof(4 * 256 + 5, 66_000))).to.deep.equal(hex(inclusionProof(leaves.slice(0, 66_000), 4 * 256 + 5)));
  });

  it('derives missing interiors on resume (a log written before they were kept, or cut by a crash)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tiles-'));
    try {
      const cols = fileColumns(dir);
      new TileLog(cols).append(Array.from({ length: 66_000 }, (_, i) => digest(i)));
      cols.interior(0).truncate(10 * INTERIOR_HASHES + 7);
      cols.interior(1).truncate(0);
      cols.close();
      const again = fileColumns(dir);
      const b = new TileLog(again);
      b.resume(66_000);
      expect([again.interior(0).length, again.interior(1).length]).to.deep.equal([257 * INTERIOR_HASHES, INTERIOR_HASHES]);
      expect(again.interior(0).read(200 * INTERIOR_HASHES, INTERIOR_HASHES).equals(tileInterior(again.level(0).read(200 * 256, 256)))).to.equal(true);
      for (const i of [0, 300, 51_234, 65_999]) expect(hex(b.inclusionProof(i)), `leaf ${i}`).to.deep.equal(hex(inclusionProof(leaves.slice(0, 66_000), i)));
      // resuming at an earlier size cuts the interiors of tiles that are no longer full
      b.resume(1000);
      expect(again.interior(0).length).to.equal(3 * INTERIOR_HASHES);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to resume at a size its tiles do not reach', () => {
    const small = new TileLog(memoryColumns());
    small.append([digest(0), digest(1)]);
    expect(() => small.resume(3)).to.throw('tiles hold 2 leaves and 2 entries, not 3');
  });
});
