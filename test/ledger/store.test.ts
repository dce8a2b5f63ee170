// The store contract pieces every mode shares: sequencing after a tip, the durable status figure,
// and the memory store (nothing persisted, a commit is the sequencing itself).
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { ZERO_DIGEST, type AppendInput } from '../../src/ledger/ledger.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import { durableStatus, sequence, StoreUnavailableError } from '../../src/ledger/store/store.js';

const input = (k: number, simulated?: boolean): AppendInput => ({ kind: 'k', tsUtc: 't', payload: Buffer.from([k]), paeSha256: createHash('sha256').update(`p${k}`).digest(), sig: Buffer.from([k]), keyid: 'x', simulated });
const digest = (i: number, prev: Buffer, p: Buffer): Buffer => {
  const u = Buffer.alloc(8);
  u.writeBigUInt64BE(BigInt(i));
  return createHash('sha256').update('svc.khipu.node.v1\n').update(u).update(prev).update(p).digest();
};

describe('ledger store contract', () => {
  it('sequence chains a batch after the tip: indices from tip.size, links from tip.head (zero before genesis)', () => {
    const head = Buffer.alloc(32, 7);
    const nodes = sequence([input(0), input(1, true), input(2, false)], { size: 5, head });
    const d5 = digest(5, head, input(0).paeSha256);
    const d6 = digest(6, d5, input(1).paeSha256);
    expect(nodes.map((n) => [n.index, n.simulated])).to.deep.equal([[5, false], [6, true], [7, false]]);
    expect([nodes[0]!.prev.equals(head), nodes[0]!.nodeDigest.equals(d5), nodes[1]!.prev.equals(d5), nodes[1]!.nodeDigest.equals(d6), nodes[2]!.prev.equals(d6)]).to.deep.equal([true, true, true, true, true]);
    // at size 0 the head is ignored: genesis links to the zero digest
    const g = sequence([input(0)], { size: 0, head });
    expect(g[0]!.prev.equals(ZERO_DIGEST)).to.equal(true);
    expect(g[0]!.nodeDigest.equals(digest(0, ZERO_DIGEST, input(0).paeSha256))).to.equal(true);
    expect(sequence([], { size: 3, head })).to.deep.equal([]);
  });

  it('durableStatus: retry_after_s is the whole seconds left until the next attempt, only while UNAVAILABLE', () => {
    const realNow = Date.now;
    Date.now = () => 1_000_000;
    try {
      expect(durableStatus('UNAVAILABLE', 'down', 3, 1_002_001, 'ECONNREFUSED')).to.deep.equal({ configured: true, state: 'UNAVAILABLE', reason: 'down', recovery: { attempts: 3, retry_after_s: 3, last_error: 'ECONNREFUSED' } });
      expect(durableStatus('UNAVAILABLE', 'down', 1, 1_002_000, null).recovery.retry_after_s).to.equal(2);
      expect(durableStatus('UNAVAILABLE', 'down', 1, 999_000, null).recovery.retry_after_s).to.equal(0);
      expect(durableStatus('READY', 'ok', 0, 1_005_000, null).recovery.retry_after_s).to.equal(0);
      expect(durableStatus('CORRUPT', 'bad', 0, 1_005_000, 'x').recovery).to.deep.equal({ attempts: 0, retry_after_s: 0, last_error: 'x' });
    } finally {
      Date.now = realNow;
    }
    const e = new StoreUnavailableError('gone', 7);
    expect([e.message, e.retryAfterS, e instanceof Error]).to.deep.equal(['gone', 7, true]);
  });

  it('memory store: nothing to replay, a commit is the sequencing, no remote nodes, keys kept for the process', async () => {
    const s = new MemoryStore();
    expect([s.mode, s.scope]).to.deep.equal(['memory', 'PROCESS_MEMORY']);
    expect(await s.replay()).to.deep.equal({ nodes: 0, trimmed: null, corruptAt: null, ms: 0 });
    const head = Buffer.alloc(32, 1);
    const nodes = await s.commit([input(0), input(1)], { size: 2, head });
    expect(nodes.map((n) => n.nodeDigest.toString('hex'))).to.deep.equal(sequence([input(0), input(1)], { size: 2, head }).map((n) => n.nodeDigest.toString('hex')));
    expect(await s.readFrom()).to.deep.equal([]);
    expect(await s.loadKeys()).to.deep.equal([]);
    await s.recordKey('a', 'PEM A');
    await s.recordKey('b', 'PEM B');
    await s.recordKey('a', 'PEM A');
    expect(await s.loadKeys()).to.deep.equal(['PEM A', 'PEM B']);
    expect(s.status()).to.deep.equal({ configured: false, state: 'NOT_APPLICABLE', reason: 'memory mode: nothing is persisted', recovery: { attempts: 0, retry_after_s: 0, last_error: null } });
    await s.close();
  });
});
