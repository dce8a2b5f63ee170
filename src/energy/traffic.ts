/**
 * Traffic counters for /energy/throughput, /energy/gateway and /energy/router: request windows
 * from a ring of counter snapshots, and an http.Server tap for in-flight requests and bytes
 * (the only place that sees them). The tap attaches on the first energy request, so its counts
 * start there; the bodies say so.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { samples, type Sample } from './prom.js';

export interface CounterSnapshot {
  t: number;
  total: number;
  byClass: Record<string, number>;
}

function classify(list: readonly Sample[]): CounterSnapshot['byClass'] {
  const out: Record<string, number> = { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 };
  for (const s of list) {
    const cls = `${String(s.labels.status).charAt(0)}xx`;
    if (cls in out) out[cls]! += s.value;
  }
  return out;
}

/** Snapshots of http_requests_total every `everyMs` (timer unref'd) and at each read, kept for 5 minutes. */
export class RequestWindows {
  private readonly ring: CounterSnapshot[] = [];
  private readonly start: CounterSnapshot;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly registry: Registry,
    everyMs = 5000,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.start = { t: this.now(), total: 0, byClass: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0 } };
    this.ring.push(this.start);
    this.timer = setInterval(() => void this.snapshot(), everyMs);
    this.timer.unref();
  }

  async snapshot(): Promise<CounterSnapshot> {
    const list = await samples(this.registry, 'http_requests_total');
    const byClass = classify(list);
    const snap = { t: this.now(), total: list.reduce((a, s) => a + s.value, 0), byClass };
    this.ring.push(snap);
    while (this.ring.length > 2 && this.ring[1]!.t < snap.t - 300_000) this.ring.shift();
    return snap;
  }

  /** Requests over the last `seconds` (or since start when younger), with the span actually covered. */
  window(now: CounterSnapshot, seconds: number | null): { covered_s: number; requests: number; by_status_class: Record<string, number> } {
    const base = seconds === null ? this.start : (this.ring.find((s) => s.t >= now.t - seconds * 1000) ?? now);
    return {
      covered_s: (now.t - base.t) / 1000,
      requests: now.total - base.total,
      by_status_class: Object.fromEntries(Object.entries(now.byClass).map(([k, v]) => [k, v - (base.byClass[k] ?? 0)])),
    };
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/** In-flight requests and bytes on the listening server, counted from the moment the tap attaches. */
export class ServerTap {
  private server: Server | null = null;
  attachedAt: string | null = null;
  inFlight = 0;
  private closedIn = 0;
  private closedOut = 0;
  /** Open sockets and their byte counters when first seen. */
  private readonly sockets = new Map<Socket, { read: number; written: number }>();

  attach(req: IncomingMessage, res: ServerResponse): void {
    const server = (req.socket as Socket & { server?: Server }).server;
    if (this.server || !server) return;
    this.server = server;
    this.attachedAt = new Date().toISOString();
    this.track(req.socket);
    // the request being served now is in flight too
    this.inFlight = 1;
    res.once('close', () => this.inFlight--);
    server.on('connection', this.onConnection);
    server.on('request', this.onRequest);
  }

  private readonly onConnection = (sock: Socket): void => this.track(sock);

  private readonly onRequest = (_req: IncomingMessage, res: ServerResponse): void => {
    this.inFlight++;
    res.once('close', () => this.inFlight--);
  };

  private track(sock: Socket): void {
    if (this.sockets.has(sock)) return;
    const base = { read: sock.bytesRead, written: sock.bytesWritten };
    this.sockets.set(sock, base);
    sock.once('close', () => {
      this.closedIn += sock.bytesRead - base.read;
      this.closedOut += sock.bytesWritten - base.written;
      this.sockets.delete(sock);
    });
  }

  bytes(): { in: number; out: number } {
    let inB = this.closedIn;
    let outB = this.closedOut;
    for (const [s, base] of this.sockets) {
      inB += s.bytesRead - base.read;
      outB += s.bytesWritten - base.written;
    }
    return { in: inB, out: outB };
  }

  detach(): void {
    this.server?.off('connection', this.onConnection);
    this.server?.off('request', this.onRequest);
  }
}
