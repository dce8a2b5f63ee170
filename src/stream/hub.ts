/**
 * SSE fan-out: each event is serialised once and written to every viewer, so a viewer costs a
 * write, not a serialisation; a ring buffer serves Last-Event-ID resumes; a viewer whose
 * unacknowledged bytes (queued in the process, and where the kernel lets us see it, in its send
 * queue) pass the cap is dropped (it reconnects and resumes); a resume replays a bounded number of
 * bytes per connection and per client address, then ends the stream so the client continues from
 * its Last-Event-ID; `: ping` keeps idle proxies from cutting the stream. Responses are written on
 * the raw socket (ctx.respond = false): never compressed, and a client leaving is a normal event,
 * not a Koa error.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Ring } from '../lib/ring.js';
import type { SendQueueProbe } from './tcp-queue.js';

export interface HubOptions {
  maxViewers: number;
  ringSize: number;
  heartbeatMs: number;
  sendBufferBytes: number;
  retryMs: number;
  /**
   * Events older than the ring, from the ledger itself, ids in [from, to) oldest first (at most
   * `backfillMax`): a Last-Event-ID older than the ring still resumes without a gap.
   */
  backfill?: (from: number, to: number) => { id: number; wire: () => string }[];
  backfillMax?: number;
  /** The newest event id that exists anywhere (the ledger's newest index), for resumes after a restart. */
  newestIndex?: () => number | null;
  /**
   * How long a Last-Event-ID newer than the newest event may be a position still to come: other
   * replicas' events this one has not applied yet (replication lag, postgres mode). Past it, or at
   * once when 0 (one writer: memory and file modes), the viewer gets `event: reset`.
   */
  aheadGraceMs?: number;
  /** Bytes of events one connection is replayed at most (never more than sendBufferBytes); the
   * stream then ends with `event: catchup` and the client resumes from its Last-Event-ID. */
  replayMaxBytes?: number;
  /** Replay bytes per second one client address is sent over all its connections (0: no limit). */
  replayBytesPerAddressPerS?: number;
  /** The client a response is for, as the per-address limits count it (default: the TCP peer). */
  clientOf?: (res: ServerResponse) => string;
  /** Kernel send queue of sockets; with it, every `lagCheckMs` a viewer's kernel bytes count toward the cap. */
  sendQueue?: SendQueueProbe;
  lagCheckMs?: number;
}

interface Viewer {
  /** Last id it has been sent (or resumed from): nothing at or below it is sent again. */
  sent: number;
  /** socket.bytesWritten known to have been acknowledged by the client, as of the last probe. */
  acked: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

interface StoredEvent {
  id: number;
  /** Serialised on first use: with nobody watching, events are only kept for resumes. */
  wire: () => string;
}

const AHEAD_REASON = 'Last-Event-ID is newer than the newest event (a ledger restored from a backup, or an id from elsewhere)';

/** Viewers written to in one turn of the event loop. */
const FANOUT_SLICE = 128;

interface Fanout {
  wire: string;
  id: number | undefined;
  targets: ServerResponse[];
  next: number;
  started: number;
  /** Observed as a fan-out (events; not pings or notices). */
  timed: boolean;
}

export interface HubStats {
  viewers: number;
  events: number;
  dropped: number;
  /** Resumes whose replay was cut at the byte cap (the client continues on its next connection). */
  catchups: number;
  lastEventAt: string | null;
}

export class SseHub {
  private readonly viewers = new Map<ServerResponse, Viewer>();
  private readonly ring: Ring<StoredEvent>;
  private heartbeat: NodeJS.Timeout | null = null;
  private lagTimer: NodeJS.Timeout | null = null;
  private probing = false;
  private readonly buckets = new Map<string, Bucket>();
  private events = 0;
  private dropped = 0;
  private catchups = 0;
  private lastEventAt: string | null = null;
  /** Fan-outs not yet written to every viewer, oldest first (each viewer gets events in order). */
  private readonly fanouts: Fanout[] = [];
  private draining = false;
  /** Called when the first viewer arrives and when the last one leaves. */
  onActive: (active: boolean) => void = () => {};
  /** Time from publishing an event to its write to the last viewer (its slices and the loop between them). */
  onFanout: (seconds: number, viewers: number) => void = () => {};

  constructor(private readonly opts: HubOptions) {
    this.ring = new Ring(opts.ringSize);
  }

  get full(): boolean {
    return this.viewers.size >= this.opts.maxViewers;
  }

  stats(): HubStats {
    return { viewers: this.viewers.size, events: this.events, dropped: this.dropped, catchups: this.catchups, lastEventAt: this.lastEventAt };
  }

  static readonly HEADERS = {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
  } as const;

  /** Newest event id published (null before the first). */
  get newestId(): number | null {
    return this.ring.toArray().at(-1)?.id ?? null;
  }

  /**
   * Starts streaming to `res`; replays events after `lastEventId` when it is still in the ring (or
   * the ledger). A Last-Event-ID that cannot be honoured (malformed, or newer than the newest event,
   * as after a restart) gets `event: reset` first, so the client knows its position means nothing
   * here. A replay stops at the per-connection and per-address byte budgets: the stream then ends
   * with `event: catchup` and the client, reconnecting with the last id it received, loses nothing.
   */
  attach(res: ServerResponse, lastEventId: number | null, extraHeaders: Record<string, string>, rawLastEventId = ''): void {
    res.writeHead(200, {
      ...extraHeaders,
      ...SseHub.HEADERS,
      Connection: 'keep-alive',
    });
    res.socket?.setKeepAlive(true);
    res.write(`retry: ${this.opts.retryMs}\n\n`);
    // -1: nothing sent yet; a viewer is never sent an id at or below what it already has
    let sent = -1;
    const newest = Math.max(this.newestId ?? -1, this.opts.newestIndex?.() ?? -1);
    if (rawLastEventId !== '' && lastEventId === null) {
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'Last-Event-ID is not a decimal event id', newest_id: newest < 0 ? null : newest })}\n\n`);
    } else if (lastEventId !== null && lastEventId > newest && (this.opts.aheadGraceMs ?? 0) > 0) {
      // another replica may have served that id: wait for this one to apply it, nothing twice
      sent = lastEventId;
      this.resetUnlessReached(res, lastEventId);
    } else if (lastEventId !== null && lastEventId > newest) {
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: AHEAD_REASON, newest_id: newest < 0 ? null : newest })}\n\n`);
    } else if (lastEventId !== null) {
      sent = lastEventId;
      const kept = this.ring.toArray();
      // the ring may be empty after a restart while the ledger (file, postgres) still holds the events
      const oldest = kept[0]?.id ?? newest + 1;
      const missedBeforeRing = this.opts.backfill ? lastEventId < oldest - 1 : this.ring.total > kept.length && lastEventId < oldest - 1;
      let older: StoredEvent[] = [];
      if (missedBeforeRing) {
        const max = this.opts.backfillMax ?? 1000;
        const found = this.opts.backfill && oldest - 1 - lastEventId <= max ? this.opts.backfill(lastEventId + 1, oldest) : null;
        if (found) older = found;
        else {
          // what was missed is no longer available: say so instead of silently skipping it
          res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'events after Last-Event-ID are no longer buffered', oldest_id: oldest })}\n\n`);
        }
      }
      const missed = [...older, ...kept.filter((e) => e.id > lastEventId)];
      const replayed = this.replay(res, missed);
      sent = Math.max(sent, replayed.lastId);
      if (replayed.cut) {
        this.catchups++;
        res.end(`retry: ${replayed.retryMs}\nevent: catchup\ndata: ${JSON.stringify({ reason: 'replay budget reached: reconnect with Last-Event-ID to continue', last_id: sent, newest_id: newest })}\n\n`);
        return;
      }
    }
    this.viewers.set(res, { sent, acked: 0 });
    res.once('close', () => this.detach(res));
    if (this.viewers.size === 1) {
      this.heartbeat = setInterval(() => this.send(': ping\n\n'), this.opts.heartbeatMs);
      this.heartbeat.unref();
      if (this.opts.sendQueue) {
        this.lagTimer = setInterval(() => void this.checkLag(), this.opts.lagCheckMs ?? 1000);
        this.lagTimer.unref();
      }
      this.onActive(true);
    }
  }

  /**
   * A viewer waiting for an id this replica has not applied: once the grace is over and the id is
   * still not here, it is told `event: reset` and gets every event from then on.
   */
  private resetUnlessReached(res: ServerResponse, lastEventId: number): void {
    const timer = setTimeout(() => {
      const v = this.viewers.get(res);
      const newest = Math.max(this.newestId ?? -1, this.opts.newestIndex?.() ?? -1);
      if (!v || newest >= lastEventId) return;
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: AHEAD_REASON, newest_id: newest < 0 ? null : newest })}\n\n`);
      v.sent = newest;
    }, this.opts.aheadGraceMs);
    timer.unref();
    res.once('close', () => clearTimeout(timer));
  }

  /** Writes `missed` oldest first within this connection's and this address's replay budgets. */
  private replay(res: ServerResponse, missed: StoredEvent[]): { lastId: number; cut: boolean; retryMs: number } {
    let lastId = -1;
    if (!missed.length) return { lastId, cut: false, retryMs: 0 };
    const perConnection = this.opts.replayMaxBytes === undefined ? Infinity : Math.min(this.opts.replayMaxBytes, this.opts.sendBufferBytes);
    const rate = this.opts.replayBytesPerAddressPerS ?? 0;
    const capacity = Math.max(rate, Number.isFinite(perConnection) ? perConnection : 0);
    const bucket = rate > 0 ? this.bucket(this.opts.clientOf?.(res) ?? res.socket?.remoteAddress ?? '', rate, capacity) : null;
    const budget = Math.min(perConnection, bucket ? bucket.tokens : Infinity);
    let used = 0;
    let count = 0;
    for (const e of missed) {
      const wire = e.wire();
      const bytes = Buffer.byteLength(wire);
      // one event at least while the address has budget, so a correct client always progresses
      if (used + bytes > budget && (count > 0 || budget <= 0)) break;
      res.write(wire);
      used += bytes;
      count++;
      lastId = e.id;
    }
    if (bucket) bucket.tokens -= used;
    const cut = count < missed.length;
    // a correct client comes back once its address can be sent a full replay again
    const retryMs = bucket ? Math.max(100, Math.ceil(((Math.min(perConnection, capacity) - bucket.tokens) / rate) * 1000)) : 100;
    return { lastId, cut, retryMs };
  }

  /** The address's token bucket, refilled for the time since it was last used. */
  private bucket(address: string, rate: number, capacity: number): Bucket {
    const now = performance.now();
    let b = this.buckets.get(address);
    if (!b) {
      if (this.buckets.size >= 10_000) {
        // forget the addresses whose budget is full again: they lose nothing by being forgotten
        for (const [k, v] of this.buckets) if (v.tokens + ((now - v.at) / 1000) * rate >= capacity) this.buckets.delete(k);
      }
      b = { tokens: capacity, at: now };
      this.buckets.set(address, b);
    }
    b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    return b;
  }

  private detach(res: ServerResponse): void {
    if (!this.viewers.delete(res)) return;
    if (this.viewers.size === 0) {
      if (this.heartbeat) clearInterval(this.heartbeat);
      if (this.lagTimer) clearInterval(this.lagTimer);
      this.heartbeat = null;
      this.lagTimer = null;
      this.onActive(false);
    }
  }

  /**
   * A viewer that does not read must not hold memory for everyone: drop it, it can resume. A reset
   * (RST), not a graceful close: the kernel discards the unsent data at once instead of keeping it
   * while it tries to deliver it.
   */
  private drop(res: ServerResponse): void {
    this.dropped++;
    this.detach(res);
    const socket = res.socket;
    if (socket && !socket.destroyed) socket.resetAndDestroy();
    else res.destroy();
  }

  /**
   * Compares each viewer's unacknowledged bytes, in the process and in the kernel's send queue,
   * with the cap. Only viewers written more than the cap since their last probe are looked up,
   * since none other can be over it.
   */
  private async checkLag(): Promise<void> {
    const probe = this.opts.sendQueue;
    if (!probe || this.probing) return;
    const cap = this.opts.sendBufferBytes;
    const due: [ServerResponse, Viewer, Socket][] = [];
    for (const [res, v] of this.viewers) {
      const socket = res.socket;
      if (socket && socket.bytesWritten - v.acked > cap) due.push([res, v, socket]);
    }
    if (!due.length) return;
    this.probing = true;
    try {
      const queued = await probe(due.map(([, , s]) => s));
      due.forEach(([res, v, socket], i) => {
        const inKernel = queued[i];
        if (inKernel === null || inKernel === undefined || !this.viewers.has(res)) return;
        const unacked = inKernel + res.writableLength;
        if (unacked > cap) this.drop(res);
        else v.acked = socket.bytesWritten - unacked;
      });
    } catch {
      // the table could not be read this time; the cap on what the process holds still applies
    } finally {
      this.probing = false;
    }
  }

  /** `data` is built lazily and at most once, however many viewers there are. */
  publish(id: number, event: string, data: () => unknown): void {
    let wire: string | null = null;
    const serialise = (): string => (wire ??= `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data())}\n\n`);
    this.ring.push({ id, wire: serialise });
    this.events++;
    this.lastEventAt = new Date().toISOString();
    if (this.viewers.size === 0) return;
    this.send(serialise(), id, true);
  }

  /**
   * Writes `wire` to every viewer, FANOUT_SLICE viewers per turn of the event loop: each write
   * costs its socket a corked writev after the turn (~30 µs), and 1,000 viewers in one turn held
   * the loop 30-50 ms. Slices of one event, and events, go out in order, so each viewer still
   * receives events in order. `id`: an event, skipped for viewers that already have it (resumed
   * past it); none for pings.
   */
  private send(wire: string, id?: number, timed = false): void {
    this.fanouts.push({ wire, id, targets: [...this.viewers.keys()], next: 0, started: performance.now(), timed });
    if (!this.draining) this.drain();
  }

  private drain(): void {
    this.draining = true;
    let budget = FANOUT_SLICE;
    while (this.fanouts.length && budget > 0) {
      const f = this.fanouts[0]!;
      for (; f.next < f.targets.length && budget > 0; f.next++, budget--) this.write(f.targets[f.next]!, f.wire, f.id);
      if (f.next < f.targets.length) break;
      this.fanouts.shift();
      if (f.timed) this.onFanout((performance.now() - f.started) / 1000, f.targets.length);
    }
    if (this.fanouts.length) setImmediate(() => this.drain());
    else this.draining = false;
  }

  private write(res: ServerResponse, wire: string, id: number | undefined): void {
    const v = this.viewers.get(res);
    if (v === undefined) return; // left (or dropped) since the event was published
    if (id !== undefined) {
      if (id <= v.sent) return;
      v.sent = id;
    }
    if (res.writableLength > this.opts.sendBufferBytes) {
      this.drop(res);
      return;
    }
    res.write(wire);
  }

  /** Sends `event` to every viewer (e.g. a pause notice); not kept for resumes. */
  notice(event: string, data: unknown): void {
    this.send(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends every stream with a final `event: shutdown` (clients reconnect elsewhere or later). */
  close(reason = 'the service is shutting down'): void {
    for (const res of [...this.viewers.keys()]) {
      this.detach(res);
      res.end(`event: shutdown\ndata: ${JSON.stringify({ reason })}\n\n`);
    }
  }
}
