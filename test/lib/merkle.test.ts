import { expect } from 'chai';
import { createHash } from 'node:crypto';
import {
  consistencyProof,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  merkleRoot,
  nodeHash,
  rootFromLeafHashes,
  verifyConsistency,
  verifyInclusion,
} from '../../src/lib/merkle.js';
import { at, xorAt } from '../helpers/indexed.js';

// An independent reading of RFC 9162 §2.1, over the data itself (not leaf hashes).
const sha = (...parts: Uint8Array[]) => createHash('sha256').update(Buffer.concat(parts)).digest();
/** k: the largest power of two smaller than n (n ≥ 2), from the bit length of n − 1. */
const largestPow2Below = (n: number) => 2 ** (31 - Math.clz32(n - 1));
function MTH(d: Buffer[]): Buffer {
  if (d.length === 0) return sha();
  if (d.length === 1) return sha(Buffer.from([0]), d[0]!);
  const k = largestPow2Below(d.length);
  return sha(Buffer.from([1]), MTH(d.slice(0, k)), MTH(d.slice(k)));
}
/** PATH(m, D[n]), §2.1.3.1. */
function PATH(m: number, d: Buffer[]): Buffer[] {
  if (d.length === 1) return [];
  const k = largestPow2Below(d.length);
  return m < k ? [...PATH(m, d.slice(0, k)), MTH(d.slice(k))] : [...PATH(m - k, d.slice(k)), MTH(d.slice(0, k))];
}
/** SUBPROOF(m, D[n], b), §2.1.4.1; PROOF(m, D[n]) = SUBPROOF(m, D[n], true). */
function SUBPROOF(m: number, d: Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [MTH(d)];
  const k = largestPow2Below(d.length);
  return m <= k ? [...SUBPROOF(m, d.slice(0, k), b), MTH(d.slice(k))] : [...SUBPROOF(m - k, d.slice(k), false), MTH(d.slice(0, k))];
}

// RFC 6962 / 9162 published vectors (transparency-dev/merkle, testonly/constants.go).
const INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map((h) => Buffer.from(h, 'hex'));
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

describe('src/lib/merkle (RFC 9162)', () => {
  it('reproduces the nine published roots', () => {
    for (let n = 0; n <= 8; n++) expect(merkleRoot(INPUTS.slice(0, n)).toString('hex')).to.equal(ROOTS[n]);
  });

  it('every inclusion proof verifies and every single-bit mutation is rejected', () => {
    const leaves = Array.from({ length: 13 }, (_, i) => leafHash(Buffer.from([i])));
    for (let n = 1; n <= leaves.length; n++) {
      const root = rootFromLeafHashes(leaves.slice(0, n));
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(leaves.slice(0, n), i);
        expect(verifyInclusion(leaves[i]!, i, n, proof, root), `leaf ${i} of ${n}`).to.equal(true);
        if (n > 1) expect(verifyInclusion(leaves[i]!, (i + 1) % n, n, proof, root)).to.equal(false);
        if (proof.length) {
          const bad = proof.map((p) => Buffer.from(p));
          xorAt(at(bad, 0), 0, 1);
          expect(verifyInclusion(leaves[i]!, i, n, bad, root)).to.equal(false);
          expect(verifyInclusion(leaves[i]!, i, n, proof.slice(1), root)).to.equal(false);
          expect(verifyInclusion(leaves[i]!, i, n, [...proof, proof[0]!], root)).to.equal(false);
        }
      }
    }
  });

  it('consistency proofs verify for every m <= n and fail when mutated or mismatched', () => {
    const leaves = Array.from({ length: 12 }, (_, i) => leafHash(Buffer.from([i, 7])));
    for (let n = 1; n <= leaves.length; n++) {
      const newRoot = rootFromLeafHashes(leaves.slice(0, n));
      for (let m = 1; m <= n; m++) {
        const oldRoot = rootFromLeafHashes(leaves.slice(0, m));
        const proof = consistencyProof(leaves.slice(0, n), m);
        expect(verifyConsistency(m, n, oldRoot, newRoot, proof), `${m}->${n}`).to.equal(true);
        if (m < n) {
          expect(verifyConsistency(m, n, newRoot, newRoot, proof)).to.equal(false);
          if (proof.length) {
            const bad = proof.map((p) => Buffer.from(p));
            xorAt(at(bad, bad.length - 1), 5, 0x80);
            expect(verifyConsistency(m, n, oldRoot, newRoot, bad)).to.equal(false);
          }
        }
      }
    }
  });

  it('roots, inclusion and consistency proofs equal an independent RFC 9162 reference up to 20 leaves', () => {
    const data = Array.from({ length: 20 }, (_, i) => Buffer.from(`entry ${i}`));
    const leaves = data.map(leafHash);
    const hex = (bs: Buffer[]) => bs.map((b) => b.toString('hex'));
    for (let n = 1; n <= data.length; n++) {
      const d = data.slice(0, n);
      const root = MTH(d);
      expect(rootFromLeafHashes(leaves.slice(0, n)).equals(root), `root ${n}`).to.equal(true);
      for (let i = 0; i < n; i++) {
        const proof = inclusionProof(leaves.slice(0, n), i);
        expect(hex(proof), `path ${i} of ${n}`).to.deep.equal(hex(PATH(i, d)));
        expect(verifyInclusion(leaves[i]!, i, n, proof, root), `path ${i} of ${n}`).to.equal(true);
      }
      for (let m = 1; m <= n; m++) {
        const proof = consistencyProof(leaves.slice(0, n), m);
        expect(hex(proof), `proof ${m} -> ${n}`).to.deep.equal(hex(SUBPROOF(m, d, true)));
        expect(verifyConsistency(m, n, MTH(data.slice(0, m)), root, proof), `proof ${m} -> ${n}`).to.equal(true);
      }
    }
  });

  it('the proof builders refuse a leaf or an old size outside the tree', () => {
    const leaves = Array.from({ length: 5 }, (_, i) => leafHash(Buffer.from([i])));
    // the messages are checked: an unguarded recursion would fail too, but with a stack overflow or a TypeError
    expect(() => inclusionProof(leaves, 5)).to.throw(RangeError, 'leaf 5 outside tree of size 5');
    expect(() => inclusionProof(leaves, -1)).to.throw(RangeError, 'leaf -1 outside tree of size 5');
    expect(() => inclusionProof([], 0)).to.throw(RangeError, 'leaf 0 outside tree of size 0');
    expect(() => consistencyProof(leaves, 0)).to.throw(RangeError, 'old size 0 outside 1..5');
    expect(() => consistencyProof(leaves, 6)).to.throw(RangeError, 'old size 6 outside 1..5');
    expect(() => consistencyProof([], 1)).to.throw(RangeError, 'old size 1 outside 1..0');
    expect(rootFromLeafHashes([]).equals(EMPTY_ROOT)).to.equal(true);
  });

  it('verifyInclusion: an index outside 0..size−1, or size 0, is false even where the hashing alone would pass', () => {
    const a = leafHash(Buffer.from('a'));
    const b = leafHash(Buffer.from('b'));
    // a one-leaf tree's root is the leaf itself: with an empty proof only the index bounds refuse these
    expect(verifyInclusion(a, 0, 1, [], a)).to.equal(true);
    expect(verifyInclusion(a, 1, 1, [], a)).to.equal(false);
    expect(verifyInclusion(a, -1, 1, [], a)).to.equal(false);
    expect(verifyInclusion(a, 0, 0, [], a)).to.equal(false);
    expect(verifyInclusion(EMPTY_ROOT, 0, 0, [], EMPTY_ROOT)).to.equal(false);
    // one past the last leaf, with the proof of the last leaf
    const root2 = nodeHash(a, b);
    expect(verifyInclusion(b, 1, 2, [a], root2)).to.equal(true);
    expect(verifyInclusion(b, 2, 2, [a], root2)).to.equal(false);
  });

  it('verifyInclusion: a proof longer or shorter than the path is false even when its hashes reach the root', () => {
    const a = leafHash(Buffer.from('a'));
    const b = leafHash(Buffer.from('b'));
    const root2 = nodeHash(a, b);
    // too long: b as leaf 0 of a 1-leaf tree, with an extra step H(a, b) = root2
    expect(verifyInclusion(b, 0, 1, [a], root2)).to.equal(false);
    // too short: the root offered as leaf 0 of a 2-leaf tree with no path
    expect(verifyInclusion(root2, 0, 2, [], root2)).to.equal(false);
    expect(verifyInclusion(root2, 1, 2, [], root2)).to.equal(false);
  });

  it('verifyConsistency: an old size outside 1..n is false even where the hashing alone would pass', () => {
    const r = leafHash(Buffer.from('r'));
    expect(verifyConsistency(1, 1, r, r, [])).to.equal(true);
    // m = 0: the old root is taken as the first node and, with n = 1, already "matches"
    expect(verifyConsistency(0, 1, r, r, [])).to.equal(false);
    // m = 2 > n = 1: the same
    expect(verifyConsistency(2, 1, r, r, [])).to.equal(false);
    expect(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [])).to.equal(false);
  });

  it('verifyConsistency: m = n needs an empty proof and equal roots', () => {
    const r = leafHash(Buffer.from('r'));
    const s = leafHash(Buffer.from('s'));
    expect(verifyConsistency(3, 3, r, r, [])).to.equal(true);
    expect(verifyConsistency(3, 3, r, s, [])).to.equal(false);
    expect(verifyConsistency(3, 3, r, r, [s])).to.equal(false);
    expect(verifyConsistency(3, 3, r, s, [s])).to.equal(false);
  });

  it('verifyConsistency: an empty proof, or one too long or too short, is false even when its hashes reach both roots', () => {
    const leaves = Array.from({ length: 4 }, (_, i) => leafHash(Buffer.from([i, 1])));
    const [l0, l1, l2, l3] = leaves as [Buffer, Buffer, Buffer, Buffer];
    // m = 3 is not a power of two, so the path is the proof alone: empty → nothing to start from
    expect(verifyConsistency(3, 4, rootFromLeafHashes(leaves.slice(0, 3)), rootFromLeafHashes(leaves), [])).to.equal(false);
    // too short: PROOF(1, D[2]) = [l1] claimed for 1 → 3 against the size-2 root
    const root2 = nodeHash(l0, l1);
    expect(verifyConsistency(1, 2, l0, root2, [l1])).to.equal(true);
    expect(verifyConsistency(1, 3, l0, root2, [l1])).to.equal(false);
    // too long: PROOF(3, D[4]) = [l2, l3, H(l0, l1)] plus an extra node x folded, as a left sibling,
    // into both the old and the new root the verifier recomputes
    const proof = consistencyProof(leaves, 3);
    expect(proof.map((p) => p.toString('hex'))).to.deep.equal([l2, l3, root2].map((p) => p.toString('hex')));
    const x = leafHash(Buffer.from('x'));
    const oldRoot = nodeHash(x, nodeHash(root2, l2));
    const newRoot = nodeHash(x, nodeHash(root2, nodeHash(l2, l3)));
    expect(verifyConsistency(3, 4, rootFromLeafHashes(leaves.slice(0, 3)), rootFromLeafHashes(leaves), proof)).to.equal(true);
    expect(verifyConsistency(3, 4, oldRoot, newRoot, [...proof, x])).to.equal(false);
  });
});
