/**
 * In-process requests: a private Koa app over the service's own route table and middleware
 * (createKoaApp), driven without a socket. Views use it to read what a client would get (bodies,
 * status, security headers) without opening a port and without touching the request counters,
 * trace ring or decision log that describe real client traffic.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import { yieldLoop } from '../core/slices.js';
import { createKoaApp } from './koa-app.js';
import { writeGuard } from './write-guard.js';
import type { Metrics } from '../observability/metrics.js';
import { Ring } from '../lib/ring.js';
import type { TraceRecord } from '../observability/traces.js';
import type { Services } from '../platform/services.js';

export interface InProcessResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  latencyMs: number;
}

export interface InProcessSummary {
  status_code: number;
  content_type: string | null;
  body_sha256: string;
  latency_ms: number;
}

/** Counts nothing: in-process probes are not client traffic. */
const NO_METRICS = { recordRequest() {}, shed: { inc() {} } } as unknown as Metrics;

export class InProcessClient {
  private app: Koa | null = null;
  private handle: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null = null;

  constructor(private readonly s: Services) {}

  /** Built on first use: the route table is complete only once buildApp has assembled it. */
  koa(): Koa {
    if (!this.app) {
      this.app = createKoaApp({
        routes: this.s.routeTable(),
        jsonLimitBytes: this.s.config.http.jsonLimitBytes,
        bodyTimeoutMs: this.s.config.guard.bodyTimeoutMs,
        // the same chain as the served app, write guard included (in-process probes only read)
        before: [writeGuard(this.s.config.guard, this.s.routeTable())],
        log: this.s.log.child({ in_process: true }),
        metrics: NO_METRICS,
        traces: new Ring<TraceRecord>(1),
      });
    }
    return this.app;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<InProcessResponse> {
    // without a socket nothing here waits on I/O: views chaining several in-process requests
    // (refreshes, posture) ran them all in one task of the loop, 100+ ms; each starts a new turn
    await yieldLoop();
    this.handle ??= this.koa().callback();
    const socket = new Socket();
    const req = new IncomingMessage(socket);
    req.method = 'GET';
    req.url = path;
    req.headers = { host: 'in-process.invalid', ...Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) };
    req.push(null);
    const res = new ServerResponse(req);
    const chunks: Buffer[] = [];
    const started = performance.now();
    const done = new Promise<void>((resolve) => {
      const collect = (chunk: unknown, encoding?: unknown): void => {
        if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
      };
      // named, then assigned (the no-restricted-syntax rule in eslint.config.js)
      const write = ((chunk: unknown, encoding?: unknown) => {
        collect(chunk, encoding);
        return true;
      }) as typeof res.write;
      const end = ((chunk?: unknown, encoding?: unknown) => {
        collect(chunk, encoding);
        resolve();
        return res;
      }) as typeof res.end;
      res.write = write;
      res.end = end;
    });
    await this.handle(req, res);
    await done;
    socket.destroy();
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.getHeaders())) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
    return { status: res.statusCode, headers: out, body: Buffer.concat(chunks), latencyMs: performance.now() - started };
  }

  async getJson<T = Record<string, unknown>>(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: T | null; raw: InProcessResponse }> {
    const raw = await this.get(path, headers);
    let body: T | null = null;
    try {
      body = JSON.parse(raw.body.toString('utf8')) as T;
    } catch {
      body = null;
    }
    return { status: raw.status, body, raw };
  }
}

export function summarize(r: InProcessResponse): InProcessSummary {
  return {
    status_code: r.status,
    content_type: r.headers['content-type'] ?? null,
    body_sha256: createHash('sha256').update(r.body).digest('hex'),
    latency_ms: Math.round(r.latencyMs * 1000) / 1000,
  };
}
