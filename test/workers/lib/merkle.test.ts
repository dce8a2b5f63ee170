import { expect } from 'chai';
import { consistencyProof, inclusionProof, leafHash, merkleRoot, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '../../../workers/lib/merkle.js';
import { at, xorAt } from '../../helpers/indexed.js';

// RFC 6962 / 9162 published vectors (ledger-signing note 3.1).
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

describe('workers/lib/merkle (RFC 9162)', () => {
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
});
