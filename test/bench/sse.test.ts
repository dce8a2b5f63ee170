import { expect } from 'chai';
import { describeSse, histogramP99, type SseRow } from '../../bench/sse.js';

/** One scrape's samples of an unlabelled histogram, as bench/lib.ts scrapeMetrics keys them. */
function scrape(name: string, cumulative: Record<string, number>): Map<string, number> {
  return new Map(Object.entries(cumulative).map(([le, n]) => [`${name}_bucket{le="${le}"}`, n]));
}

const NAME = 'svc_sse_fanout_seconds';

const row = (over: Partial<SseRow>): SseRow => ({
  viewers: 10,
  refused: 0,
  events: 3,
  missed: 0,
  ageP50Ms: 4,
  ageP99Ms: 9,
  spreadP99Ms: 2,
  serverFanoutP99Ms: 5,
  serverFanoutP99Over: false,
  rssBeforeMb: 100.4,
  rssAfterMb: 120.6,
  ...over,
});

describe('bench sse: the server fan-out p99 from the target /metrics', () => {
  it('is the first bucket bound holding 99 % of the observations', () => {
    // 200 observations: 99 % is 198, first reached at le=0.005
    const samples = scrape(NAME, { '0.001': 100, '0.0025': 150, '0.005': 198, '0.01': 200, '+Inf': 200 });
    expect(histogramP99(samples, NAME)).to.deep.equal({ ms: 5, over: false });
  });

  it('is null when /metrics gave nothing, or the histogram holds no observation', () => {
    expect(histogramP99(new Map(), NAME)).to.equal(null);
    expect(histogramP99(new Map([['process_resident_memory_bytes', 1e8]]), NAME)).to.equal(null);
    expect(histogramP99(scrape(NAME, { '0.001': 0, '0.25': 0, '+Inf': 0 }), NAME)).to.equal(null);
  });

  it('lies above the largest finite bound when the p99 falls in the +Inf bucket', () => {
    const samples = scrape(NAME, { '0.1': 50, '0.25': 90, '+Inf': 100 });
    expect(histogramP99(samples, NAME)).to.deep.equal({ ms: 250, over: true });
  });

  it('prints "n/a (no sample)" rather than NaN, "<=" a bound, or ">" the largest bound', () => {
    const text = (r: SseRow) => describeSse(r);
    expect(text(row({}))).to.equal(
      'events 3, missed deliveries 0, event age at arrival p50 4 ms / p99 9 ms, fan-out spread p99 2 ms (client side), server fan-out p99 <= 5 ms, RSS 100 -> 121 MB',
    );
    expect(text(row({ serverFanoutP99Ms: null, rssBeforeMb: NaN, rssAfterMb: NaN }))).to.include('server fan-out p99 n/a (no sample), RSS n/a (no /metrics)').and.not.include('NaN');
    expect(text(row({ serverFanoutP99Ms: 250, serverFanoutP99Over: true }))).to.include('server fan-out p99 > 250 ms,');
  });
});
