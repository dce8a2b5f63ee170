/**
 * When the simulated flight runs: on one replica only (leadership), and in `on-demand` mode only
 * while somebody watches the stream (demand).
 */
import type { Context } from 'koa';
import type { WriteTokens } from '../http/write-guard.js';
import type { LedgerStore } from '../ledger/store/store.js';
import type { FlightRunner } from './flight-runner.js';
import type { StreamConfig } from './stream.config.js';

/**
 * Exactly one replica runs the simulated flight (postgres mode: a session advisory lock on a
 * dedicated connection). A replica with viewers that is not the leader keeps trying every few
 * seconds, so the flight moves when the leader's viewers leave or the leader dies; its verdicts
 * reach every replica's viewers through the shared ledger. Alone with its store, a process leads.
 */
export class FlightLeadership {
  private wanted = false;
  private retry: NodeJS.Timeout | null = null;
  leading = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly flight: FlightRunner,
    private readonly retryMs = 2000,
  ) {}

  want(): void {
    this.wanted = true;
    void this.attempt();
  }

  unwant(): void {
    this.wanted = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.flight.stop();
    this.leading = false;
    void this.store.resign?.('flight');
  }

  private async attempt(): Promise<void> {
    if (!this.wanted || this.leading) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const got = this.store.tryLead ? await this.store.tryLead('flight', () => this.lost()) : true;
    if (!this.wanted) {
      if (got) void this.store.resign?.('flight');
      return;
    }
    if (got) {
      this.leading = true;
      this.flight.start();
    } else {
      this.retry = setTimeout(() => void this.attempt(), this.retryMs);
      this.retry.unref();
    }
  }

  private lost(): void {
    this.leading = false;
    this.flight.stop();
    if (this.wanted) void this.attempt();
  }

  close(): void {
    this.unwant();
  }
}
/**
 * Counts the viewers that keep the flight running in `on-demand` mode: the first one wants it, the
 * last one leaving lets it go. The flight appends to the ledger, so with write tokens set only
 * viewers bearing one count.
 */
export class FlightDemand {
  private starters = 0;

  constructor(
    private readonly leadership: FlightLeadership,
    private readonly mode: StreamConfig['flight'],
    private readonly tokens: WriteTokens,
  ) {}

  watch(ctx: Context): void {
    const res = ctx.res;
    if (this.mode !== 'on-demand' || res.closed || (this.tokens.required && this.tokens.match(ctx.get('authorization')) === null)) return;
    if (++this.starters === 1) this.leadership.want();
    res.once('close', () => {
      if (--this.starters === 0) this.leadership.unwant();
    });
  }
}
