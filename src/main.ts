/**
 * Process entry: load and validate config, build the app, listen, and shut down gracefully on
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish (cut at server.shutdownTimeoutMs),
 * stop the worker threads, close the features; the process is gone by the timeout plus
 * SHUTDOWN_MARGIN_MS whatever still holds it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildApp } from './app.js';
import { API_VERSION } from './core/doctrine.js';
import { ConfigError, loadConfig } from './config/load.js';
import { listenFailure, openWritesWarning } from './http/listen.js';
import { createHttpServer, drainHttpServer } from './http/server.js';
import { KeyError } from './ledger/keys.js';
import { LockHeldError } from './ledger/store/file-store.js';
import { createLogger } from './observability/logger.js';
import { allocatorAdvice, allocatorFacts } from './platform/allocator.js';
import { heapLimitAdvice, heapLimitMb } from './platform/heap-limit.js';
import { SHUTDOWN_MARGIN_MS } from './shutdown.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  const log = createLogger(config.log.level);
  const advice = allocatorAdvice(allocatorFacts());
  if (advice) log.warn({ env: 'MALLOC_TOP_PAD_' }, advice);
  const heapLimit = heapLimitMb();
  const heapAdvice = heapLimitAdvice(heapLimit);
  if (heapAdvice) log.warn({ heapLimitMb: Math.round(heapLimit) }, heapAdvice);
  // the port opens before the ledger is opened and the threads start: until the app is installed
  // every request is answered 503 `starting` (with Retry-After), never refused
  let stopping = false;
  let serve: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null = null;
  let refusedCounter: { inc(): void } | undefined = undefined;
  const server = createHttpServer((req, res) => (serve ? serve(req, res) : answerStarting(req, res)), {
    guard: config.guard,
    keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
    stopping: () => stopping,
    onRefused: () => refusedCounter?.inc(),
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.server.port, config.server.host, resolve);
    });
  } catch (err) {
    const why = listenFailure(err as NodeJS.ErrnoException, config.server.host, config.server.port);
    if (why === null) throw err;
    process.stderr.write(`${why}\n`);
    process.exitCode = 2;
    return;
  }
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
  log.info({ port, host: config.server.host }, 'listening');
  // the address bound, not the one configured: a host name is judged by what it resolved to
  const openWrites = openWritesWarning(typeof addr === 'object' && addr ? addr.address : config.server.host, port, config.guard.writeTokens);
  if (openWrites) log.warn({ host: config.server.host, port, setting: 'guard.writeTokens' }, openWrites);
  let built;
  try {
    built = await buildApp(config, { log });
  } catch (err) {
    server.close();
    server.closeAllConnections();
    if (err instanceof KeyError || err instanceof LockHeldError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  serve = built.app.callback();
  refusedCounter = built.services.metrics.connectionsRefused;
  log.info({ startupMs: Math.round(performance.now()) }, 'serving');
  // ready = /health passes: every pool thread up and, with pool.warmup, every kernel run once on each
  const pool = built.services.pool;
  void pool.ready().then(() => {
    const warm = pool.warmup();
    log.info({ startupMs: Math.round(performance.now()), warmup: warm.enabled, warmMs: warm.threads.map((t) => Math.round(t.ms)), kernelsWarmed: warm.threads.map((t) => t.kernels) }, 'ready');
  });

  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const started = performance.now();
    const since = (): number => Math.round(performance.now() - started);
    let phase = 'connections';
    log.info({ signal }, 'shutting down');
    // the flight stops first, then every stream ends with `event: shutdown`: no stream is left to
    // be cut at the timeout, so a shutdown with viewers takes as long as its in-flight requests
    built.drain();
    // hard stop if in-flight work does not finish in time
    const cut = setTimeout(() => {
      log.warn('shutdown timeout: closing remaining connections');
      server.closeAllConnections();
    }, config.server.shutdownTimeoutMs);
    cut.unref();
    // the last resort: whatever still holds the process (a hung database, a stuck thread) is left behind
    const deadline = setTimeout(() => {
      log.warn({ phase, ms: since() }, 'shutdown deadline: exiting with work still open');
      process.exit();
    }, config.server.shutdownTimeoutMs + SHUTDOWN_MARGIN_MS);
    deadline.unref();
    const timings: Record<string, number> = {};
    drainHttpServer(server)
      .then(async () => {
        clearTimeout(cut);
        timings.connectionsMs = since();
        // every answer is out: a thread still busy (warming up, or past a deadline) has nobody to answer
        phase = 'worker threads';
        await built.services.pool.destroy();
        timings.threadsMs = since();
        phase = 'features';
        await built.close();
      })
      .then(
        () => {
          clearTimeout(deadline);
          log.info({ ...timings, ms: since() }, 'stopped');
        },
        (err: unknown) => {
          clearTimeout(deadline);
          log.error({ err, phase }, 'error while closing');
          process.exitCode = 1;
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** The answer to every request while the service starts: 503, and for /health the health document saying so. */
function answerStarting(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const health = /\/health\/?(\?|$)/.test(req.url ?? '');
  const body = JSON.stringify(
    health
      ? { status: 'fail', version: API_VERSION, serviceId: 'svc', output: 'starting: opening the ledger and starting the worker threads' }
      : { detail: 'Service starting: the ledger is being opened and the worker threads started; retry shortly' },
  );
  res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Retry-After': '1', 'Cache-Control': 'no-store' });
  res.end(body);
  return Promise.resolve();
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
});
