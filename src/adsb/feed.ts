/**
 * The ADS-B cache: one global military snapshot owned by the main thread, refreshed lazily (no
 * polling while nobody asks) and single-flight (concurrent requests share one walk over the
 * providers). Providers are tried one at a time, in order, behind their breakers; the first valid
 * payload wins and snapshots never mix providers.
 *
 * `live` means "fetched successfully less than `freshMs` ago" — the evidence claim
 * `adsb-never-synthetic` checks exactly that, so there is no stale-while-revalidate window that
 * would call an older snapshot live. Past freshness a request waits for the shared refresh (at most
 * `waitBudgetMs`); if it fails the last snapshot is served with live=false until `staleMaxMs`, then
 * nothing. Aircraft only ever come from an upstream payload.
 */
import type { AdsbConfig, AdsbProvider } from './adsb.config.js';
import { Breaker } from './breaker.js';
import type { AdsbAircraft, AdsbAnswer, AdsbAttempt, AdsbDropped, AdsbReason, AdsbUpstreamState } from '../isomorphic/wire/adsb.js';
import { SingleFlight } from '../lib/single-flight.js';
import type { SharedRefresh, SharedState } from './shared-refresh.js';
import { attemptProvider, type AttemptResult } from './upstream.js';

/** The feed's state, published by the ADS-B plugin and read by health, posture and evidence views. */
export interface AdsbStatus {
  live: boolean;
  /** Age of the snapshot being served, null before the first successful fetch. */
  snapshotAgeS: number | null;
  aircraft: number;
  providers: {
    name: string;
    url: string;
    breaker: 'closed' | 'open' | 'half-open';
    consecutiveFailures: number;
    lastOkAt: string | null;
    lastError: string | null;
    lastStatus: number | null;
  }[];
}

export interface Snapshot {
  provider: string;
  url: string;
  attribution: string;
  fetchedAtMs: number;
  upstreamNowMs: number | null;
  upstreamTotal: number;
  aircraft: AdsbAircraft[];
  dropped: AdsbDropped;
}

export interface FeedAnswer {
  live: boolean;
  reason: AdsbReason;
  /** The snapshot whose aircraft may be served; null when none may be. */
  snapshot: Snapshot | null;
  ageS: number | null;
  /** Attempts of the most recent completed refresh. */
  attempts: AdsbAttempt[];
}

interface ProviderState {
  cfg: AdsbProvider;
  breaker: Breaker;
  lastCallAt: number | null;
  lastOkAt: number | null;
  lastError: string | null;
  lastStatus: number | null;
}

export interface FeedOptions {
  userAgent: string;
  /** Injected clock (epoch ms); tests move it instead of sleeping. */
  now?: () => number;
  /** Called once per real upstream call (metrics). */
  onAttempt?: (provider: string, result: AttemptResult) => void;
  /** Replicas on one database share each refresh and each provider's ban (shared-refresh.ts). */
  shared?: SharedRefresh;
  log?: { warn(obj: object, msg: string): void };
}

/** How refreshes are coordinated, for the response and readiness: shared, or this process alone. */
/** POSTGRES only: state UNAVAILABLE while the shared cache cannot be reached (this replica refreshes alone). */
export type RefreshScope = AdsbAnswer['refresh'];

export class AdsbFeed {
  private snapshot: Snapshot | null = null;
  private readonly refreshes = new SingleFlight<void>();
  private lastRefreshOk: boolean | null = null;
  /** When the last refresh ended (this replica's or, shared, any replica's). */
  private lastRefreshAt: number | null = null;
  private sharedError: string | null = null;
  private sharedUsed = false;
  private lastAttempts: AdsbAttempt[] = [];
  readonly providers: ProviderState[];
  private readonly now: () => number;
  /** Real upstream calls made since start (tests count them). */
  upstreamCalls = 0;
  private readonly snapshotListeners = new Set<(s: Snapshot) => void>();

  constructor(
    private readonly cfg: Readonly<AdsbConfig>,
    private readonly opts: FeedOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.providers = cfg.providers.map((p) => ({ cfg: p, breaker: new Breaker(cfg), lastCallAt: null, lastOkAt: null, lastError: null, lastStatus: null }));
  }

  async read(): Promise<FeedAnswer> {
    if (!this.cfg.enabled) return { live: false, reason: 'disabled', snapshot: null, ageS: null, attempts: [] };
    if (this.isFresh()) return this.answer(false);
    const refresh = this.refresh();
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<'budget'>((resolve) => {
      timer = setTimeout(() => resolve('budget'), this.cfg.waitBudgetMs);
      timer.unref();
    });
    const first = await Promise.race([refresh.then(() => 'done' as const), budget]);
    clearTimeout(timer);
    return this.answer(first === 'budget');
  }

  /**
   * Called with each new snapshot once it is the one served: fetched here, or adopted from another
   * replica. A listener runs inside the refresh, so it must return at once and never throw.
   */
  onSnapshot(listener: (s: Snapshot) => void): () => void {
    this.snapshotListeners.add(listener);
    return () => this.snapshotListeners.delete(listener);
  }

  private published(s: Snapshot): void {
    for (const l of this.snapshotListeners) l(s);
  }

  /** The state the ADS-B plugin provides to health, evidence and readiness. */
  status(): AdsbStatus {
    const now = this.now();
    const age = this.ageMs(now);
    const servable = age !== null && age <= this.cfg.staleMaxMs;
    return {
      live: this.isFresh(now),
      snapshotAgeS: age === null ? null : round1(age / 1000),
      aircraft: servable ? this.snapshot!.aircraft.length : 0,
      providers: this.providers.map((p) => ({
        name: p.cfg.name,
        url: p.cfg.url,
        breaker: p.breaker.state(now),
        consecutiveFailures: p.breaker.consecutiveFailures,
        lastOkAt: p.lastOkAt === null ? null : new Date(p.lastOkAt).toISOString(),
        lastError: p.lastError,
        lastStatus: p.lastStatus,
      })),
    };
  }

  /** Per-provider breaker detail for the response body. */
  upstreams(): AdsbUpstreamState[] {
    const now = this.now();
    return this.providers.map((p) => ({
      name: p.cfg.name,
      url: p.cfg.url,
      breaker: p.breaker.state(now),
      open_until: p.breaker.openUntil === null ? null : new Date(p.breaker.openUntil).toISOString(),
      consecutive_failures: p.breaker.consecutiveFailures,
      last_ok_at: p.lastOkAt === null ? null : new Date(p.lastOkAt).toISOString(),
      last_status: p.lastStatus,
      last_error: p.lastError,
    }));
  }

  get snapshotProvider(): string | null {
    return this.snapshot?.provider ?? null;
  }

  ageMs(now = this.now()): number | null {
    return this.snapshot ? Math.max(0, now - this.snapshot.fetchedAtMs) : null;
  }

  private isFresh(now = this.now()): boolean {
    const age = this.ageMs(now);
    return this.lastRefreshOk === true && age !== null && age <= this.cfg.freshMs;
  }

  private answer(pending: boolean): FeedAnswer {
    const now = this.now();
    const age = this.ageMs(now);
    const ageS = age === null ? null : round1(age / 1000);
    const attempts = this.lastAttempts;
    if (this.isFresh(now)) return { live: true, reason: 'fresh', snapshot: this.snapshot, ageS, attempts };
    if (age !== null && age <= this.cfg.staleMaxMs) {
      return { live: false, reason: pending ? 'refresh_pending_serving_last_snapshot' : 'upstream_failed_serving_last_snapshot', snapshot: this.snapshot, ageS, attempts };
    }
    if (age !== null) return { live: false, reason: 'snapshot_expired', snapshot: null, ageS, attempts };
    return { live: false, reason: pending ? 'refresh_pending' : 'no_snapshot', snapshot: null, ageS: null, attempts };
  }

  /** Whether refreshes are shared with other replicas, and whether that works right now. */
  refreshScope(): RefreshScope {
    if (!this.opts.shared) return { scope: 'LOCAL', state: null, error: null };
    return { scope: this.opts.shared.kind, state: !this.sharedUsed ? null : this.sharedError === null ? 'OK' : 'UNAVAILABLE', error: this.sharedError };
  }

  private refresh(): Promise<void> {
    const shared = this.opts.shared;
    return this.refreshes.run(() => (shared ? this.sharedRefresh(shared) : this.walk()));
  }

  /**
   * The replicas' one refresh: adopt what another replica fetched if it is fresh; otherwise fetch
   * under the shared lock, or, when another replica holds it, wait for its result. The shared cache
   * unreachable: this replica walks the providers alone (at most one call per replica per refresh),
   * says so in `refreshScope()`, and the ledger never notices.
   */
  private async sharedRefresh(shared: SharedRefresh): Promise<void> {
    this.sharedUsed = true;
    let walked = false;
    try {
      const seen = await shared.read(this.snapshotAt());
      this.adopt(seen);
      if (!this.isFresh()) {
        const outcome = await shared.tryRefresh(this.snapshotAt(), async (inside) => {
          this.adopt(inside);
          if (this.isFresh()) return null;
          walked = true;
          await this.walk();
          return this.exportState();
        });
        if (outcome === 'busy') await this.awaitOtherReplica(shared, seen.refreshedAtMs);
      }
      this.sharedError = null;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (this.sharedError === null) this.opts.log?.warn({ err: message }, 'adsb: shared refresh unavailable, refreshing from this replica alone');
      this.sharedError = message;
      if (!walked) await this.walk();
    }
  }

  /** Another replica is fetching: follow the shared state until its refresh ends, at most one fetch's budget. */
  private async awaitOtherReplica(shared: SharedRefresh, seenAt: number | null): Promise<void> {
    const deadline = Date.now() + this.cfg.timeoutMs * this.providers.length + 1000;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, SHARED_POLL_MS));
      const s = await shared.read(this.snapshotAt());
      this.adopt(s);
      if (s.refreshedAtMs !== seenAt) return;
    }
  }

  private snapshotAt(): number | null {
    return this.snapshot?.fetchedAtMs ?? null;
  }

  /** Takes another replica's newer snapshot, its newer refresh result, and every provider ban. */
  private adopt(s: SharedState): void {
    const now = this.now();
    for (const p of this.providers) {
      const until = s.bans[p.cfg.name];
      if (until !== undefined) p.breaker.adoptBan(until, now);
    }
    if (s.snapshot && (this.snapshot === null || s.snapshot.fetchedAtMs > this.snapshot.fetchedAtMs)) {
      this.snapshot = s.snapshot;
      this.published(s.snapshot);
    }
    if (s.refreshedAtMs !== null && (this.lastRefreshAt === null || s.refreshedAtMs > this.lastRefreshAt)) {
      this.lastRefreshAt = s.refreshedAtMs;
      this.lastRefreshOk = s.refreshOk;
      this.lastAttempts = s.attempts;
    }
  }

  private exportState(): SharedState {
    const now = this.now();
    const bans: Record<string, number> = {};
    for (const p of this.providers) if (p.breaker.openUntil !== null && p.breaker.openUntil > now) bans[p.cfg.name] = p.breaker.openUntil;
    return {
      refreshedAtMs: this.lastRefreshAt,
      refreshOk: this.lastRefreshOk,
      attempts: this.lastAttempts,
      bans,
      snapshotAtMs: this.snapshotAt(),
      snapshot: this.snapshot,
    };
  }

  /** One provider at a time: parallel calls are what trips the public aggregators' limits. */
  private async walk(): Promise<void> {
    const attempts: AdsbAttempt[] = [];
    for (const p of this.providers) {
      const now = this.now();
      const at = new Date(now).toISOString();
      const skip = (outcome: AdsbAttempt['outcome']) => attempts.push({ upstream: p.cfg.name, outcome, http_status: null, ms: null, at, error: null });
      if (!p.breaker.canAttempt(now)) {
        skip('skipped_breaker_open');
        continue;
      }
      if (p.lastCallAt !== null && now - p.lastCallAt < this.cfg.minIntervalMs) {
        skip('skipped_min_interval');
        continue;
      }
      p.lastCallAt = now;
      this.upstreamCalls++;
      const r = await attemptProvider({
        provider: p.cfg.name,
        url: p.cfg.url,
        timeoutMs: this.cfg.timeoutMs,
        maxBodyBytes: this.cfg.maxBodyBytes,
        maxPositionAgeS: this.cfg.maxPositionAgeS,
        userAgent: this.opts.userAgent,
        now: this.now,
      });
      this.opts.onAttempt?.(p.cfg.name, r);
      attempts.push({ upstream: p.cfg.name, outcome: r.outcome, http_status: r.httpStatus, ms: r.ms, at, error: r.error });
      p.lastStatus = r.httpStatus;
      const done = this.now();
      if (r.snapshot) {
        p.breaker.onSuccess();
        p.lastOkAt = done;
        p.lastError = null;
        const s = r.snapshot;
        this.snapshot = { provider: p.cfg.name, url: p.cfg.url, attribution: p.cfg.attribution, fetchedAtMs: done, upstreamNowMs: s.upstreamNowMs, upstreamTotal: s.upstreamTotal, aircraft: s.aircraft, dropped: s.dropped };
        this.lastRefreshOk = true;
        this.lastAttempts = attempts;
        this.lastRefreshAt = done;
        this.published(this.snapshot);
        return;
      }
      p.breaker.onFailure(r.outcome, done, r.retryAfterMs);
      p.lastError = r.error;
    }
    this.lastRefreshOk = false;
    this.lastAttempts = attempts;
    this.lastRefreshAt = this.now();
  }
}

/** How often a replica waiting for another's fetch looks at the shared state. */
const SHARED_POLL_MS = 100;

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
