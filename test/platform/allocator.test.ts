import { expect } from 'chai';
import { allocatorAdvice, allocatorFacts } from '../../src/platform/allocator.js';

describe('platform/allocator', () => {
  it('advises MALLOC_TOP_PAD_ on glibc when neither it nor the glibc tunable is set', () => {
    const advice = allocatorAdvice({ env: {}, glibc: '2.36' });
    expect(advice).to.match(/^glibc 2\.36 without MALLOC_TOP_PAD_: .* launch with MALLOC_TOP_PAD_=33554432/);
    expect(allocatorAdvice({ env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, glibc: '2.36' })).to.equal(advice);
  });

  it('is quiet when the pad is set either way, or when the allocator is not glibc', () => {
    expect(allocatorAdvice({ env: { MALLOC_TOP_PAD_: '33554432' }, glibc: '2.36' })).to.equal(null);
    expect(allocatorAdvice({ env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=2:glibc.malloc.top_pad=16777216' }, glibc: '2.39' })).to.equal(null);
    expect(allocatorAdvice({ env: {}, glibc: undefined })).to.equal(null);
  });

  it('reads the running process: its environment, and the glibc version its diagnostic report names', () => {
    const facts = allocatorFacts();
    expect(facts.env).to.equal(process.env);
    const header = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header;
    expect(facts.glibc).to.equal(header.glibcVersionRuntime);
    if (facts.glibc !== undefined) expect(facts.glibc).to.match(/^\d+\.\d+/);
  });
});
