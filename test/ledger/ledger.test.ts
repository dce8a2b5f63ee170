import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Ledger, LedgerFullError, nodeDigest, ZERO_DIGEST } from '../../src/ledger/ledger.js';
import { pae, PAYLOAD_TYPE, isStrictBase64, sha256 } from '../../src/ledger/dsse.js';
import { consistencyProof, inclusionProof, leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '../../src/lib/merkle.js';

const hex = (b: Buffer): string => b.toString('hex');

describe('ledger core', () => {
  describe('DSSE PAE', () => {
    it('matches the DSSE v1.0.2 test vector layout', () => {
      expect(pae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).to.equal('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
    });

    it('reproduces the worked example of the signing note (1.6): 66 bytes, sha256 821399f5…', () => {
      const p = pae(PAYLOAD_TYPE, Buffer.from('{"decision":"ALLOW"}'));
      expect(p.length).to.equal(66);
      expect(hex(sha256(p))).to.equal('821399f5e7f4e39b72cb8ae5995536bc2ac754119aedf92acaf28611451aba18');
    });

    it('accepts strict standard or URL-safe base64 only', () => {
      expect(isStrictBase64('eyJkZWNpc2lvbiI6IkFMTE9XIn0=')).to.equal(true);
      expect(isStrictBase64('eyJkZWNpc2lvbiI6IkFMTE9XIn0')).to.equal(true);
      expect(isStrictBase64('ab-_')).to.equal(true);
      expect(isStrictBase64('eyJk ZWNp')).to.equal(false);
      expect(isStrictBase64('eyJk*ZWNp')).to.equal(false);
    });
  });

  describe('chain (node digest and root test vectors)', () => {
    it('node 0 over the worked-example PAE has the published digest and one-node root', () => {
      const paeSha = sha256(pae(PAYLOAD_TYPE, Buffer.from('{"decision":"ALLOW"}')));
      const d0 = nodeDigest(0, ZERO_DIGEST, paeSha);
      expect(hex(d0)).to.equal('4d8331dff4609bc96b4c2f218cc1a43788a59aaff24a9673c99463263365fb46');
      const ledger = new Ledger(10);
      ledger.append({ kind: 'k', tsUtc: 't', payload: Buffer.from('{"decision":"ALLOW"}'), paeSha256: paeSha, sig: Buffer.alloc(70), keyid: 'x' });
      expect(hex(ledger.root())).to.equal('3a7ed277152759094da84ae5784cf5a56a38faf641654ad664f441699a0ef74b');
    });

    it('the digest formula is the one a shell can recompute (domain ‖ u64be(i) ‖ prev ‖ pae_sha256)', () => {
      const prev = Buffer.alloc(32, 7);
      const p = Buffer.alloc(32, 9);
      const i = Buffer.alloc(8);
      i.writeBigUInt64BE(5n);
      expect(hex(nodeDigest(5, prev, p))).to.equal(createHash('sha256').update('svc.khipu.node.v1\n').update(i).update(prev).update(p).digest('hex'));
    });

    it('never goes past its cap and never evicts; reservations count against it', () => {
      const ledger = new Ledger(3);
      const add = (): unknown => ledger.append({ kind: 'k', tsUtc: 't', payload: Buffer.from('x'), paeSha256: sha256(Buffer.from(String(ledger.size))), sig: Buffer.alloc(1), keyid: 'x' });
      add();
      ledger.reserve(2);
      expect(() => ledger.reserve(1)).to.throw(LedgerFullError);
      add();
      add();
      expect(() => add()).to.throw(LedgerFullError);
      expect(ledger.size).to.equal(3);
      expect(ledger.get(0)!.index).to.equal(0);
    });

    it('a full integrity check finds a tampered node; the incremental one is O(new nodes)', () => {
      const ledger = new Ledger(100);
      for (let k = 0; k < 20; k++) ledger.append({ kind: 'k', tsUtc: 't', payload: Buffer.from([k]), paeSha256: sha256(Buffer.from([k])), sig: Buffer.alloc(1), keyid: 'x' });
      expect(ledger.verifyIntegrity().verified).to.equal(true);
      (ledger.get(7)!.paeSha256 as Buffer)[0]! ^= 1;
      expect(ledger.verifyIntegrity(true)).to.include({ verified: false });
      expect(ledger.verifyIntegrity(true).reason).to.match(/node 7/);
    });
  });

  describe('the ledger\'s tiled Merkle log', () => {
    it('root, inclusion and consistency proofs equal the recursive RFC 9162 definitions for every size up to 70', () => {
      const log = new Ledger(100).tlog;
      const leaves: Buffer[] = [];
      for (let n = 1; n <= 70; n++) {
        const data = sha256(Buffer.from(`leaf ${n}`));
        log.append([data]);
        leaves.push(leafHash(data));
        const root = rootFromLeafHashes(leaves);
        expect(hex(log.root()), `root ${n}`).to.equal(hex(root));
        for (const i of [0, Math.floor(n / 2), n - 1]) {
          const proof = log.inclusionProof(i);
          expect(proof.map(hex)).to.deep.equal(inclusionProof(leaves, i).map(hex));
          expect(verifyInclusion(leaves[i]!, i, n, proof, root)).to.equal(true);
        }
        for (const m of [1, Math.ceil(n / 3), n]) {
          const proof = log.consistencyProof(m);
          expect(proof.map(hex)).to.deep.equal(consistencyProof(leaves, m).map(hex));
          expect(verifyConsistency(m, n, log.root(m), root, proof)).to.equal(true);
        }
      }
    });
  });
});
