/**
 * The live tracks sent to TAK: one entry per uid, bounded, each resent before its stale time while
 * it lives. A verdict track lives until no verdict has come for `staleS`; an aircraft lives while
 * the snapshots hold it (absent from one, it ends at once); a relayed event lives until its own
 * stale time. An ended track is simply no longer sent, and TAK clients grey it at its last stale.
 * Pure: the clock is injected and sending is a callback.
 */
import type { CotOut } from './output.js';
import { renderTrack, type TrackSpec } from './events.js';

export type TrackKind = 'verdict' | 'aircraft' | 'ingest';

interface LiveTrack {
  kind: TrackKind;
  /** A spec rendered at each send, or (relayed events) the event as received. */
  spec: TrackSpec | null;
  fixed: CotOut | null;
  lastSentMs: number;
  /** The track has ended once the clock passes this. */
  endsAtMs: number;
}

export interface TakFeedOptions {
  staleS: number;
  resendS: number;
  maxTracks: number;
  now?: () => number;
  send(event: CotOut): void;
}

export interface FeedCounts {
  live: number;
  ended: number;
  evicted: number;
  resent: number;
}

export class TakFeed {
  private readonly tracks = new Map<string, LiveTrack>();
  private readonly now: () => number;
  private readonly counts = { ended: 0, evicted: 0, resent: 0 };

  constructor(private readonly opts: TakFeedOptions) {
    this.now = opts.now ?? Date.now;
  }

  /** A new report of a rendered track (verdict, aircraft): sent now, then resent while it lives. */
  report(kind: 'verdict' | 'aircraft', spec: TrackSpec): void {
    const t = this.now();
    // an aircraft ends with the snapshot that leaves it out; this bound covers a feed that stops publishing
    this.put(spec.uid, { kind, spec, fixed: null, lastSentMs: t, endsAtMs: t + this.opts.staleS * 1000 });
    this.opts.send(renderTrack(spec, t, this.opts.staleS));
  }

  /** A relayed event: sent now as received, resent unchanged until its own stale time. */
  relay(event: CotOut): void {
    const t = this.now();
    if (!(event.fields.staleMs > t)) return;
    this.put(event.fields.uid, { kind: 'ingest', spec: null, fixed: event, lastSentMs: t, endsAtMs: event.fields.staleMs });
    this.opts.send(event);
  }

  /** The aircraft of a new snapshot, by uid: every other aircraft track has ended. */
  keepAircraft(uids: ReadonlySet<string>): void {
    for (const [uid, track] of this.tracks) {
      if (track.kind === 'aircraft' && !uids.has(uid)) this.end(uid);
    }
  }

  /** Ends what has ended and resends what is due; call it at least once a second. */
  tick(): void {
    const t = this.now();
    const resendMs = this.opts.resendS * 1000;
    for (const [uid, track] of this.tracks) {
      if (t >= track.endsAtMs) {
        this.end(uid);
        continue;
      }
      if (t - track.lastSentMs < resendMs) continue;
      track.lastSentMs = t;
      this.counts.resent++;
      this.opts.send(track.spec ? renderTrack(track.spec, t, this.opts.staleS) : track.fixed!);
    }
  }

  has(uid: string): boolean {
    return this.tracks.has(uid);
  }

  get size(): number {
    return this.tracks.size;
  }

  stats(): FeedCounts {
    return { live: this.tracks.size, ...this.counts };
  }

  private put(uid: string, track: LiveTrack): void {
    // re-inserted, so the map's order is the order of last update and the first key is the least recent
    this.tracks.delete(uid);
    this.tracks.set(uid, track);
    while (this.tracks.size > this.opts.maxTracks) {
      this.tracks.delete(this.tracks.keys().next().value!);
      this.counts.evicted++;
    }
  }

  private end(uid: string): void {
    this.tracks.delete(uid);
    this.counts.ended++;
  }
}
