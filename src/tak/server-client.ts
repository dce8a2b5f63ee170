/**
 * The TAK Server client output: one outgoing stream to a TAK Server (TLS with a client certificate
 * on 8089, or plain TCP on 8087 where a server keeps its anonymous input). It streams each event as
 * XML, switches to TAK Protocol v1 frames when the server offers version 1 and accepts the request,
 * answers the server's pings and sends its own, and reconnects with exponential backoff and full
 * jitter. While it cannot send it holds a bounded number of events, drops the oldest beyond that
 * (counted), and flushes the rest on the next connection.
 */
import { readFile } from 'node:fs/promises';
import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { CotFields, CotOut, OutputState, TakOutput } from './output.js';
import {
  decodeTakMessage,
  eventType,
  eventXml,
  parseProtocolResponse,
  parseProtocolSupport,
  ping,
  pong,
  protocolRequest,
  StreamSplitter,
  streamFrame,
  streamXml,
  TAK_PROTOCOL_VERSION,
  TYPE_PING,
  TYPE_PROTOCOL_RESPONSE,
  TYPE_PROTOCOL_SUPPORT,
  type StreamMessage,
} from './protocol.js';

/**
 * Settings of the TAK Server client, plain values so the TAK thread can receive them. Wanted env
 * names (default): SVC_TAK_SERVER_ENABLED (false), SVC_TAK_SERVER_HOST (none; required when
 * enabled), SVC_TAK_SERVER_PORT (8089), SVC_TAK_SERVER_TLS (true), SVC_TAK_SERVER_P12 (null),
 * SVC_TAK_SERVER_P12_PASSWORD (null), SVC_TAK_SERVER_CERT (null), SVC_TAK_SERVER_KEY (null),
 * SVC_TAK_SERVER_CA (null), SVC_TAK_SERVER_SERVERNAME (null), SVC_TAK_SERVER_PROTOCOL (auto),
 * SVC_TAK_SERVER_BUFFER (1000), SVC_TAK_SERVER_BACKOFF_BASE_MS (1000), SVC_TAK_SERVER_BACKOFF_MAX_MS
 * (60000), SVC_TAK_SERVER_PING_INTERVAL_MS (15000), SVC_TAK_SERVER_NEGOTIATION_WAIT_MS (1000),
 * SVC_TAK_SERVER_RESPONSE_TIMEOUT_MS (5000), SVC_TAK_SERVER_CONNECT_TIMEOUT_MS (10000),
 * SVC_TAK_SERVER_MAX_MESSAGE_BYTES (1048576), SVC_TAK_SERVER_UID (drone-intel-svc).
 */
export interface ServerClientConfig {
  enabled: boolean;
  host: string;
  /** 8089 for TLS (TAK Server `stdssl`), 8087 for plain TCP (`stdtcp`, anonymous). */
  port: number;
  /** false: plain TCP, no certificates (only where the server allows anonymous input). */
  tls: boolean;
  /** The client certificate as PKCS#12 (`.p12`, as TAK Server's enrolment and data packages give it)… */
  p12Path: string | null;
  p12Password: string | null;
  /** …or as PEM certificate and key. */
  certPath: string | null;
  keyPath: string | null;
  /** PEM CA(s) that issued the server's certificate; null trusts Node's bundled public CAs only. The server is always verified. */
  caPath: string | null;
  /** Name to verify the server certificate against, when it differs from `host`. */
  servername: string | null;
  /** `auto`: v1 when the server offers it, else XML; `xml`: never negotiate. */
  protocol: 'auto' | 'xml';
  /** Events held while disconnected, at most; beyond it the oldest is dropped and counted. */
  bufferSize: number;
  /** Reconnect delay: uniform in [0, min(max, base · 2^attempt)] (full jitter). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Keep-alive ping period while connected; 0 sends none. */
  pingIntervalMs: number;
  /**
   * After connecting, how long to hold events back: for the server's v1 offer (`auto`) and, over TLS,
   * for a refusal of the client certificate, which TLS 1.3 delivers only after the handshake.
   */
  negotiationWaitMs: number;
  /** How long to wait for `t-x-takp-r` after asking for v1; then the connection is dropped and later ones stay XML. */
  responseTimeoutMs: number;
  /** TCP connect plus TLS handshake, at most. */
  connectTimeoutMs: number;
  /** One message from the server, at most (a peer sending more is cut off). */
  maxMessageBytes: number;
  /** The uid of this client's pings. */
  uid: string;
}

/** What kind of failure ended the last connection, for an operator to act on. */
export type ServerErrorKind =
  | 'certificate_files'
  | 'server_certificate_untrusted'
  | 'client_certificate_rejected'
  /** The server ended a TLS connection at once, without a byte or an alert: how a server that drops an untrusted client certificate silently looks. */
  | 'closed_after_handshake'
  | 'connect'
  | 'timeout'
  | 'protocol'
  | 'closed'
  | 'socket';

export interface ServerClientError {
  kind: ServerErrorKind;
  code: string | null;
  message: string;
  atMs: number;
}

/** Hooks a test may replace: the clock and the jitter source. */
export interface ServerClientDeps {
  now?: () => number;
  random?: () => number;
}

type Phase = 'stopped' | 'connecting' | 'negotiating' | 'connected' | 'backoff' | 'error';

// the verification errors Node reports when the server's certificate chain or name does not check out
const UNTRUSTED_SERVER = /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED|CERT_|ERR_TLS_CERT_ALTNAME_INVALID|HOSTNAME_MISMATCH)/;
// TLS alerts the server sends when it refuses the client's certificate
const REFUSED_CLIENT = /ALERT_(UNKNOWN_CA|BAD_CERTIFICATE|CERTIFICATE_REQUIRED|CERTIFICATE_UNKNOWN|CERTIFICATE_REVOKED|CERTIFICATE_EXPIRED|UNSUPPORTED_CERTIFICATE|ACCESS_DENIED|HANDSHAKE_FAILURE)/;

/** A connection that stayed up this long was a real one: the next failure starts the backoff over. */
const STABLE_MS = 5000;
/** A TLS connection the server ends this soon after the handshake, before either side sent a byte, was refused rather than used. */
const REFUSED_WITHIN_MS = 1000;

/** Full jitter: uniform in [0, min(max, base · 2^attempt)), so clients that failed together do not return together. */
export function backoffDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * cap);
}

function errorKind(code: string | null): ServerErrorKind {
  if (!code) return 'socket';
  if (UNTRUSTED_SERVER.test(code)) return 'server_certificate_untrusted';
  if (REFUSED_CLIENT.test(code)) return 'client_certificate_rejected';
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'connect';
  return 'socket';
}

export class ServerClientOutput implements TakOutput {
  readonly name = 'server' as const;
  private readonly now: () => number;
  private readonly random: () => number;
  private phase: Phase = 'stopped';
  private socket: Socket | null = null;
  private splitter: StreamSplitter | null = null;
  /** The wire format of the current connection. */
  private protocol: 'xml' | 'v1' = 'xml';
  /** Where this connection's v1 negotiation stands; while `awaiting`, no XML may be sent. */
  private negotiation: 'none' | 'awaiting' | 'done' = 'none';
  /** A server once failed to answer the v1 request: later connections stay XML. */
  private v1Refused = false;
  private offered: number[] | null = null;
  private readonly buffer: CotOut[] = [];
  /** The socket's own buffer is full: hold events until it drains. */
  private blocked = false;
  private attempt = 0;
  private connectedAtMs: number | null = null;
  private connectStartedAtMs = 0;
  /** Bytes received and written on the current connection. */
  private bytesIn = 0;
  private bytesOut = 0;
  private nextRetryAtMs: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private lastError: ServerClientError | null = null;
  private counts = { sent: 0, dropped: 0, errors: 0, connects: 0, reconnects: 0, received: 0, pingsSent: 0, pongsSent: 0, rejectedMessages: 0 };
  private closing: Promise<void> | null = null;

  constructor(
    private readonly cfg: Readonly<ServerClientConfig>,
    deps: ServerClientDeps = {},
  ) {
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  start(): Promise<void> {
    if (this.phase !== 'stopped' || this.closing) return Promise.resolve();
    if (!this.cfg.host) {
      // an empty host would make Node dial localhost: say what is missing instead of sending anywhere
      this.phase = 'error';
      this.fail({ kind: 'connect', code: null, message: 'no TAK Server host is configured', atMs: this.now() });
      return Promise.resolve();
    }
    void this.connect();
    return Promise.resolve();
  }

  send(event: CotOut): void {
    if (this.phase === 'connected' && !this.blocked && this.buffer.length === 0) {
      this.write(event);
      return;
    }
    this.hold(event);
  }

  status(): OutputState {
    const c = this.counts;
    return {
      wired: true,
      state: this.phase,
      sent: c.sent,
      dropped: c.dropped,
      errors: c.errors,
      detail: {
        host: this.cfg.host,
        port: this.cfg.port,
        tls: this.cfg.tls,
        protocol: this.phase === 'connected' ? this.protocol : null,
        serverVersions: this.offered,
        buffered: this.buffer.length,
        bufferSize: this.cfg.bufferSize,
        connects: c.connects,
        reconnects: c.reconnects,
        connectedSinceMs: this.connectedAtMs,
        nextRetryAtMs: this.phase === 'backoff' ? this.nextRetryAtMs : null,
        received: c.received,
        rejectedMessages: c.rejectedMessages,
        pingsSent: c.pingsSent,
        pongsSent: c.pongsSent,
        lastError: this.lastError,
      },
    };
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.phase = 'stopped';
    this.clearTimers();
    const socket = this.socket;
    this.socket = null;
    this.closing = socket && !socket.destroyed ? new Promise<void>((resolve) => socket.once('close', () => resolve())) : Promise.resolve();
    socket?.destroy();
    return this.closing;
  }

  // ------------------------------------------------------------ connecting

  private async connect(): Promise<void> {
    this.phase = 'connecting';
    this.nextRetryAtMs = null;
    let socket: Socket;
    try {
      socket = this.cfg.tls ? tlsConnect(await this.tlsOptions()) : netConnect({ host: this.cfg.host, port: this.cfg.port });
    } catch (err) {
      const code = (err as { code?: string }).code ?? null;
      // OpenSSL 1.x encrypts .p12 files with RC2, which the OpenSSL 3 inside Node no longer reads
      const hint = code === 'ERR_CRYPTO_UNSUPPORTED_OPERATION' && this.cfg.p12Path ? ' (a .p12 with legacy RC2 encryption: convert it to PEM with `openssl pkcs12 -legacy` and use the cert and key settings)' : '';
      this.fail({ kind: 'certificate_files', code, message: (err as Error).message + hint, atMs: this.now() });
      this.retryLater();
      return;
    }
    if (this.phase !== 'connecting') {
      socket.destroy(); // closed while the certificate files were read
      return;
    }
    this.socket = socket;
    this.splitter = new StreamSplitter(this.cfg.maxMessageBytes);
    this.protocol = 'xml';
    this.negotiation = 'none';
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.offered = null;
    this.connectStartedAtMs = this.now();
    this.blocked = false;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.setTimeout(this.cfg.connectTimeoutMs);
    socket.on('timeout', () => this.drop(socket, { kind: 'timeout', code: null, message: `no connection within ${this.cfg.connectTimeoutMs} ms`, atMs: this.now() }));
    socket.once(this.cfg.tls ? 'secureConnect' : 'connect', () => this.opened(socket));
    socket.on('data', (chunk: Buffer) => this.received(socket, chunk));
    socket.on('drain', () => this.drained(socket));
    socket.on('error', (err: Error & { code?: string }) => {
      const code = err.code ?? null;
      this.fail({ kind: errorKind(code), code, message: err.message, atMs: this.now() });
    });
    socket.on('close', () => this.closed(socket));
  }

  private async tlsOptions(): Promise<ConnectionOptions> {
    const c = this.cfg;
    const opts: ConnectionOptions = { host: c.host, port: c.port, rejectUnauthorized: true, minVersion: 'TLSv1.2' };
    const name = c.servername ?? (isIP(c.host) ? null : c.host);
    if (name) opts.servername = name;
    if (c.caPath) opts.ca = await readFile(c.caPath);
    if (c.p12Path) {
      opts.pfx = await readFile(c.p12Path);
      if (c.p12Password !== null) opts.passphrase = c.p12Password;
    } else if (c.certPath && c.keyPath) {
      opts.cert = await readFile(c.certPath);
      opts.key = await readFile(c.keyPath);
    }
    return opts;
  }

  private opened(socket: Socket): void {
    if (socket !== this.socket) return;
    socket.setTimeout(0);
    this.counts.connects++;
    this.connectedAtMs = this.now();
    const awaitOffer = this.cfg.protocol === 'auto' && !this.v1Refused;
    if ((awaitOffer || this.cfg.tls) && this.cfg.negotiationWaitMs > 0) {
      this.phase = 'negotiating';
      this.timer = setTimeout(() => this.ready(socket), this.cfg.negotiationWaitMs);
    } else {
      this.ready(socket);
    }
  }

  /** Streaming can begin (or resume after negotiation): flush what was held, start pinging. */
  private ready(socket: Socket): void {
    if (socket !== this.socket) return;
    this.clearTimer();
    this.phase = 'connected';
    this.flush();
    if (this.cfg.pingIntervalMs > 0 && !this.pingTimer) {
      this.pingTimer = setInterval(() => this.keepAlive(socket), this.cfg.pingIntervalMs);
      this.pingTimer.unref();
    }
  }

  private fail(e: ServerClientError): void {
    this.counts.errors++;
    this.lastError = e;
  }

  /** Ends a connection for a reason of ours (timeout, protocol); the close handler schedules the retry. */
  private drop(socket: Socket, e: ServerClientError): void {
    if (socket !== this.socket) return;
    this.fail(e);
    socket.destroy();
  }

  private closed(socket: Socket): void {
    if (socket !== this.socket) return;
    this.socket = null;
    this.splitter = null;
    const wasUp = this.connectedAtMs !== null;
    if (wasUp && this.now() - (this.connectedAtMs as number) >= STABLE_MS) this.attempt = 0;
    if (!this.lastError || this.lastError.atMs < this.connectStartedAtMs) {
      const now = this.now();
      if (this.cfg.tls && wasUp && this.bytesIn === 0 && this.bytesOut === 0 && now - (this.connectedAtMs as number) < REFUSED_WITHIN_MS) {
        this.fail({ kind: 'closed_after_handshake', code: null, message: 'the server closed the TLS connection right after the handshake without a word: it most likely refused the client certificate', atMs: now });
      } else {
        this.fail({ kind: 'closed', code: null, message: wasUp ? 'the server closed the connection' : 'the server closed the connection before it was established', atMs: now });
      }
    }
    this.connectedAtMs = null;
    this.clearTimers();
    if (this.phase !== 'stopped') this.retryLater();
  }

  private retryLater(): void {
    if (this.phase === 'stopped') return;
    const delay = backoffDelayMs(this.attempt, this.cfg.backoffBaseMs, this.cfg.backoffMaxMs, this.random);
    this.attempt++;
    this.phase = 'backoff';
    this.nextRetryAtMs = this.now() + delay;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.counts.reconnects++;
      void this.connect();
    }, delay);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private clearTimers(): void {
    this.clearTimer();
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  // ------------------------------------------------------------ sending

  private hold(event: CotOut): void {
    if (this.cfg.bufferSize <= 0) {
      this.counts.dropped++;
      return;
    }
    if (this.buffer.length >= this.cfg.bufferSize) {
      this.buffer.shift();
      this.counts.dropped++;
    }
    this.buffer.push(event);
  }

  private flush(): void {
    while (this.phase === 'connected' && !this.blocked && this.buffer.length > 0) {
      this.write(this.buffer.shift() as CotOut);
    }
  }

  private write(event: CotOut): void {
    let bytes: Buffer | string;
    try {
      bytes = this.protocol === 'v1' ? streamFrame(event.fields) : streamXml(event.xml);
    } catch (err) {
      // an event whose fields cannot be encoded (a negative time…) is the feed's fault: count it, keep going
      this.fail({ kind: 'protocol', code: null, message: `event ${event.fields.uid} not encodable: ${(err as Error).message}`, atMs: this.now() });
      this.counts.dropped++;
      return;
    }
    this.counts.sent++;
    this.raw(bytes);
  }

  /** Writes bytes; when the socket's buffer is full, later events wait in ours. */
  private raw(bytes: Buffer | string): void {
    const socket = this.socket;
    if (!socket || socket.destroyed) return;
    this.bytesOut += typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length;
    if (!socket.write(bytes)) this.blocked = true;
  }

  private drained(socket: Socket): void {
    if (socket !== this.socket) return;
    this.blocked = false;
    this.flush();
  }

  /** A control event in the connection's current format. */
  private control(fields: CotFields): void {
    this.raw(this.protocol === 'v1' ? streamFrame(fields) : streamXml(eventXml(fields)));
  }

  private keepAlive(socket: Socket): void {
    if (socket !== this.socket || this.phase !== 'connected') return;
    this.counts.pingsSent++;
    this.control(ping(this.now(), `${this.cfg.uid}-ping`));
  }

  // ------------------------------------------------------------ receiving

  private received(socket: Socket, chunk: Buffer): void {
    if (socket !== this.socket || !this.splitter) return;
    this.bytesIn += chunk.length;
    this.splitter.push(chunk);
    for (let m = this.splitter.next(); m; m = this.splitter?.next() ?? null) {
      if (socket !== this.socket) return;
      this.handle(socket, m);
    }
  }

  private handle(socket: Socket, m: StreamMessage): void {
    if (m.kind === 'error') {
      this.drop(socket, { kind: 'protocol', code: null, message: m.reason, atMs: this.now() });
      return;
    }
    this.counts.received++;
    if (m.kind === 'v1') {
      const r = decodeTakMessage(m.message);
      if (!r.ok) {
        this.counts.rejectedMessages++;
        return;
      }
      if (r.event?.type === TYPE_PING) this.answerPing();
      return;
    }
    const type = eventType(m.xml);
    if (type === TYPE_PROTOCOL_SUPPORT) this.offer(socket, m.xml);
    else if (type === TYPE_PROTOCOL_RESPONSE) this.response(socket, m.xml);
    else if (type === TYPE_PING) this.answerPing();
  }

  private answerPing(): void {
    // after the v1 request no XML may be sent, and no frame before the answer: the pong waits for neither
    if (this.negotiation === 'awaiting') return;
    this.counts.pongsSent++;
    this.control(pong(this.now(), `${this.cfg.uid}-pong`));
  }

  /** The server's `t-x-takp-v`: ask for v1 when it is offered and wanted. */
  private offer(socket: Socket, xml: string): void {
    const versions = parseProtocolSupport(xml);
    if (!versions) {
      this.counts.rejectedMessages++;
      return;
    }
    this.offered = versions;
    if (this.cfg.protocol !== 'auto' || this.v1Refused || this.negotiation !== 'none' || !versions.includes(TAK_PROTOCOL_VERSION)) {
      if (this.phase === 'negotiating') this.ready(socket);
      return;
    }
    this.clearTimer();
    this.phase = 'negotiating';
    this.raw(streamXml(eventXml(protocolRequest(this.now(), TAK_PROTOCOL_VERSION, this.cfg.uid))));
    this.negotiation = 'awaiting';
    this.timer = setTimeout(() => {
      this.v1Refused = true;
      this.drop(socket, { kind: 'protocol', code: null, message: `no t-x-takp-r within ${this.cfg.responseTimeoutMs} ms; later connections stay XML`, atMs: this.now() });
    }, this.cfg.responseTimeoutMs);
  }

  /** The server's `t-x-takp-r`: frames from now on when it says yes, XML again when it says no. */
  private response(socket: Socket, xml: string): void {
    if (this.negotiation !== 'awaiting') return;
    const status = parseProtocolResponse(xml);
    if (status === null) {
      this.counts.rejectedMessages++;
      return;
    }
    this.negotiation = 'done';
    if (status) {
      this.protocol = 'v1';
      this.splitter?.useV1();
    }
    this.ready(socket);
  }
}
