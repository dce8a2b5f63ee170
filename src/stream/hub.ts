/**
 * SSE fan-out (node-perf-style note 1.6): each event is serialised once and written to every
 * viewer; a ring buffer serves Last-Event-ID resumes; a viewer whose unsent bytes pass the cap is
 * dropped (it reconnects and resumes); `: ping` keeps idle proxies from cutting the stream.
 * Responses are written on the raw socket (ctx.respond = false): never compressed, and a client
 * leaving is a normal event, not a Koa error.
 */
import type { ServerResponse } from 'node:http';
import { Ring } from '../observability/traces.js';

export interface HubOptions {
  maxViewers: number;
  ringSize: number;
  heartbeatMs: number;
  sendBufferBytes: number;
  retryMs: number;
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
  private readonly viewers = new Set<ServerResponse>();
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
    const newest = this.newestId;
    if (rawLastEventId !== '' && lastEventId === null) {
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'Last-Event-ID is not a decimal event id', newest_id: newest })}\n\n`);
    } else if (lastEventId !== null && (newest === null || lastEventId > newest)) {
      res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'Last-Event-ID is newer than the newest event (the service restarted or the id is from elsewhere)', newest_id: newest })}\n\n`);
    } else if (lastEventId !== null) {
      const kept = this.ring.toArray();
      const oldest = kept[0]?.id;
      if (oldest !== undefined && lastEventId < oldest - 1 && this.ring.total > kept.length) {
        // what was missed is no longer buffered: say so instead of silently skipping it
        res.write(`event: reset\ndata: ${JSON.stringify({ reason: 'events after Last-Event-ID are no longer buffered', oldest_id: oldest })}\n\n`);
      }
      for (const e of kept) if (e.id > lastEventId) res.write(e.wire());
    }
    this.viewers.add(res);
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
    this.send(serialise());
    this.onFanout((performance.now() - started) / 1000, this.viewers.size);
  }

  private send(wire: string): void {
    for (const res of this.viewers) {
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
    for (const res of [...this.viewers]) {
      this.detach(res);
      res.end(`event: shutdown\ndata: ${JSON.stringify({ reason })}\n\n`);
    }
  }
}
