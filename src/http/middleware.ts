/**
 * The outermost middleware: request context (id, trace, headers, log line, metrics) and the one
 * place where errors become HTTP. One layer, not two: every Koa layer costs a promise and a
 * microtask per request.
 */
import type { Context, Next } from 'koa';
import { API_CSP, HTML_CSP, type HtmlPolicy } from './csp.js';
import { AppError, Errors, fromServiceError, SHED_CODES } from './errors.js';
import { ServiceError } from '../lib/service-error.js';
import { sendJsonText, type JsonText } from './json-text.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { Ring } from '../lib/ring.js';
import { continueTrace, type TraceContext, type TraceRecord } from '../observability/traces.js';
import type { ShedGovernor } from './shed.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ContextDeps {
  log: Logger;
  metrics: Metrics;
  traces: Ring<TraceRecord>;
  /** Answers shed requests (shed.ts); without one they are answered at once as thrown. */
  sheds?: { governor: ShedGovernor; clientOf: (ctx: Context) => string };
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

export function requestContext({ log, metrics, traces, sheds }: ContextDeps, shed?: ShedSummary) {
  // the access line's fields are ours (ids, method, route template, path without its query, status,
  // time), so it skips the redaction every other line goes through: its wildcard paths cost ~3.4 µs
  // a line, more than the rest of the line
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
      const holdMs = mapError(ctx, err, state, metrics, shed, sheds);
      if (holdMs > 0) await held(ctx, holdMs);
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
      // a shed request is expected under load: counted and summarised, never a line each
      const level = status >= 500 ? 'warn' : 'info';
      if (!state.shed && access.isLevelEnabled(level)) {
        access[level]({ reqId, traceId: trace.traceId, method: ctx.method, route, path: ctx.path, status, ms: msRounded }, 'request');
      }
    }
  };
}

/** Waits `ms` before the answer is sent, or less if the client leaves first. */
function held(ctx: Context, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const res = ctx.res;
    const done = (): void => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

/**
 * Any failure → its HTTP answer; shed requests counted, other 5xx logged once with the request id.
 * Returns how long a shed answer is to be held before it is sent (0: at once).
 */
function mapError(ctx: Context, err: unknown, state: RequestState, metrics: Metrics, shed?: ShedSummary, sheds?: ContextDeps['sheds']): number {
  let appErr = err instanceof AppError ? err : err instanceof ServiceError ? fromServiceError(err) : Errors.internal(err);
  let holdMs = 0;
  if (SHED_CODES.has(appErr.code)) {
    state.shed = true;
    metrics.shed.inc({ code: appErr.code });
    shed?.note(appErr.code, routeOf(ctx));
    if (sheds) ({ err: appErr, holdMs } = sheds.governor.answer(appErr, sheds.clientOf(ctx)));
  } else if (appErr.status >= 500) {
    // the body never carries internals
    state.log.error({ err: appErr.cause ?? err, code: appErr.code }, 'request failed');
  }
  if (appErr.code === 'CLIENT_CLOSED') {
    ctx.status = 499;
    return 0;
  }
  sendError(ctx, appErr);
  return holdMs;
}

/** Shed requests per code and route, logged as one line per interval so an overload cannot flood the log. */
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
