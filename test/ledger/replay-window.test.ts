/** The replay window's search: bounded reads whatever the ledger's size, nearly sorted times handled. */
import { expect } from 'chai';
import type { LedgerNode } from '../../src/ledger/ledger.js';
import { RECEIPT_KIND } from '../../src/ledger/receipt.js';
import { replayWindow, SCAN_BACK, WINDOW_SLACK, type NodeReader } from '../../src/ledger/replay-window.js';

/** A reader over nodes whose times (ms) and kinds are given; counts its reads. */
function reader(times: number[], kinds: string[] = []): NodeReader & { reads: number } {
  const r = {
    reads: 0,
    size: times.length,
    get(i: number): LedgerNode | undefined {
      r.reads++;
      return { index: i, kind: kinds[i] ?? RECEIPT_KIND, tsUtc: new Date(times[i]!).toISOString() } as LedgerNode;
    },
  };
  return r;
}

const T0 = Date.UTC(2026, 0, 1);

describe('src/ledger/replay-window', () => {
  it('a million nodes, one a second: the last 10 minutes read at most limit + a few dozen nodes', () => {
    const n = 1_000_000;
    const times = Array.from({ length: n }, (_, i) => T0 + i * 1000);
    const now = times.at(-1)!;
    const r = reader(times);
    const w = replayWindow(r, 10, 5000, now);
    // times[i] >= now - 600 s  ⇔  i >= n - 601
    expect(w.nodes.map((x) => x.index)).to.deep.equal(Array.from({ length: 601 }, (_, k) => n - 601 + k));
    expect(w.truncated).to.equal(false);
    expect(r.reads).to.equal(w.reads);
    expect(r.reads).to.be.at.most(601 + Math.ceil(Math.log2(n)) + SCAN_BACK + 1);
  });

  it('truncated: the newest `limit`, with reads bounded by limit + the constants', () => {
    const n = 100_000;
    const times = Array.from({ length: n }, (_, i) => T0 + i * 10);
    const r = reader(times);
    const w = replayWindow(r, 60, 100, times.at(-1)!);
    expect(w.nodes.map((x) => x.index)).to.deep.equal(Array.from({ length: 100 }, (_, k) => n - 100 + k));
    expect(w.truncated).to.equal(true);
    expect(r.reads).to.be.at.most(100 + Math.ceil(Math.log2(n)) + 2 * SCAN_BACK + 1);
  });

  it('non-receipt nodes are skipped, and past the slack the window stops and says it is truncated', () => {
    const n = 1000;
    const times = Array.from({ length: n }, () => T0);
    const kinds = Array.from({ length: n }, (_, i) => (i % 100 === 0 ? RECEIPT_KIND : 'other'));
    const r = reader(times, kinds);
    const w = replayWindow(r, 1, 5, T0);
    expect(w.nodes.length).to.be.at.most(5);
    expect(w.truncated).to.equal(true);
    expect(r.reads).to.be.at.most(5 + WINDOW_SLACK + Math.ceil(Math.log2(n)) + 2 * SCAN_BACK + 1);
    for (const x of w.nodes) expect(x.index % 100).to.equal(0);
  });

  it('replicas\u2019 nearly sorted times: a node inside the window just before the search\u2019s answer is found', () => {
    // 0..99 old, 100 inside, 101 old again (another replica's append, a little behind), then inside
    const times = Array.from({ length: 200 }, (_, i) => (i < 100 ? T0 : T0 + 120_000));
    times[100] = T0 + 120_000;
    times[101] = T0;
    const w = replayWindow(reader(times), 1, 5000, T0 + 150_000);
    expect(w.nodes.map((x) => x.index)).to.deep.equal([100, ...Array.from({ length: 98 }, (_, k) => 102 + k)]);
  });

  it('the window\u2019s edge is inclusive: a node exactly `minutes` old is in, one a millisecond older is out', () => {
    const now = T0 + 3_600_000;
    const w = replayWindow(reader([now - 600_001, now - 600_000, now]), 10, 10, now);
    expect(w.nodes.map((x) => x.index)).to.deep.equal([1, 2]);
  });
});
