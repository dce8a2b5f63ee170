import { expect } from 'chai';
import { IngestStore } from '../../src/cot/store.js';
import type { XmlElement } from '../../src/lib/cot/xml.js';

const EL: XmlElement = { name: 'event', prefix: '', local: 'event', uri: '', attrs: [], children: [] };
const ev = (uid: string, timeMs: number) => ({ uid, timeMs, event: EL, storedAt: '' });

describe('CoT ingest store', () => {
  it('keeps the newest event per uid and evicts the least recently stored beyond the cap', () => {
    const s = new IngestStore(2);
    expect(s.put(ev('a', 10))).to.deep.equal({ stored: true, reason: 'new', evicted: null });
    expect(s.put(ev('a', 10))).to.deep.equal({ stored: false, reason: 'not_newer_than_stored', evicted: null });
    expect(s.put(ev('a', 5)).stored).to.equal(false);
    s.put(ev('b', 1));
    expect(s.put(ev('a', 11))).to.deep.equal({ stored: true, reason: 'replaced_older', evicted: null });
    expect(s.put(ev('c', 1))).to.deep.equal({ stored: true, reason: 'new', evicted: 'b' });
    expect(s.list().map((e) => e.uid)).to.deep.equal(['a', 'c']);
    expect(s.size).to.equal(2);
  });
});
