/**
 * The middleware chain, outermost first: request context (id, trace, headers, log line, metrics),
 * then the error mapper, the one place where errors become HTTP.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { AppError, Errors } from './errors.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { continueTrace, type Ring, type TraceRecord } from '../observability/traces.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const API_CSP = "default-src 'none'; frame-ancestors 'none'";
const HTML_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'";

export interface ContextDeps {
  log: Logger;
  metrics: Metrics;
  traces: Ring<TraceRecord>;
}

export function requestContext({ log, metrics, traces }: ContextDeps) {
  return async function requestContextMiddleware(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const inbound = ctx.get('x-request-id');
    const reqId = REQUEST_ID.test(inbound) ? inbound : randomUUID();
    const trace = continueTrace(ctx.get('traceparent') || undefined);
    ctx.state.reqId = reqId;
    ctx.state.trace = trace;
    ctx.state.log = log.child({ reqId, traceId: trace.traceId });
    ctx.set('X-Request-Id', reqId);
    ctx.set('traceparent', trace.traceparent);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
    try {
      await next();
    } finally {
      ctx.set('Content-Security-Policy', ctx.state.html ? HTML_CSP : API_CSP);
      const ms = performance.now() - started;
      const route = ctx._matchedRoute ? String(ctx._matchedRoute) : 'unmatched';
      const status = ctx.status;
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, ms / 1000);
      traces.push({ traceparent: trace.traceparent, route, status, ms: Math.round(ms * 1000) / 1000 });
      const line = { method: ctx.method, route, path: ctx.path, status, ms: Math.round(ms * 1000) / 1000 };
      if (status >= 500) (ctx.state.log as Logger).warn(line, 'request');
      else (ctx.state.log as Logger).info(line, 'request');
    }
  };
}

function send(ctx: Context, err: AppError): void {
  ctx.status = err.status;
  for (const [k, v] of Object.entries(err.headers)) ctx.set(k, v);
  ctx.type = 'application/json';
  ctx.body = err.body;
}

export function errorMapper() {
  return async function errorMapperMiddleware(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      // the router answers unmatched paths and wrong methods without a body; give them ours
      if (ctx.status === 405 && ctx.body == null) send(ctx, Errors.methodNotAllowed(ctx.response.get('Allow')));
      else if (ctx.status === 404 && ctx.body == null) send(ctx, Errors.notFound());
    } catch (err) {
      const appErr = err instanceof AppError ? err : Errors.internal(err);
      if (appErr.status >= 500) {
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
