/**
 * The middleware chain, outermost first: request context (id, trace, headers, log line, metrics),
 * then the error mapper, the one place where errors become HTTP.
 */
import type { Context, Next } from 'koa';
import { API_CSP, HTML_CSP, type HtmlPolicy } from './csp.js';
import { AppError, Errors } from './errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Ring } from '../lib/ring.js';
import { continueTrace, type TraceRecord } from '../observability/traces.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;


export interface ContextDeps {
  log: Logger;
  metrics: Metrics;
  traces: Ring<TraceRecord>;
}

export function requestContext({ log, metrics, traces }: ContextDeps) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const arrivedAt = Date.now();
    const trace = continueTrace(ctx.get('traceparent') || undefined);
    const inbound = ctx.get('x-request-id');
    // without a usable inbound id, the trace id names the request (one id to grep for, not two)
    const reqId = REQUEST_ID.test(inbound) ? inbound : trace.traceId;
    ctx.state.reqId = reqId;
    ctx.state.trace = trace;
    let child: Logger | undefined;
    // a child logger costs a few µs: only made when a handler logs
    Object.defineProperty(ctx.state, 'log', { get: () => (child ??= log.child({ reqId, traceId: trace.traceId })), configurable: true });
    const res = ctx.res;
    res.setHeader('X-Request-Id', reqId);
    res.setHeader('traceparent', trace.traceparent);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    try {
      await next();
    } finally {
      if (!res.headersSent) res.setHeader('Content-Security-Policy', ctx.state.html ? HTML_CSP[ctx.state.html as HtmlPolicy] : API_CSP);
      const ms = performance.now() - started;
      const route = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
      const status = ctx.status;
      metrics.recordRequest(ctx.method, route, status, ms / 1000);
      traces.push({ traceparent: trace.traceparent, at: new Date(arrivedAt).toISOString(), method: ctx.method, route, status, ms: Math.round(ms * 1000) / 1000 });
      // a shed request is expected under load: counted and summarised, never one warn line each
      const level = status >= 500 && !ctx.state.shed ? 'warn' : 'info';
      if (log.isLevelEnabled(level)) {
        log[level]({ reqId, traceId: trace.traceId, method: ctx.method, route, path: ctx.path, status, ms: Math.round(ms * 1000) / 1000 }, 'request');
      }
    }
  };
}

function send(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.type = 'application/json';
  ctx.body = err.body;
}

/** Codes that mean "shed under load", not "broken": counted, and logged as one summary per interval. */
const SHED_CODES = new Set(['QUEUE_FULL', 'CAPACITY', 'DEADLINE', 'RATE_LIMITED']);

/** Shed requests per code and route, logged once per interval as one line (issue 17 item 10). */
export class ShedSummary {
  private counts = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly log: Logger,
    private readonly intervalMs: number,
  ) {}

  note(code: string, route: string): void {
    const key = `${code} ${route}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.counts.size === 0) return;
    const shed: Record<string, number> = {};
    let total = 0;
    for (const [k, n] of this.counts) {
      shed[k] = n;
      total += n;
    }
    this.counts = new Map();
    this.log.warn({ shed, total, intervalMs: this.intervalMs }, 'requests shed');
  }
}

export interface ErrorMapperDeps {
  metrics?: Metrics;
  shed?: ShedSummary;
}

export function errorMapper({ metrics, shed }: ErrorMapperDeps = {}) {
  return async function errorMapperMiddleware(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      const appErr = err instanceof AppError ? err : Errors.internal(err);
      if (SHED_CODES.has(appErr.code)) {
        ctx.state.shed = true;
        metrics?.shed.inc({ code: appErr.code });
        shed?.note(appErr.code, ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched');
      } else if (appErr.status >= 500) {
        // logged once, with the request id; the body never carries internals
        (ctx.state.log as Logger).error({ err: appErr.cause ?? err, code: appErr.code }, 'request failed');
      }
      if (appErr.code === 'CLIENT_CLOSED') {
        ctx.status = 499;
        return;
      }
      send(ctx, appErr);
    }
  };
}
