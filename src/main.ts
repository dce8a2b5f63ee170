/**
 * Process entry: load and validate config, build the app, listen, and shut down gracefully on
 * SIGTERM/SIGINT (stop accepting, let in-flight requests finish, close the pool, exit under 5 s).
 */
import { createServer } from 'node:http';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/load.js';
import { KeyError } from './ledger/keys.js';
import { LockHeldError } from './ledger/store/file-store.js';
import { createLogger } from './observability/logger.js';

const REFUSED_BODY = '{"detail":"Too many connections, retry later"}';
const REFUSED =
  `HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: ${REFUSED_BODY.length}\r\n` +
  `Retry-After: 1\r\nConnection: close\r\n\r\n${REFUSED_BODY}`;

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
  let built;
  try {
    built = await buildApp(config, { log });
  } catch (err) {
    if (err instanceof KeyError || err instanceof LockHeldError) {
      process.stderr.write(`${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  const handle = built.app.callback();
  let stopping = false;
  const guard = config.guard;
  // Koa's handler settles every request itself; the returned promise carries nothing to await
  const server = createServer(
    {
      headersTimeout: guard.headersTimeoutMs,
      requestTimeout: guard.requestTimeoutMs,
      // how often Node checks those two timeouts (its default, 30 s, would let a 10 s limit run to 40 s)
      connectionsCheckingInterval: Math.max(100, Math.min(5000, Math.floor(guard.headersTimeoutMs / 4))),
    },
    (req, res) => {
      // while shutting down, every answer says the connection ends with it (no ECONNRESET on a reuse)
      if (stopping) res.setHeader('Connection', 'close');
      void handle(req, res);
    },
  );
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  // the cap is enforced by hand so that a refused socket gets a real answer, not a silent close
  let open = 0;
  server.on('connection', (socket) => {
    if (open >= guard.maxConnections) {
      built.services.metrics.connectionsRefused?.inc();
      socket.end(REFUSED);
      socket.destroySoon();
      return;
    }
    open++;
    socket.once('close', () => open--);
    socket.setKeepAlive(true);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, resolve);
  });
  const addr = server.address();
  log.info({ port: typeof addr === 'object' && addr ? addr.port : config.server.port, host: config.server.host }, 'listening');

  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    // the flight stops first, then every stream ends with `event: shutdown`: no stream is left to
    // be cut at the timeout, so a shutdown with viewers takes as long as its in-flight requests
    built.drain();
    // hard stop if in-flight work does not finish in time
    const timer = setTimeout(() => {
      log.warn('shutdown timeout: closing remaining connections');
      server.closeAllConnections();
    }, config.server.shutdownTimeoutMs);
    timer.unref();
    // keep-alive sockets become idle as their last response ends: close them as they do
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    server.close(() => {
      clearInterval(sweep);
      built.close().then(
        () => {
          clearTimeout(timer);
          log.info('stopped');
        },
        (err: unknown) => {
          log.error({ err }, 'error while closing');
          process.exitCode = 1;
        },
      );
    });
    server.closeIdleConnections();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exitCode = 1;
});
