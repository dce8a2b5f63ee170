import { expect } from 'chai';
import { getHeapStatistics } from 'node:v8';
import { FULL_GROWTH_HEAP_MB, heapLimitAdvice, heapLimitMb } from '../../src/platform/heap-limit.js';

describe('platform/heap-limit', () => {
  it('advises a larger main-thread heap limit only below the 2048 MB at which V8 grows a heap 4x', () => {
    expect(FULL_GROWTH_HEAP_MB).to.equal(2048);
    expect(heapLimitAdvice(560)).to.equal('main-thread heap limit 560 MB: under 2048 MB V8 runs full collections several times as often under load (at 512 MB: 4-8x as many, up to twice the p99 latency); where the memory is there, launch with NODE_OPTIONS=--max-old-space-size=2048');
    expect(heapLimitAdvice(2047.6)).to.match(/^main-thread heap limit 2048 MB: under 2048 MB/);
    expect(heapLimitAdvice(2048)).to.equal(null);
    expect(heapLimitAdvice(4144)).to.equal(null);
  });

  it('reads the limit V8 reports for this thread', () => {
    expect(heapLimitMb()).to.equal(getHeapStatistics().heap_size_limit / 2 ** 20);
  });
});
