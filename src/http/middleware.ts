/**
 * The outermost middleware: request context (id, trace, headers, log line, metrics) and the one
 * place where errors become HTTP. One layer, not two: every Koa layer costs a promise and a
 * microtask per request (bench/README.md).
 */
import type { Context, Next } from 'koa';
import { API_CSP, HTML_CSP, type HtmlPolicy } from './csp.js';
import { AppError, Errors, SHED_CODES } from './errors.js';
import { sendJsonText, type JsonText } from './json-text.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Ring } from '../lib/ring.js';
import { continueTrace, type TraceContext, type TraceRecord } from '../observability/traces.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ContextDeps {
  log: Logger;
  metrics: Metrics;
  traces: Ring<TraceRecord>;
}

/**
 * `ctx.state` of every request. The child logger is made on first use (a few µs, and most requests
 * never log): a getter on the class, not one defined per request.
 */
export class RequestState {
  /** Served HTML, and the CSP it runs under. */
  html: HtmlPolicy | undefined = undefined;
  /** Answered by load shedding (counted, never logged one by one). */
  shed = false;
  /** A body serialised once (json-text.ts): its Content-Length is set after the CSP. */
  jsonText: JsonText | undefined = undefined;
  #child: Logger | undefined = undefined;

  constructor(
    private readonly root: Logger,
    readonly reqId: string,
    readonly trace: TraceContext,
  ) {}

  get log(): Logger {
    return (this.#child ??= this.root.child({ reqId: this.reqId, traceId: this.trace.traceId }));
  }
}

const routeOf = (ctx: Context): string => (ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched');

/** Writes an error as its answer: status, headers and the FastAPI-shaped JSON body. */
export function sendError(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  for (const k in err.headers) ctx.set(k, err.headers[k]!);
  sendJsonText(ctx, err.json);
}

export function requestContext({ log, metrics, traces }: ContextDeps, shed?: ShedSummary) {
  // the access line's fields are ours (ids, method, route template, path without its query,
  // status, time), so it skips the redaction every other line goes through: its wildcard paths
  // cost ~3.4 µs a line, more than the rest of the line (bench/README.md, eighth pass)
  const access = log.child({}, { redact: { paths: [] } });
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const arrivedAt = Date.now();
    // read from Node's header object (Koa's ctx.get adds a call and a switch); Node joins a
    // repeated header of these names into one string
    const headers = ctx.req.headers as Record<string, string | undefined>;
    const trace = continueTrace(headers.traceparent);
    const inbound = headers['x-request-id'];
    // without a usable inbound id, the trace id names the request (one id to grep for, not two)
    const reqId = inbound !== undefined && REQUEST_ID.test(inbound) ? inbound : trace.traceId;
    const state = new RequestState(log, reqId, trace);
    ctx.state = state;
    const res = ctx.res;
    res.setHeader('X-Request-Id', reqId);
    res.setHeader('traceparent', trace.traceparent);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    try {
      await next();
    } catch (err) {
      mapError(ctx, err, state, metrics, shed);
    } finally {
      if (!res.headersSent) {
        res.setHeader('Content-Security-Policy', state.html ? HTML_CSP[state.html] : API_CSP);
        if (state.jsonText !== undefined && ctx.body === state.jsonText.text) res.setHeader('Content-Length', String(state.jsonText.bytes));
      }
      const ms = performance.now() - started;
      const route = routeOf(ctx);
      const status = ctx.status;
      metrics.recordRequest(ctx.method, route, status, ms / 1000);
      const msRounded = Math.round(ms * 1000) / 1000;
      traces.push({ traceparent: trace.traceparent, arrivedAt, method: ctx.method, route, status, ms: msRounded });
      // a shed request is expected under load: counted and summarised, never one warn line each
      const level = status >= 500 && !state.shed ? 'warn' : 'info';
      if (access.isLevelEnabled(level)) {
        access[level]({ reqId, traceId: trace.traceId, method: ctx.method, route, path: ctx.path, status, ms: msRounded }, 'request');
      }
    }
  };
}

/** Any failure → its HTTP answer; shed requests counted, other 5xx logged once with the request id. */
function mapError(ctx: Context, err: unknown, state: RequestState, metrics: Metrics, shed?: ShedSummary): void {
  const appErr = err instanceof AppError ? err : Errors.internal(err);
  if (SHED_CODES.has(appErr.code)) {
    state.shed = true;
    metrics.shed.inc({ code: appErr.code });
    shed?.note(appErr.code, routeOf(ctx));
  } else if (appErr.status >= 500) {
    // the body never carries internals
    state.log.error({ err: appErr.cause ?? err, code: appErr.code }, 'request failed');
  }
  if (appErr.code === 'CLIENT_CLOSED') {
    ctx.status = 499;
    return;
  }
  sendError(ctx, appErr);
}

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
