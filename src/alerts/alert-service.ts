/**
 * Zone entry alerts. Drones: every verdict's fix is tested against the watched zones, and the
 * verdict that first placed a track inside a zone is the alert's signed record. Aircraft: every
 * new ADS-B snapshot is tested, and an aircraft inside a zone it was not inside in the previous
 * snapshot is decided as a verdict from its own reported fields only, whose ledger node is the
 * alert's record. Alerts are bounded per snapshot and per minute; what exceeds a bound is counted.
 */
import type { Snapshot } from '../adsb/feed.js';
import type { AdsbAircraft } from '../isomorphic/wire/adsb.js';
import { Ring } from '../lib/ring.js';
import { telemetryFrameSchema, type TelemetryFrame } from '../verdicts/telemetry.js';
import type { Verdict, VerdictService } from '../verdicts/verdict-service.js';
import type { AlertsConfig } from './alerts.config.js';
import type { AlertsMetrics } from './alerts.metrics.js';
import { EntryTracker } from './entry-tracker.js';
import { TokenBucket } from './token-bucket.js';
import type { Webhook } from './webhook.js';
import type { Zones } from './zones.js';

export type AlertKind = 'aircraft' | 'drone';

export interface Alert {
  seq: number;
  kind: AlertKind;
  /** The drone's track_id, or the aircraft's ICAO hex. */
  target_id: string;
  zone: string;
  /** RFC 3339: the verdict's time (drones), the snapshot's fetch time (aircraft). */
  entered_at: string;
  lat: number;
  lon: number;
  alt_m: number | null;
  /** The signed verdict that placed the target in the zone. */
  ledger_index: number;
  decision: 'ALLOW' | 'REVIEW' | 'DENY';
  /** The verdict came from the simulated flight. */
  simulated: boolean;
}

export interface Suppressed {
  per_snapshot: number;
  per_minute: number;
  not_recorded: number;
}

/** 1 ft in metres (international foot) and 1 kt in m/s (1852 m / 3600 s, rounded as documented). */
export const FT_TO_M = 0.3048;
export const KT_TO_MPS = 0.514444;

export interface AlertServiceOptions {
  cfg: Readonly<AlertsConfig>;
  zones: Zones;
  verdicts: Pick<VerdictService, 'decideAll'>;
  webhook: Webhook | null;
  metrics: AlertsMetrics;
  log: { warn(obj: object, msg: string): void };
  now?: () => number;
}

/**
 * The verdict frame of an aircraft: only what it reported (ICAO hex, position, barometric altitude,
 * ground speed, track) and the snapshot's time; a value outside what a frame may carry is left out.
 */
export function aircraftFrame(ac: AdsbAircraft, snapshotAtMs: number): TelemetryFrame {
  const frame: TelemetryFrame = { track_id: ac.hex, source: 'ADS-B', lat: ac.lat, lon: ac.lon, ts_utc: new Date(snapshotAtMs).toISOString() };
  if (typeof ac.alt_baro_ft === 'number') frame.alt_m = ac.alt_baro_ft * FT_TO_M;
  if (typeof ac.ground_speed_kt === 'number') frame.speed_mps = ac.ground_speed_kt * KT_TO_MPS;
  if (typeof ac.track_deg === 'number') frame.heading_deg = ac.track_deg;
  for (const k of ['alt_m', 'speed_mps', 'heading_deg'] as const) {
    if (frame[k] !== undefined && telemetryFrameSchema.extract(k).validate(frame[k]).error) delete frame[k];
  }
  return frame;
}

export class AlertService {
  private readonly ring: Ring<Alert>;
  private seq = 0;
  private readonly drones: EntryTracker;
  private readonly aircraft: EntryTracker;
  private previousAircraft: string[] = [];
  private readonly perMinute: TokenBucket;
  /** Frames this service decided: their verdicts are aircraft alerts already, not drone sightings. */
  private readonly own = new WeakSet<TelemetryFrame>();
  private readonly decisions = new Set<Promise<void>>();
  readonly suppressed: Suppressed = { per_snapshot: 0, per_minute: 0, not_recorded: 0 };
  private readonly now: () => number;

  constructor(private readonly opts: AlertServiceOptions) {
    this.now = opts.now ?? Date.now;
    this.ring = new Ring<Alert>(opts.cfg.ringSize);
    this.drones = new EntryTracker(opts.cfg.debounceMs);
    this.aircraft = new EntryTracker(opts.cfg.debounceMs);
    this.perMinute = new TokenBucket(opts.cfg.maxPerMinute, this.now);
  }

  get zones(): Zones {
    return this.opts.zones;
  }

  /** Alerts with seq > `after`, oldest first, at most `limit`. */
  after(after: number, limit: number): Alert[] {
    const all = this.ring.toArray();
    if (all.length === 0) return [];
    const from = Math.max(0, after + 1 - all[0]!.seq);
    return all.slice(from, from + limit);
  }

  /** The newest alert's seq (0 before the first). */
  get newestSeq(): number {
    return this.seq;
  }

  /** A verdict listener: runs inside the verdict's append, so it only tests and records (the webhook goes later). */
  onVerdict(v: Verdict): void {
    if (this.own.has(v.frame)) return;
    try {
      const { frame, node } = v;
      const t = this.now();
      for (const zone of this.drones.observe(frame.track_id, this.opts.zones.containing(frame), t)) {
        if (!this.admit()) continue;
        this.drones.alerted(frame.track_id, zone, t);
        this.raise({ kind: 'drone', target_id: frame.track_id, zone, entered_at: node.tsUtc, lat: frame.lat, lon: frame.lon, alt_m: frame.alt_m ?? null, ledger_index: node.index, decision: v.evaluation.decision, simulated: v.simulated });
      }
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'alerts: a verdict could not be tested against the zones');
    }
  }

  /** A snapshot listener: finds the entries now, decides their verdicts in one batch without blocking the feed. */
  onSnapshot(snap: Snapshot): void {
    try {
      this.entriesOf(snap);
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'alerts: an ADS-B snapshot could not be tested against the zones');
    }
  }

  private entriesOf(snap: Snapshot): void {
    const t = this.now();
    const seen = new Set<string>();
    const entries: { ac: AdsbAircraft; zones: string[] }[] = [];
    let over = 0;
    for (const ac of snap.aircraft) {
      seen.add(ac.hex);
      const entered = this.aircraft.observe(ac.hex, this.opts.zones.containing(ac), t);
      if (entered.length === 0) continue;
      const room = this.opts.cfg.maxPerSnapshot - entries.reduce((n, e) => n + e.zones.length, 0);
      const admitted = entered.slice(0, Math.max(0, room)).filter(() => this.admit());
      over += entered.length - Math.min(entered.length, Math.max(0, room));
      if (admitted.length) entries.push({ ac, zones: admitted });
    }
    this.aircraft.keepOnly(this.previousAircraft, seen);
    this.previousAircraft = [...seen];
    this.suppressed.per_snapshot += over;
    for (let i = 0; i < over; i++) this.opts.metrics.suppressed('per_snapshot');
    if (entries.length === 0) return;
    const p = this.decide(entries, snap.fetchedAtMs, t).finally(() => this.decisions.delete(p));
    this.decisions.add(p);
  }

  /** Aircraft decisions under way (tests and close wait for them). */
  async settled(): Promise<void> {
    while (this.decisions.size) await Promise.allSettled([...this.decisions]);
  }

  private async decide(entries: { ac: AdsbAircraft; zones: string[] }[], snapshotAtMs: number, t: number): Promise<void> {
    const frames = entries.map((e) => aircraftFrame(e.ac, snapshotAtMs));
    for (const f of frames) this.own.add(f);
    let verdicts: Verdict[];
    try {
      verdicts = await this.opts.verdicts.decideAll(frames);
    } catch (err) {
      // nothing was appended: the entries are forgotten, so the next snapshot finds them again
      for (const e of entries) {
        for (const z of e.zones) {
          this.aircraft.forget(e.ac.hex, z);
          this.suppressed.not_recorded++;
          this.opts.metrics.suppressed('not_recorded');
        }
      }
      this.opts.log.warn({ err: (err as Error).message, aircraft: entries.length }, 'alerts: aircraft entry verdicts could not be recorded');
      return;
    }
    entries.forEach((e, i) => {
      const v = verdicts[i]!;
      const f = frames[i]!;
      for (const zone of e.zones) {
        this.aircraft.alerted(e.ac.hex, zone, t);
        this.raise({ kind: 'aircraft', target_id: e.ac.hex, zone, entered_at: f.ts_utc!, lat: f.lat, lon: f.lon, alt_m: f.alt_m ?? null, ledger_index: v.node.index, decision: v.evaluation.decision, simulated: false });
      }
    });
  }

  /** One alert within the per-minute bound, or counted as suppressed. */
  private admit(): boolean {
    if (this.perMinute.take()) return true;
    this.suppressed.per_minute++;
    this.opts.metrics.suppressed('per_minute');
    return false;
  }

  private raise(a: Omit<Alert, 'seq'>): void {
    const alert: Alert = { seq: ++this.seq, ...a };
    this.ring.push(alert);
    this.opts.metrics.raised(alert.kind);
    this.opts.webhook?.send(alert);
  }
}
