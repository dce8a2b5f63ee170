// The Ledger class unit by unit: capacity and reservations, sequencing, applyNode's three refusals,
// listeners, lookups, and each of the integrity probe's findings (each is a different mutant class).
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Ledger, LedgerFullError, memoryStorage, nodeDigest, ZERO_DIGEST, type AppendInput, type LedgerNode, type LedgerStorage } from '../../src/ledger/ledger.js';
import { sha256 } from '../../src/ledger/dsse.js';
import { consistencyProof as refConsistency, inclusionProof as refInclusion, leafHash, rootFromLeafHashes } from '../../src/lib/merkle.js';
import { referenceChain } from '../helpers/ledger-reference.js';

const input = (k: number, extra: Partial<AppendInput> = {}): AppendInput => ({
  kind: 'k',
  tsUtc: new Date(Date.UTC(2025, 0, 1, 0, 0, k)).toISOString(),
  payload: Buffer.from(`payload ${k}`),
  paeSha256: sha256(Buffer.from(`pae ${k}`)),
  sig: Buffer.from([k, k + 1]),
  keyid: 'key',
  ...extra,
});

/** The chain recomputed from the inputs alone (test/helpers/ledger-reference.ts). */
const chainOf = (inputs: AppendInput[]): Buffer[] => referenceChain(inputs);

const sequenced = (inputs: AppendInput[]): LedgerNode[] => {
  const d = chainOf(inputs);
  return inputs.map((inp, i) => ({ ...inp, simulated: inp.simulated ?? false, index: i, prev: i ? d[i - 1]! : ZERO_DIGEST, nodeDigest: d[i]! }));
};

describe('ledger chain (Ledger)', () => {
  it('append sequences index, prev and digest as recomputed from the inputs; the root is RFC 9162 over the digests', () => {
    const inputs = Array.from({ length: 7 }, (_, k) => input(k, { simulated: k % 2 === 1 }));
    const ledger = new Ledger(10);
    expect(ledger.head.equals(ZERO_DIGEST)).to.equal(true);
    expect(ledger.newest()).to.equal(undefined);
    const d = chainOf(inputs);
    inputs.forEach((inp, i) => {
      const n = ledger.append(inp);
      expect([n.index, n.prev.equals(i ? d[i - 1]! : ZERO_DIGEST), n.nodeDigest.equals(d[i]!), n.simulated]).to.deep.equal([i, true, true, i % 2 === 1]);
      expect(ledger.head.equals(d[i]!)).to.equal(true);
    });
    expect(ledger.size).to.equal(7);
    expect(ledger.root().equals(rootFromLeafHashes(d.map((x) => leafHash(x))))).to.equal(true);
    expect(ledger.root(3).equals(rootFromLeafHashes(d.slice(0, 3).map((x) => leafHash(x))))).to.equal(true);
    // a stored node reads back field for field
    const n4 = ledger.get(4)!;
    expect([n4.kind, n4.tsUtc, n4.payload.toString(), n4.keyid, n4.sig.equals(inputs[4]!.sig), n4.paeSha256.equals(inputs[4]!.paeSha256)]).to.deep.equal(['k', inputs[4]!.tsUtc, 'payload 4', 'key', true, true]);
    expect(ledger.newest()!.index).to.equal(6);
    expect(ledger.get(7)).to.equal(undefined);
    expect(ledger.get(-1)).to.equal(undefined);
    // without a simulated flag a node is not simulated
    expect(new Ledger(1).append({ ...input(0), simulated: undefined }).simulated).to.equal(false);
  });

  it('tail, indexOfPae and findByDigestPrefix', () => {
    const ledger = new Ledger(20);
    const inputs = Array.from({ length: 6 }, (_, k) => input(k));
    inputs.forEach((inp) => ledger.append(inp));
    expect(ledger.tail(3).map((n) => n.index)).to.deep.equal([3, 4, 5]);
    expect(ledger.tail(10).map((n) => n.index)).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(ledger.tail(0)).to.deep.equal([]);
    expect(ledger.indexOfPae(inputs[2]!.paeSha256.toString('hex'))).to.equal(2);
    expect(ledger.indexOfPae('ab')).to.equal(undefined);
    expect(ledger.indexOfPae('0'.repeat(64))).to.equal(undefined);
    expect(ledger.indexOfPae(inputs[2]!.paeSha256.toString('hex').toUpperCase())).to.equal(undefined);
    // the same PAE twice: the newest index
    ledger.append(input(9, { paeSha256: inputs[2]!.paeSha256 }));
    expect(ledger.indexOfPae(inputs[2]!.paeSha256.toString('hex'))).to.equal(6);
    const d = chainOf([...inputs, input(9, { paeSha256: inputs[2]!.paeSha256 })]);
    const prefix = d[4]!.toString('hex').slice(0, 6);
    expect(ledger.findByDigestPrefix(prefix).map((n) => n.index)).to.deep.equal(d.flatMap((x, i) => (x.toString('hex').startsWith(prefix) ? [i] : [])));
    expect(ledger.findByDigestPrefix('').map((n) => n.index)).to.deep.equal([0, 1]);
    expect(ledger.findByDigestPrefix('', 4).map((n) => n.index)).to.deep.equal([0, 1, 2, 3]);
    expect(ledger.findByDigestPrefix('', 0)).to.deep.equal([]);
    // a limit past the size lists every node once, nothing beyond the last
    expect(ledger.findByDigestPrefix('', 100).map((n) => n.index)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
  });

  it('capacity: reserve, release, full and append count against maxNodes; release never goes below zero', () => {
    const ledger = new Ledger(3);
    expect(ledger.full).to.equal(false);
    ledger.reserve(2);
    expect(ledger.full).to.equal(false);
    ledger.reserve();
    expect(ledger.full).to.equal(true);
    expect(() => ledger.reserve()).to.throw(LedgerFullError).with.property('maxNodes', 3);
    ledger.release(2);
    expect(ledger.full).to.equal(false);
    ledger.reserve(2);
    expect(() => ledger.reserve(1)).to.throw(LedgerFullError);
    // an append consumes a reservation rather than a free slot
    ledger.append(input(0));
    ledger.append(input(1));
    ledger.append(input(2));
    expect(ledger.size).to.equal(3);
    expect(() => ledger.append(input(3))).to.throw(LedgerFullError);
    const empty = new Ledger(2);
    empty.release(5);
    empty.reserve(2);
    expect(() => empty.reserve(1)).to.throw(LedgerFullError);
    // with nothing reserved an append takes a free slot until the cap
    const free = new Ledger(1);
    free.append(input(0));
    expect(() => free.append(input(1))).to.throw(LedgerFullError);
    expect(free.full).to.equal(true);
  });

  it('applyNode accepts the next node of the chain and refuses a wrong index, link or digest; reservations are consumed', () => {
    const nodes = sequenced(Array.from({ length: 4 }, (_, k) => input(k)));
    const ledger = new Ledger(4);
    ledger.reserve(1);
    expect(() => ledger.applyNode(nodes[1]!)).to.throw(/node 1 does not extend a ledger of 0 nodes/);
    expect(() => ledger.applyNode({ ...nodes[0]!, prev: Buffer.alloc(32, 1) })).to.throw('node 0: prev does not match node -1');
    expect(() => ledger.applyNode({ ...nodes[0]!, nodeDigest: Buffer.alloc(32, 2) })).to.throw(/node 0: digest does not recompute/);
    // a replayed node is not re-hashed: a wrong digest with replayed = true is taken as the store's word
    expect(ledger.applyNode(nodes[0]!, true).index).to.equal(0);
    expect(ledger.size).to.equal(1);
    ledger.applyNode(nodes[1]!);
    ledger.applyNode(nodes[2]!);
    // the reservation was consumed by the first applyNode(…, true): the fourth slot is free, a fifth is not
    ledger.applyNode(nodes[3]!);
    expect(ledger.full).to.equal(true);
    expect(ledger.head.equals(nodes[3]!.nodeDigest)).to.equal(true);
    const other = new Ledger(4);
    other.reserve(2);
    other.applyNode(nodes[0]!, false);
    expect(() => other.reserve(3)).to.throw(LedgerFullError); // 1 node + 2 still reserved + 3 > 4
    other.reserve(1);
  });

  it('reservations are consumed exactly once: by append, and by applyNode only when it says so and one is held', () => {
    const nodes = sequenced(Array.from({ length: 3 }, (_, k) => input(k)));
    // append takes its slot from a reservation when one is held
    const a = new Ledger(3);
    a.reserve(1);
    a.append(input(0));
    a.reserve(2); // 1 node + 0 reserved + 2 = 3
    expect(() => a.reserve(1)).to.throw(LedgerFullError);
    // applyNode without the flag leaves the reservation held
    const b = new Ledger(3);
    b.reserve(1);
    b.applyNode(nodes[0]!);
    b.reserve(1);
    expect(() => b.reserve(1)).to.throw(LedgerFullError);
    // applyNode from a reservation with none held does not go below zero
    const c = new Ledger(2);
    c.applyNode(nodes[0]!, true);
    c.reserve(1);
    expect(() => c.reserve(1)).to.throw(LedgerFullError);
    // and with one held, consumes exactly one
    const d = new Ledger(4);
    d.reserve(2);
    d.applyNode(nodes[0]!, true);
    d.reserve(1); // 1 + 1 + 1 = 3
    d.reserve(1);
    expect(() => d.reserve(1)).to.throw(LedgerFullError);
  });

  it('nodes replayed by a store count as verified for the incremental probe only when they extend the verified prefix', () => {
    const nodes = sequenced(Array.from({ length: 4 }, (_, k) => input(k)));
    const l = new Ledger(10);
    nodes.forEach((n) => l.applyNode(n, false, true));
    // all four verified at replay: a change to node 1 is invisible to the incremental probe, not to a full one
    l.get(1)!.paeSha256[0]! ^= 1;
    expect(l.verifyIntegrity()).to.deep.include({ verified: true, nodes: 4 });
    expect(l.verifyIntegrity(true)).to.deep.include({ verified: false, reason: 'node 1: digest does not recompute' });
    // a node appended normally, then replayed ones: the probe still starts at node 0
    const m = new Ledger(10);
    m.applyNode(nodes[0]!);
    m.applyNode(nodes[1]!, false, true);
    m.get(0)!.paeSha256[0]! ^= 1;
    expect(m.verifyIntegrity()).to.deep.include({ verified: false, reason: 'node 0: digest does not recompute' });
    // replayed after a verified prefix: verifiedUpTo moves to the node after it
    const r = new Ledger(10);
    r.applyNode(nodes[0]!, false, true);
    r.applyNode(nodes[1]!, false, true);
    r.applyNode(nodes[2]!);
    r.get(1)!.paeSha256[0]! ^= 1;
    r.get(2)!.paeSha256[0]! ^= 1;
    expect(r.verifyIntegrity()).to.deep.include({ verified: false, reason: 'node 2: digest does not recompute' });
  });

  it('inclusion and consistency proofs for any size equal the RFC 9162 reference (src/lib/merkle)', () => {
    const inputs = Array.from({ length: 11 }, (_, k) => input(k));
    const l = new Ledger(20);
    inputs.forEach((inp) => l.append(inp));
    const leaves = chainOf(inputs).map((d) => leafHash(d));
    for (const size of [1, 5, 8, 11]) {
      for (let i = 0; i < size; i++) expect(l.inclusionProof(i, size).map((h) => h.toString('hex'))).to.deep.equal(refInclusion(leaves.slice(0, size), i).map((h) => h.toString('hex')));
      for (let m = 1; m <= size; m++) expect(l.consistencyProof(m, size).map((h) => h.toString('hex'))).to.deep.equal(refConsistency(leaves.slice(0, size), m).map((h) => h.toString('hex')));
    }
    expect(l.inclusionProof(3).map((h) => h.toString('hex'))).to.deep.equal(refInclusion(leaves, 3).map((h) => h.toString('hex')));
    expect(l.consistencyProof(4).map((h) => h.toString('hex'))).to.deep.equal(refConsistency(leaves, 4).map((h) => h.toString('hex')));
  });

  it('listeners see every node with own = true for appends and applyNode from a reservation, false for others; unsubscribing stops them', () => {
    const ledger = new Ledger(10);
    const seen: [number, boolean][] = [];
    const off = ledger.onAppend((n, own) => seen.push([n.index, own]));
    ledger.append(input(0));
    const nodes = sequenced(Array.from({ length: 4 }, (_, k) => input(k)));
    ledger.applyNode(nodes[1]!, false);
    ledger.applyNode(nodes[2]!, true);
    off();
    ledger.applyNode(nodes[3]!);
    expect(seen).to.deep.equal([[0, true], [1, false], [2, true]]);
  });

  it('verifyIntegrity: verified over every node; finds a changed PAE, a changed digest and a Merkle leaf that differs', () => {
    const inputs = Array.from({ length: 12 }, (_, k) => input(k));
    const ledger = new Ledger(20);
    inputs.forEach((inp) => ledger.append(inp));
    const ok = ledger.verifyIntegrity();
    expect(ok).to.deep.equal({ verified: true, nodes: 12, root: ledger.root().toString('hex'), reason: 'chain and Merkle leaves recomputed for 12 nodes' });
    // views into the packed columns: changing a byte changes the stored node
    ledger.get(5)!.paeSha256[0]! ^= 1;
    // the incremental probe starts after the last verified node: it does not see node 5
    expect(ledger.verifyIntegrity().verified).to.equal(true);
    expect(ledger.verifyIntegrity(true)).to.deep.include({ verified: false, nodes: 12, reason: 'node 5: digest does not recompute' });
    ledger.get(5)!.paeSha256[0]! ^= 1;
    expect(ledger.verifyIntegrity(true).verified).to.equal(true);
    // a changed digest breaks the link of the next node (prev is the stored previous digest) or its own recomputation
    ledger.get(8)!.nodeDigest[3]! ^= 4;
    expect(ledger.verifyIntegrity(true)).to.deep.include({ verified: false, reason: 'node 8: digest does not recompute' });
    ledger.get(8)!.nodeDigest[3]! ^= 4;
    // new nodes after a verified prefix are checked incrementally from where it stopped
    ledger.verifyIntegrity(true);
    ledger.append(input(12));
    expect(ledger.verifyIntegrity()).to.deep.include({ verified: true, nodes: 13 });
  });

  it('verifyIntegrity reports a Merkle leaf that differs from its digest, and a first node sequenced at another index', () => {
    // nodes planted in the storage directly, past the ledger's own checks
    const plant = (storage: LedgerStorage, node: LedgerNode, leaf: Buffer): void => {
      storage.records.remember(node);
      storage.tiles.entries.append(Buffer.concat([Buffer.from([0, 32]), node.nodeDigest]));
      storage.tiles.level(0).append(leaf);
      storage.paes.append(node.paeSha256);
    };
    const storage = memoryStorage();
    const ledger = new Ledger(5, storage);
    const nodes = sequenced(Array.from({ length: 3 }, (_, k) => input(k)));
    ledger.applyNode(nodes[0]!);
    ledger.applyNode(nodes[1]!);
    plant(storage, nodes[2]!, Buffer.alloc(32, 9));
    expect(ledger.verifyIntegrity(true)).to.deep.include({ verified: false, nodes: 3, reason: 'node 2: Merkle leaf differs from its digest' });
    // a first node whose digest was computed for index 1
    const badStorage = memoryStorage();
    const bad = new Ledger(5, badStorage);
    const shifted = sequenced([input(0), input(1)]);
    plant(badStorage, shifted[1]!, leafHash(shifted[1]!.nodeDigest));
    expect(bad.verifyIntegrity(true).reason).to.equal('node 0: digest does not recompute');
  });

  it('nodeDigest writes the index as a 64-bit big-endian integer, beyond 2³²', () => {
    const prev = Buffer.alloc(32, 3);
    const p = Buffer.alloc(32, 5);
    for (const i of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7]) {
      const u64 = Buffer.alloc(8);
      u64.writeBigUInt64BE(BigInt(i));
      expect(nodeDigest(i, prev, p).toString('hex')).to.equal(createHash('sha256').update('svc.khipu.node.v1\n').update(u64).update(prev).update(p).digest('hex'));
    }
  });
});
