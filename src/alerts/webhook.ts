/**
 * The alert webhook: each alert POSTed as JSON, off the verdict path (started on a later turn of
 * the event loop), with a timeout, one retry, a token bucket and a bound on deliveries in flight.
 * What cannot go is counted, never queued.
 */
import { TokenBucket } from './token-bucket.js';

export type DeliveryOutcome = 'sent' | 'failed' | 'dropped_rate_limited' | 'dropped_busy';

export interface WebhookOptions {
  url: string;
  perMinute: number;
  timeoutMs: number;
  inFlightMax: number;
  onOutcome?: (outcome: DeliveryOutcome) => void;
  log?: { warn(obj: object, msg: string): void };
  now?: () => number;
}

export interface WebhookCounts {
  sent: number;
  failed: number;
  dropped_rate_limited: number;
  dropped_busy: number;
}

export class Webhook {
  readonly counts: WebhookCounts = { sent: 0, failed: 0, dropped_rate_limited: 0, dropped_busy: 0 };
  private readonly bucket: TokenBucket;
  private inFlight = 0;
  private readonly pending = new Set<Promise<void>>();
  private closed = false;

  constructor(private readonly opts: WebhookOptions) {
    this.bucket = new TokenBucket(opts.perMinute, opts.now);
  }

  /** Hands an alert over; returns at once, whatever becomes of the delivery. */
  send(alert: object): void {
    if (this.closed) return;
    if (this.inFlight >= this.opts.inFlightMax) return this.count('dropped_busy');
    if (!this.bucket.take()) return this.count('dropped_rate_limited');
    this.inFlight++;
    const body = JSON.stringify(alert);
    const done = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.deliver(body))
      .then((outcome) => this.count(outcome))
      .finally(() => {
        this.inFlight--;
        this.pending.delete(done);
      });
    this.pending.add(done);
  }

  /** Deliveries under way (tests wait for them to end). */
  get busy(): number {
    return this.inFlight;
  }

  /** Stops taking alerts and waits for the deliveries under way (each ends within its timeouts). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending]);
  }

  private count(outcome: DeliveryOutcome): void {
    this.counts[outcome]++;
    this.opts.onOutcome?.(outcome);
  }

  private async deliver(body: string): Promise<'sent' | 'failed'> {
    let error = '';
    // one retry: a receiver restarting is worth a second try, a dead one is not worth more
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const res = await fetch(this.opts.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: AbortSignal.timeout(this.opts.timeoutMs) });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return 'sent';
        error = `HTTP ${res.status}`;
        // a 4xx will not change on a retry
        if (res.status < 500) break;
      } catch (err) {
        error = (err as Error).message;
      }
    }
    this.opts.log?.warn({ err: error }, 'alerts: webhook delivery failed');
    return 'failed';
  }
}
