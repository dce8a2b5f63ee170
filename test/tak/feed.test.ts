/** The live tracks with a fake clock: resent before stale while they live, never again once they end. */
import { expect } from 'chai';
import { TakFeed } from '../../src/tak/feed.js';
import type { CotOut } from '../../src/tak/output.js';
import type { TrackSpec } from '../../src/tak/events.js';

const T0 = Date.parse('2026-11-29T07:00:00.000Z');
const spec = (uid: string, lat = 1): TrackSpec => ({ uid, type: 'a-f-A-M', how: 'm-g', startMs: T0, lat, lon: 2, hae: 9_999_999, ce: 9_999_999, le: 9_999_999, detail: [] });

function harness(maxTracks = 100) {
  let now = T0;
  const sent: CotOut[] = [];
  const feed = new TakFeed({ staleS: 60, resendS: 20, maxTracks, now: () => now, send: (e) => sent.push(e) });
  /** Advance the clock a second at a time, ticking each second, as the feature's timer does. */
  const advance = (s: number) => {
    for (let i = 0; i < s; i++) {
      now += 1000;
      feed.tick();
    }
  };
  return { feed, sent, advance, uids: () => sent.map((e) => e.fields.uid), at: () => now };
}

describe('TAK feed', () => {
  it('a verdict track is resent every resendS, each send fresh until now + staleS, then ends staleS after its last report', () => {
    const h = harness();
    h.feed.report('verdict', spec('svc-verdict-a'));
    h.advance(59);
    // sent at 0, resent at 20 and 40: every send is before the previous one's stale
    expect(h.sent.map((e) => (e.fields.timeMs - T0) / 1000)).to.deep.equal([0, 20, 40]);
    for (let i = 1; i < h.sent.length; i++) expect(h.sent[i]!.fields.timeMs).to.be.below(h.sent[i - 1]!.fields.staleMs);
    expect(h.sent.map((e) => e.fields.staleMs - e.fields.timeMs)).to.deep.equal([60_000, 60_000, 60_000]);
    h.advance(1);
    expect(h.feed.has('svc-verdict-a')).to.equal(false);
    h.advance(120);
    expect(h.sent).to.have.length(3);
    expect(h.feed.stats()).to.include({ live: 0, ended: 1, resent: 2 });
  });

  it('a new report keeps a track alive and restarts its resend period', () => {
    const h = harness();
    h.feed.report('verdict', spec('v'));
    h.advance(50);
    h.feed.report('verdict', spec('v', 5));
    h.advance(50);
    expect(h.feed.has('v')).to.equal(true);
    expect(h.sent.map((e) => [(e.fields.timeMs - T0) / 1000, e.fields.lat])).to.deep.equal([[0, 1], [20, 1], [40, 1], [50, 5], [70, 5], [90, 5]]);
  });

  it('an aircraft absent from the next snapshot is never sent again; one still present is', () => {
    const h = harness();
    h.feed.report('aircraft', spec('ICAO-A'));
    h.feed.report('aircraft', spec('ICAO-B'));
    h.feed.report('verdict', spec('svc-verdict-x'));
    h.advance(10);
    h.feed.report('aircraft', spec('ICAO-A'));
    h.feed.keepAircraft(new Set(['ICAO-A']));
    h.advance(45);
    // A reported at 10 is resent at 30 and 50; the verdict at 20 and 40; B never again
    expect(h.uids()).to.deep.equal(['ICAO-A', 'ICAO-B', 'svc-verdict-x', 'ICAO-A', 'svc-verdict-x', 'ICAO-A', 'svc-verdict-x', 'ICAO-A']);
    expect(h.feed.has('ICAO-B')).to.equal(false);
    expect(h.feed.has('svc-verdict-x')).to.equal(true);
  });

  it('a relayed event is resent unchanged until its own stale time, and one already stale is not sent', () => {
    const h = harness();
    const ev = (uid: string, staleMs: number): CotOut => ({ xml: `<event uid="${uid}"/>`, fields: { uid, type: 'a-f-G', how: 'h-e', timeMs: T0, startMs: T0, staleMs, lat: 0, lon: 0, hae: 0, ce: 0, le: 0, detailXml: '' } });
    h.feed.relay(ev('old', T0));
    h.feed.relay(ev('r', T0 + 45_000));
    h.advance(100);
    expect(h.sent.map((e) => [e.fields.uid, e.xml])).to.deep.equal([['r', '<event uid="r"/>'], ['r', '<event uid="r"/>'], ['r', '<event uid="r"/>']]);
    expect(h.feed.has('r')).to.equal(false);
  });

  it('holds at most maxTracks: the least recently updated is forgotten first', () => {
    const h = harness(2);
    h.feed.report('verdict', spec('a'));
    h.feed.report('verdict', spec('b'));
    h.feed.report('verdict', spec('a'));
    h.feed.report('verdict', spec('c'));
    expect(['a', 'b', 'c'].map((u) => h.feed.has(u))).to.deep.equal([true, false, true]);
    expect(h.feed.stats()).to.include({ live: 2, evicted: 1 });
  });
});
