import { expect } from 'chai';
import { IngestMirror, type MirroredEvent } from '../../src/cot/mirror.js';
import type { XmlElement } from '../../src/lib/cot/xml.js';

const EL: XmlElement = { name: 'event', prefix: '', local: 'event', uri: '', attrs: [], children: [] };
const row = (uid: string, seq: number, bytes = 10, valid = true): MirroredEvent => ({ uid, timeMs: seq, event: EL, storedAt: '', exported: { head: '', tail: '', valid }, bytes, seq });

describe('CoT mirror of the shared ingest table', () => {
  it('holds rows in storage order: a replaced uid moves last, and a row seen twice is applied once', () => {
    const m = new IngestMirror();
    for (const r of [row('a', 1), row('b', 2, 5, false), row('c', 3)]) m.apply(r);
    m.apply(row('a', 4, 20));
    m.apply(row('b', 2)); // the same row again (a catch-up overlapping another)
    expect(m.list().map((e) => e.uid)).to.deep.equal(['b', 'c', 'a']);
    expect([m.size, m.bytes, m.valid, m.seq]).to.deep.equal([3, 35, 2, 4]);
  });

  it('drops what the table evicted: every row older than the oldest one it still holds', () => {
    const m = new IngestMirror();
    for (const r of [row('a', 1), row('b', 2), row('c', 3), row('d', 4)]) m.apply(r);
    m.evictBelow(3);
    expect(m.list().map((e) => e.uid)).to.deep.equal(['c', 'd']);
    expect(m.bytes).to.equal(20);
    m.evictBelow(null);
    expect([m.size, m.bytes, m.valid]).to.deep.equal([0, 0, 0]);
  });

  it('adopts a reloaded copy whole, sequence included', () => {
    const m = new IngestMirror();
    m.apply(row('old', 7));
    const fresh = new IngestMirror();
    fresh.apply(row('x', 2));
    fresh.caughtUpTo(5);
    m.adopt(fresh);
    expect([m.list().map((e) => e.uid), m.seq, m.bytes]).to.deep.equal([['x'], 5, 10]);
  });
});
