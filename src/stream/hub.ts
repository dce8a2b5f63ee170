/**
 * SSE fan-out (node-perf-style note 1.6): each event is serialised once and written to every
 * viewer; a ring buffer serves Last-Event-ID resumes; a viewer whose unsent bytes pass the cap is
 * dropped (it reconnects and resumes); `: ping` keeps idle proxies from cutting the stream.
 * Responses are written on the raw socket (ctx.respond = false): never compressed, and a client
 * leaving is a normal event, not a Koa error.
 */
import type { ServerResponse } from 'node:http';
import { Ring } from '../lib/ring.js';

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
  /** Event ids survive restarts and are shared by replicas (a durable ledger): an id ahead of this
   * hub is a position to wait for, not a sign that the service restarted. */
  idsPersist?: boolean;
}

interface StoredEvent {
  id: number;
  /** Serialised on first use: with nobody watching, events are only kept for resumes. */
  wire: () => string;
}

export interface HubStats {
  viewers: number;
  events: number;
  dropped: number;
  lastEventAt: string | null;
}

export class SseHub {
  /** Each viewer with the last id it has been sent (or resumed from): nothing at or below it is sent again. */
  private readonly viewers = new Map<ServerResponse, number>();
  private readonly ring: Ring<StoredEvent>;
  private heartbeat: NodeJS.Timeout | null = null;
  private events = 0;
  private dropped = 0;
  private lastEventAt: string | null = null;
  /** Called when the first viewer arrives and when the last one leaves. */
  onActive: (active: boolean) => void = () => {};
  /** Main-thread time one event took to reach every viewer's socket buffer. */
  onFanout: (seconds: number, viewers: number) => void = () => {};

  constructor(private readonly opts: HubOptions) {
    this.ring = new Ring(opts.ringSize);
  }

  get full(): boolean {
    return this.viewers.size >= this.opts.maxViewers;
  }

  stats(): HubStats {
    return { viewers: this.viewers.size, events: this.events, dropped: this.dropped, lastEventAt: this.lastEventAt };
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
   * Starts streaming to `res`; replays events after `lastEventId` when it is still in the ring.
   * A Last-Event-ID that cannot be honoured (malformed, or newer than the newest event, as after
   * a restart) gets `event: reset` first, so the client knows its position means nothing here.
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
    } else if (lastEventId !== null && lastEventId > newest && this.opts.idsPersist) {
      // ids are ledger indices that outlive the process: this replica has not seen that id yet
      // (another replica served it); the viewer gets what comes after it, nothing twice
      sent = lastEventId;
    } else if (lastEventId !== null && lastEventId > newest) {
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'Last-Event-ID is newer than the newest event (the service restarted or the id is from elsewhere)', newest_id: newest < 0 ? null : newest })}\n\n`);
    } else if (lastEventId !== null) {
      sent = lastEventId;
      const kept = this.ring.toArray();
      // the ring may be empty after a restart while the ledger (file, postgres) still holds the events
      const oldest = kept[0]?.id ?? newest + 1;
      const missedBeforeRing = this.opts.backfill ? lastEventId < oldest - 1 : this.ring.total > kept.length && lastEventId < oldest - 1;
      if (missedBeforeRing) {
        const max = this.opts.backfillMax ?? 1000;
        const older = this.opts.backfill && oldest - 1 - lastEventId <= max ? this.opts.backfill(lastEventId + 1, oldest) : null;
        if (older) {
          for (const e of older) res.write(e.wire());
          sent = Math.max(sent, older.at(-1)?.id ?? sent);
        } else {
          // what was missed is no longer available: say so instead of silently skipping it
          res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'events after Last-Event-ID are no longer buffered', oldest_id: oldest })}\n\n`);
        }
      }
      for (const e of kept) if (e.id > lastEventId) res.write(e.wire());
      sent = Math.max(sent, kept.at(-1)?.id ?? sent);
    }
    this.viewers.set(res, sent);
    res.once('close', () => this.detach(res));
    if (this.viewers.size === 1) {
      this.heartbeat = setInterval(() => this.send(': ping\n\n'), this.opts.heartbeatMs);
      this.heartbeat.unref();
      this.onActive(true);
    }
  }

  private detach(res: ServerResponse): void {
    if (!this.viewers.delete(res)) return;
    if (this.viewers.size === 0) {
      if (this.heartbeat) clearInterval(this.heartbeat);
      this.heartbeat = null;
      this.onActive(false);
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
    const started = performance.now();
    this.send(serialise(), id);
    this.onFanout((performance.now() - started) / 1000, this.viewers.size);
  }

  /** `id`: an event, skipped for viewers that already have it (resumed past it); none for pings. */
  private send(wire: string, id?: number): void {
    for (const [res, sent] of this.viewers) {
      if (id !== undefined) {
        if (id <= sent) continue;
        this.viewers.set(res, id);
      }
      if (res.writableLength > this.opts.sendBufferBytes) {
        // a viewer that does not read must not hold memory for everyone: drop it, it can resume.
        // A reset (RST), not a graceful close: the kernel discards the unsent data at once
        // instead of keeping megabytes per socket while it tries to deliver them.
        this.dropped++;
        this.detach(res);
        const socket = res.socket;
        if (socket && !socket.destroyed) socket.resetAndDestroy();
        else res.destroy();
        continue;
      }
      res.write(wire);
    }
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
