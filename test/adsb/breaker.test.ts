import { expect } from 'chai';
import { Breaker, parseRetryAfter } from '../../src/adsb/breaker.js';

const policy = { breakerFailures: 3, breakerBaseMs: 30_000, breakerMaxMs: 600_000, rateLimitDefaultMs: 60_000, retryAfterMaxMs: 900_000, blockedMs: 900_000 };

describe('ADS-B circuit breaker', () => {
  it('opens after N consecutive transient failures, half-opens after the cool-down, closes on success', () => {
    const b = new Breaker(policy);
    b.onFailure('server_error', 0);
    b.onFailure('timeout', 1);
    expect(b.state(2)).to.equal('closed');
    b.onFailure('network', 2);
    expect(b.state(3)).to.equal('open');
    expect(b.canAttempt(30_001)).to.equal(false);
    expect(b.state(30_002)).to.equal('half-open');
    expect(b.canAttempt(30_002)).to.equal(true);
    b.onSuccess();
    expect(b.state(30_003)).to.equal('closed');
    expect(b.consecutiveFailures).to.equal(0);
  });

  it('a failed half-open trial reopens at once with a doubled cool-down, capped', () => {
    const b = new Breaker({ ...policy, breakerMaxMs: 100_000 });
    for (let i = 0; i < 3; i++) b.onFailure('bad_payload', 0);
    expect(b.openUntil).to.equal(30_000);
    b.onFailure('truncated', 30_000); // the trial
    expect(b.openUntil).to.equal(30_000 + 60_000);
    b.onFailure('timeout', 90_000);
    expect(b.openUntil).to.equal(90_000 + 100_000); // 120 s capped at 100 s
  });

  it('429/420 open at once for Retry-After (capped), else the default; 403 and other 4xx block', () => {
    const b = new Breaker(policy);
    b.onFailure('rate_limited', 1000, 120_000);
    expect(b.state(1000 + 119_999)).to.equal('open');
    expect(b.state(1000 + 120_000)).to.equal('half-open');
    const capped = new Breaker(policy);
    capped.onFailure('rate_limited', 0, 10 * 3_600_000);
    expect(capped.openUntil).to.equal(900_000);
    const dflt = new Breaker(policy);
    dflt.onFailure('rate_limited', 0, null);
    expect(dflt.openUntil).to.equal(60_000);
    const gated = new Breaker(policy);
    gated.onFailure('forbidden', 0);
    expect(gated.openUntil).to.equal(900_000);
    const misconfigured = new Breaker(policy);
    misconfigured.onFailure('client_error', 0);
    expect(misconfigured.state(1)).to.equal('open');
  });

  it('parses Retry-After as delay-seconds or an HTTP-date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).to.equal(120_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now)).to.equal(90_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 00:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter('-5', now)).to.equal(null);
    expect(parseRetryAfter(null, now)).to.equal(null);
  });
});
