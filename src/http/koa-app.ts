/** The Koa application around a route table: request context and errors, the guards, the routes. */
import Koa from 'koa';
import Router from '@koa/router';
import { requestContext, ShedSummary, type ContextDeps } from './middleware.js';
import { mountRoutes, type RouteDef } from './route.js';
import { useBoundedQuery } from './query.js';

export interface KoaAppOptions extends ContextDeps {
  routes: readonly RouteDef[];
  jsonLimitBytes: number;
  /** Default 10 s (guard.bodyTimeoutMs). */
  bodyTimeoutMs?: number;
  /** Default 10 s (guard.shedLogIntervalMs). */
  shedLogIntervalMs?: number;
  /** Runs before the routes (e.g. the write guard). */
  before?: readonly Koa.Middleware[];
}

export function createKoaApp({ routes, jsonLimitBytes, bodyTimeoutMs, shedLogIntervalMs, before = [], log, metrics, traces, sheds }: KoaAppOptions): Koa {
  const app = new Koa({ proxy: false });
  useBoundedQuery(app);
  const router = new Router();
  app.use(requestContext({ log, metrics, traces, sheds }, new ShedSummary(log, shedLogIntervalMs ?? 10_000)));
  for (const m of before) app.use(m);
  app.use(mountRoutes(router, routes, { jsonLimitBytes, bodyTimeoutMs: bodyTimeoutMs ?? 10_000 }));
  app.use(router.routes());
  // errors our middleware already answered; a client closing a stream is not an error
  app.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'ERR_STREAM_PREMATURE_CLOSE' || err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
    log.error({ err }, 'unhandled koa error');
  });
  return app;
}
