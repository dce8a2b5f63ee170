/**
 * The node:http server around the Koa handler: head and request timeouts, the header size limit,
 * the connection caps (in all, and per client address so one address cannot take them all), and
 * answers for requests Node refuses before Koa ever sees them (oversized head, malformed HTTP, head
 * timeout). Those answers are JSON bodies from the error catalogue, written on the socket, so a
 * client parses them like every other error: Node's own are empty-bodied.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { Errors, type AppError } from './errors.js';
import type { GuardConfig } from './guard.config.js';
import { addressKey, ClientAddresses } from './client-address.js';

/** A complete HTTP/1.1 answer for a raw socket: the error's JSON body, then the connection ends. */
export function rawResponse(err: AppError): string {
  const body = JSON.stringify(err.body);
  const head = [
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'X-Content-Type-Options: nosniff',
    ...Object.entries(err.headers).map(([k, v]) => `${k}: ${v}`),
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** What Node's parser or timers refused, as the client's error (never a 5xx: nothing of ours failed). */
export function clientErrorFor(err: NodeJS.ErrnoException, guard: Pick<GuardConfig, 'maxHeaderBytes' | 'headersTimeoutMs' | 'requestTimeoutMs'>): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return Errors.headersTooLarge(guard.maxHeaderBytes);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      // Node uses this code for both timeouts; the head's is the shorter and the usual one
      return Errors.requestTimeout('Request', Math.min(guard.headersTimeoutMs, guard.requestTimeoutMs));
    default:
      return Errors.badRequest(`Malformed HTTP request${err.code ? ` (${err.code})` : ''}`);
  }
}

/** After an answer to a refused request, unread bytes are drained this long before the socket is
 * destroyed: closing with unread data sends a TCP reset, which can discard the answer at the client. */
const LINGER_MS = 1000;

const answered = new WeakSet<Socket>();

function onClientError(guard: GuardConfig, err: NodeJS.ErrnoException, socket: Socket): void {
  // the parser reports again for every further chunk of the same broken request: answer once
  if (answered.has(socket)) return;
  answered.add(socket);
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // as Node does: no answer if a response on this socket has already started (it would corrupt it)
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(rawResponse(clientErrorFor(err, guard)));
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

export interface HttpServerOptions {
  guard: GuardConfig;
  keepAliveTimeoutMs: number;
  /** True once shutdown began: every answer then closes its connection. */
  stopping?: () => boolean;
  /** Counts sockets refused at a connection cap (in all or per address). */
  onRefused?: () => void;
}

export function createHttpServer(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, opts: HttpServerOptions): Server {
  const { guard } = opts;
  const server = createServer(
    {
      headersTimeout: guard.headersTimeoutMs,
      requestTimeout: guard.requestTimeoutMs,
      // how often Node checks those two timeouts (its default, 30 s, would let a 10 s limit run to 40 s)
      connectionsCheckingInterval: Math.max(100, Math.min(5000, Math.floor(guard.headersTimeoutMs / 4))),
      // Node's 16 KiB would refuse a legal `request` parameter (see MIN_HEADER_BYTES)
      maxHeaderSize: guard.maxHeaderBytes,
    },
    (req, res) => {
      // while shutting down, every answer says the connection ends with it (no ECONNRESET on a reuse);
      // Node writes the header itself, so an error answer that clears the headers keeps it
      if (opts.stopping?.()) res.shouldKeepAlive = false;
      // Koa's handler settles every request itself; the returned promise carries nothing to await
      void handle(req, res);
    },
  );
  server.keepAliveTimeout = opts.keepAliveTimeoutMs;
  trackForDrain(server);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => onClientError(guard, err, socket));
  // the caps are enforced by hand so that a refused socket gets a real answer, not a silent close
  const refused = rawResponse(Errors.capacity('Too many connections', 1));
  const proxies = new ClientAddresses(guard.trustProxy);
  const byAddress = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress;
    // a trusted proxy carries many clients: it is held to the global cap only
    const key = proxies.isTrusted(peer) ? null : addressKey(peer);
    const mine = key === null ? 0 : (byAddress.get(key) ?? 0);
    if (open >= guard.maxConnections || mine >= guard.maxConnectionsPerAddress) {
      opts.onRefused?.();
      socket.end(refused);
      socket.destroySoon();
      return;
    }
    open++;
    if (key !== null) byAddress.set(key, mine + 1);
    socket.once('close', () => {
      open--;
      if (key === null) return;
      const left = byAddress.get(key)! - 1;
      if (left === 0) byAddress.delete(key);
      else byAddress.set(key, left);
    });
    socket.setKeepAlive(true);
  });
  return server;
}

/** During a drain a kept-alive socket is closed only after this long without a byte or an answer:
 * a client reusing it sooner is answered (with `Connection: close`) instead of cut mid-request. */
export const DRAIN_IDLE_MS = 1000;
const DRAIN_SWEEP_MS = 50;

interface Tracked {
  /** Answers under way on the socket. */
  busy: number;
  idleSince: number;
  bytesRead: number;
  ending: boolean;
}

interface DrainState {
  sockets: Map<Socket, Tracked>;
  answers: Set<ServerResponse>;
}

const drainStates = new WeakMap<Server, DrainState>();

function trackForDrain(server: Server): void {
  const state: DrainState = { sockets: new Map(), answers: new Set() };
  drainStates.set(server, state);
  server.on('connection', (socket: Socket) => {
    state.sockets.set(socket, { busy: 0, idleSince: performance.now(), bytesRead: 0, ending: false });
    socket.once('close', () => state.sockets.delete(socket));
  });
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const t = state.sockets.get(req.socket);
    if (t) t.busy++;
    state.answers.add(res);
    res.once('close', () => {
      state.answers.delete(res);
      if (!t) return;
      t.busy--;
      t.idleSince = performance.now();
      t.bytesRead = req.socket.bytesRead;
    });
  });
}

/**
 * Graceful close: stops accepting, makes every answer not yet started end its connection, and ends
 * kept-alive sockets (FIN, never a reset) once idle for DRAIN_IDLE_MS. Resolves when every
 * connection has closed; `server.closeAllConnections()` cuts what is left. Not `server.close()`:
 * Node's destroys idle sockets at once, resetting a request that is just arriving on one.
 */
export function drainHttpServer(server: Server): Promise<void> {
  const state = drainStates.get(server);
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  if (!state) return closed;
  for (const res of state.answers) if (!res.headersSent) res.shouldKeepAlive = false;
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [socket, t] of state.sockets) {
      if (t.busy > 0 || t.ending) continue;
      // bytes since the last look: a request is arriving on it
      if (socket.bytesRead !== t.bytesRead) {
        t.bytesRead = socket.bytesRead;
        t.idleSince = now;
        continue;
      }
      if (now - t.idleSince < DRAIN_IDLE_MS) continue;
      t.ending = true;
      socket.end();
      const linger = setTimeout(() => socket.destroy(), LINGER_MS);
      linger.unref();
      socket.once('close', () => clearTimeout(linger));
    }
  }, DRAIN_SWEEP_MS);
  return closed.finally(() => clearInterval(sweep));
}
