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
  /**
   * Events older than the ring, from the ledger itself, ids in [from, to) oldest first (at most
   * `backfillMax`): a Last-Event-ID older than the ring still resumes without a gap.
   */
  backfill?: (from: number, to: number) => { id: number; wire: () => string }[];
  backfillMax?: number;
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

  /** Starts streaming to `res`; replays events after `lastEventId` when it is still in the ring. */
  attach(res: ServerResponse, lastEventId: number | null, extraHeaders: Record<string, string>): void {
    res.writeHead(200, {
      ...extraHeaders,
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.socket?.setKeepAlive(true);
    res.write(`retry: ${this.opts.retryMs}\n\n`);
    let sent = -1;
    if (lastEventId !== null) {
      sent = lastEventId;
      const kept = this.ring.toArray();
      const oldest = kept[0]?.id;
      if (oldest !== undefined && lastEventId < oldest - 1 && this.ring.total > kept.length) {
        const max = this.opts.backfillMax ?? 1000;
        const older = this.opts.backfill && oldest - 1 - lastEventId <= max ? this.opts.backfill(lastEventId + 1, oldest) : null;
        if (older) {
          for (const e of older) res.write(e.wire());
        } else {
          // what was missed is no longer buffered: say so instead of silently skipping it
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
        // a viewer that does not read must not hold memory for everyone: drop it, it can resume
        this.dropped++;
        this.detach(res);
        res.destroy();
        continue;
      }
      res.write(wire);
    }
  }

  close(): void {
    for (const res of [...this.viewers.keys()]) {
      this.detach(res);
      res.end();
    }
  }
}
