// TileLog beyond root and proofs: every range hash against the recursive definition, the
// right-edge memo while the log grows, the empty tree, and the argument checks of the proofs.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { memoryTileColumns, TileLog } from '../../../src/ledger/tlog/tile-log.js';
import { inclusionProof, leafHash, rootFromLeafHashes } from '../../../src/lib/merkle.js';

function newLog(): TileLog {
  return new TileLog(memoryTileColumns());
}

const data = (k: number) => createHash('sha256').update(`leaf ${k}`).digest();
const hex = (b: Buffer) => b.toString('hex');

describe('TileLog ranges and proofs', () => {
  it('rangeHash(lo, hi) equals MTH of the leaves [lo, hi) for every range of a 13-leaf log', () => {
    const log = newLog();
    const leaves: Buffer[] = [];
    for (let k = 0; k < 13; k++) {
      log.append([data(k)]);
      leaves.push(leafHash(data(k)));
    }
    for (let lo = 0; lo <= 13; lo++) for (let hi = lo; hi <= 13; hi++) expect(hex(log.rangeHash(lo, hi)), `[${lo}, ${hi})`).to.equal(hex(rootFromLeafHashes(leaves.slice(lo, hi))));
    expect(log.size).to.equal(13);
    expect(hex(log.leaf(12))).to.equal(hex(leaves[12]!));
  });

  it('proofs and right-edge ranges at the current size stay right while the log grows between them (the edge memo is per size)', () => {
    const log = newLog();
    const leaves: Buffer[] = [];
    for (let k = 0; k < 40; k++) {
      log.append([data(k)]);
      leaves.push(leafHash(data(k)));
      const n = leaves.length;
      // every proof against the current size, twice (the second from the memo), and an earlier size
      for (const pass of [1, 2]) {
        for (let i = 0; i < n; i++) expect(log.inclusionProof(i, n).map(hex), `leaf ${i} of ${n}, pass ${pass}`).to.deep.equal(inclusionProof(leaves, i).map(hex));
        for (let lo = 0; lo < n; lo++) expect(hex(log.rangeHash(lo, n)), `[${lo}, ${n})`).to.equal(hex(rootFromLeafHashes(leaves.slice(lo, n))));
      }
      if (n > 1) expect(log.inclusionProof(0, n - 1).map(hex)).to.deep.equal(inclusionProof(leaves.slice(0, n - 1), 0).map(hex));
    }
  });

  it('the empty tree hashes to SHA-256 of nothing; roots of earlier sizes stay available; the current root is recomputed after an append', () => {
    const log = newLog();
    expect(hex(log.root())).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const leaves: Buffer[] = [];
    for (let k = 0; k < 6; k++) {
      log.append([data(k)]);
      leaves.push(leafHash(data(k)));
      expect(hex(log.root())).to.equal(hex(rootFromLeafHashes(leaves)));
    }
    for (let m = 0; m <= 6; m++) expect(hex(log.root(m))).to.equal(hex(rootFromLeafHashes(leaves.slice(0, m))));
    expect(hex(log.root())).to.equal(hex(rootFromLeafHashes(leaves)));
  });

  it('proofs refuse leaves and sizes outside the tree', () => {
    const log = newLog();
    for (let k = 0; k < 5; k++) log.append([data(k)]);
    expect(() => log.inclusionProof(-1)).to.throw(RangeError, 'leaf -1 outside tree of size 5');
    expect(() => log.inclusionProof(5)).to.throw(RangeError, 'leaf 5 outside tree of size 5');
    expect(() => log.inclusionProof(2, 2)).to.throw(RangeError, 'leaf 2 outside tree of size 2');
    expect(() => log.inclusionProof(0, 6)).to.throw(RangeError, 'leaf 0 outside tree of size 6');
    expect(log.inclusionProof(4, 5)).to.have.length(1);
    expect(log.inclusionProof(0, 1)).to.deep.equal([]);
    expect(() => log.consistencyProof(0)).to.throw(RangeError, 'sizes 0 -> 5 invalid for a tree of 5');
    expect(() => log.consistencyProof(4, 3)).to.throw(RangeError, 'sizes 4 -> 3 invalid for a tree of 5');
    expect(() => log.consistencyProof(2, 6)).to.throw(RangeError, 'sizes 2 -> 6 invalid for a tree of 5');
    expect(log.consistencyProof(5)).to.deep.equal([]);
    expect(log.consistencyProof(3, 3)).to.deep.equal([]);
  });
});
