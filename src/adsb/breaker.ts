/**
 * One circuit breaker per upstream, so a provider that limits or fails us is left alone while the
 * next one serves. Rate limits and refusals open it at once for as long as the upstream asked (or a
 * fixed cool-down); transient failures open it after N in a row with a doubling cool-down. After
 * the cool-down one half-open trial decides. The clock is passed in, so tests move time instead of
 * sleeping.
 */
import type { AdsbOutcome } from '../isomorphic/wire/adsb.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerPolicy {
  breakerFailures: number;
  breakerBaseMs: number;
  breakerMaxMs: number;
  rateLimitDefaultMs: number;
  retryAfterMaxMs: number;
  blockedMs: number;
}

const TRANSIENT: ReadonlySet<AdsbOutcome> = new Set(['server_error', 'timeout', 'network', 'bad_payload', 'truncated', 'too_large']);

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3) → ms from now; null if unusable. */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // HTTP-dates always name a day or month; this keeps Date.parse from reading "-5" as a year
  const at = /[a-z]/i.test(v) ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

export class Breaker {
  consecutiveFailures = 0;
  /** Epoch ms until which no call is made; null while closed. */
  openUntil: number | null = null;
  /** Transient openings since the last success: the cool-down doubles with each. */
  private openings = 0;

  constructor(private readonly policy: BreakerPolicy) {}

  state(nowMs: number): BreakerState {
    if (this.openUntil === null) return 'closed';
    return nowMs < this.openUntil ? 'open' : 'half-open';
  }

  /** Closed, or open with its cool-down over (the half-open trial). */
  canAttempt(nowMs: number): boolean {
    return this.state(nowMs) !== 'open';
  }

  onSuccess(): void {
    this.consecutiveFailures = 0;
    this.openings = 0;
    this.openUntil = null;
  }

  /**
   * Another replica's breaker for the same provider is open until `untilMs` (a 429's Retry-After, a
   * 403, a cool-down): stay away as long. It never shortens an opening of our own, and it counts no
   * failure here, so this breaker's own doubling is untouched.
   */
  adoptBan(untilMs: number, nowMs: number): void {
    if (untilMs > nowMs && (this.openUntil === null || untilMs > this.openUntil)) this.openUntil = untilMs;
  }

  onFailure(outcome: AdsbOutcome, nowMs: number, retryAfterMs: number | null = null): void {
    const halfOpen = this.state(nowMs) === 'half-open';
    this.consecutiveFailures++;
    const p = this.policy;
    if (outcome === 'rate_limited') {
      this.openUntil = nowMs + Math.min(retryAfterMs ?? p.rateLimitDefaultMs, p.retryAfterMaxMs);
    } else if (outcome === 'forbidden' || outcome === 'client_error') {
      this.openUntil = nowMs + p.blockedMs;
    } else if (TRANSIENT.has(outcome) && (halfOpen || this.consecutiveFailures >= p.breakerFailures)) {
      this.openUntil = nowMs + Math.min(p.breakerBaseMs * 2 ** this.openings, p.breakerMaxMs);
      this.openings++;
    }
  }
}
