/**
 * The streaming listener: a TAK server of our own that ATAK, WinTAK and iTAK "add" as a streaming
 * connection. It accepts TLS clients whose certificate the operator's CA issued, offers TAK
 * Protocol v1, gives each new client the current picture at once, then fans every event out to all
 * clients. A client that does not keep up is dropped when its unsent bytes pass its bound, so a
 * slow phone costs the service and the other clients nothing.
 */
import { readFile } from 'node:fs/promises';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { ListenerClient, WireMessage, type ClientEvents, type ClientSnapshot } from './listener-client.js';
import type { CotOut, OutputState, TakOutput } from './output.js';

/**
 * Settings of the listener output. Env names and defaults (off by default):
 *   SVC_TAK_LISTENER_ENABLED            false
 *   SVC_TAK_LISTENER_HOST               127.0.0.1   (0.0.0.0 for ATAK on the LAN: an explicit choice)
 *   SVC_TAK_LISTENER_PORT               8089
 *   SVC_TAK_LISTENER_TRANSPORT          tls         (tcp: plain TCP, no encryption, no client auth)
 *   SVC_TAK_LISTENER_CERT               null        PEM server certificate (chain) path; required for tls
 *   SVC_TAK_LISTENER_KEY                null        PEM server key path; required for tls
 *   SVC_TAK_LISTENER_CA                 null        PEM CA path that issues client certificates; required for tls
 *   SVC_TAK_LISTENER_MAX_CLIENTS        16
 *   SVC_TAK_LISTENER_CLIENT_BUFFER_BYTES 1048576    unsent bytes per client before it is dropped
 *   SVC_TAK_LISTENER_PING_INTERVAL_MS   30000       keep-alive; a client silent 3 intervals is closed; 0: off
 *   SVC_TAK_LISTENER_MAX_MESSAGE_BYTES  65536       largest message a client may send
 *   SVC_TAK_LISTENER_PICTURE_MAX        2000        live tracks held for new clients
 */
export interface ListenerConfig {
  enabled: boolean;
  /** Address to bind. 127.0.0.1 by default: serving the LAN is a decision the operator writes down. */
  host: string;
  port: number;
  /** `tls` (client certificates required) or `tcp` (a lab without certificates; status says so). */
  transport: 'tls' | 'tcp';
  certPath: string | null;
  keyPath: string | null;
  /** The CA that issues client certificates; a client whose certificate it did not sign is refused. */
  caPath: string | null;
  /** Connected clients at most; one more is closed as soon as it has authenticated. */
  maxClients: number;
  /** Unsent bytes one client may hold; past it the client is dropped. */
  clientBufferBytes: number;
  /** Keep-alive pings this often; a client silent for three intervals is closed. 0: neither. */
  pingIntervalMs: number;
  /** The largest message a client may send (ATAK sends its own position and chat); past it the client is closed. */
  maxMessageBytes: number;
  /** Live tracks kept to give a new client the current picture; the least recently updated goes first. */
  pictureMax: number;
}

/** Close unauthenticated peers that do not finish the TLS handshake in this time. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
/** Silent pings intervals after which a client is taken as gone. */
const IDLE_INTERVALS = 3;

export class ListenerOutput implements TakOutput {
  readonly name = 'listener' as const;
  private server: Server | null = null;
  private readonly clients = new Map<number, ListenerClient>();
  /** Every open connection, clients and handshakes alike, so close() ends them all at once. */
  private readonly connections = new Set<Socket>();
  /** The latest event of each live track, in update order, for clients that connect later. */
  private readonly picture = new Map<string, { event: CotOut; msg: WireMessage }>();
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private state = 'stopped';
  private boundPort: number | null = null;
  private lastError: string | null = null;
  private eventsIn = 0;
  private sent = 0;
  private errors = 0;
  private slowDropped = 0;
  /** Events that were waiting in the queue of a client dropped as slow. */
  private droppedEvents = 0;
  private refused = 0;
  private handshakeFailures = 0;
  private idleClosed = 0;
  private protocolErrors = 0;
  /** Client sockets that failed (a phone that lost its network resets): theirs, not the listener's. */
  private clientErrors = 0;
  private lastClientError: string | null = null;

  private readonly events: ClientEvents = {
    overflow: (c, lost) => this.overflowed(c, lost),
    protocolError: (c, reason) => this.protocolFailed(c, reason),
    closed: (c) => this.clients.delete(c.id),
    socketError: (c, err) => this.clientFailed(c, err),
    pictureOf: (uid) => this.live(uid),
  };

  constructor(private readonly cfg: Readonly<ListenerConfig>) {}

  /** The port bound (the configured one, or the OS's choice when it is 0). */
  get port(): number | null {
    return this.boundPort;
  }

  async start(): Promise<void> {
    if (this.server) return;
    this.state = 'starting';
    try {
      const server = await this.makeServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.cfg.port, this.cfg.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => this.failed(err));
      server.on('connection', (s: Socket) => this.opened(s));
      this.server = server;
      this.boundPort = (server.address() as { port: number }).port;
      this.state = 'listening';
    } catch (err) {
      this.state = 'error';
      this.lastError = (err as Error).message;
      this.errors++;
      throw err;
    }
    if (this.cfg.pingIntervalMs > 0) {
      this.timer = setInterval(() => this.keepAlive(), this.cfg.pingIntervalMs);
      this.timer.unref();
    }
  }

  send(event: CotOut): void {
    this.eventsIn++;
    const now = Date.now();
    const msg = new WireMessage(event.fields, event.xml);
    const uid = event.fields.uid;
    this.picture.delete(uid);
    if (event.fields.staleMs > now) {
      this.picture.set(uid, { event, msg });
      if (this.picture.size > this.cfg.pictureMax) this.picture.delete(this.picture.keys().next().value!);
    }
    for (const c of [...this.clients.values()]) if (c.sendEvent(msg)) this.sent++;
  }

  status(): OutputState {
    const now = Date.now();
    const clients: ClientSnapshot[] = [...this.clients.values()].map((c) => c.snapshot(now));
    const plain = this.cfg.transport === 'tcp';
    return {
      wired: this.server !== null,
      state: this.state,
      sent: this.sent,
      dropped: this.droppedEvents,
      errors: this.errors,
      detail: {
        host: this.cfg.host,
        port: this.boundPort ?? this.cfg.port,
        transport: this.cfg.transport,
        ...(plain ? { warning: 'plain TCP: no encryption and no client authentication; any host that reaches the port receives every track' } : {}),
        clientCount: clients.length,
        maxClients: this.cfg.maxClients,
        clients,
        droppedSlowClients: this.slowDropped,
        refusedOverMax: this.refused,
        handshakeFailures: this.handshakeFailures,
        idleClosed: this.idleClosed,
        protocolErrors: this.protocolErrors,
        clientErrors: this.clientErrors,
        lastClientError: this.lastClientError,
        eventsIn: this.eventsIn,
        pictureTracks: this.picture.size,
        lastError: this.lastError,
      },
    };
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const server = this.server;
    this.server = null;
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    for (const s of this.connections) s.destroy();
    this.connections.clear();
    this.state = 'stopped';
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async makeServer(): Promise<Server> {
    if (this.cfg.transport === 'tcp') return createTcpServer((s) => this.accepted(s, null));
    const { certPath, keyPath, caPath } = this.cfg;
    if (!certPath || !keyPath || !caPath) throw new Error('the TLS listener needs a server certificate, its key and the CA that issues clients');
    const [cert, key, ca] = await Promise.all([readFile(certPath), readFile(keyPath), readFile(caPath)]);
    const server = createTlsServer(
      { cert, key, ca, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2', handshakeTimeout: HANDSHAKE_TIMEOUT_MS },
      (s) => this.accepted(s, subjectOf(s)),
    );
    server.on('tlsClientError', (err) => this.handshakeFailed(err));
    return server;
  }

  private opened(s: Socket): void {
    this.connections.add(s);
    s.on('close', () => this.connections.delete(s));
  }

  private accepted(socket: Socket | TLSSocket, subject: string | null): void {
    if (!this.server || this.clients.size >= this.cfg.maxClients) {
      this.refused++;
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    const client = new ListenerClient(this.nextId++, socket, subject, this.cfg.clientBufferBytes, this.cfg.maxMessageBytes, this.events);
    this.clients.set(client.id, client);
    client.offer(Date.now());
    client.givePicture([...this.picture.keys()]);
  }

  /** The latest event of a track still live, for a client catching up; a stale one is forgotten. */
  private live(uid: string): WireMessage | null {
    const entry = this.picture.get(uid);
    if (!entry) return null;
    if (entry.event.fields.staleMs > Date.now()) {
      this.sent++;
      return entry.msg;
    }
    this.picture.delete(uid);
    return null;
  }

  private keepAlive(): void {
    const now = Date.now();
    for (const c of [...this.clients.values()]) {
      if (now - c.lastHeardMs > IDLE_INTERVALS * this.cfg.pingIntervalMs) {
        this.idleClosed++;
        c.close();
      } else c.keepAlive(now);
    }
  }

  private overflowed(c: ListenerClient, lostEvents: number): void {
    this.slowDropped++;
    this.droppedEvents += lostEvents;
    this.clients.delete(c.id);
  }

  private protocolFailed(c: ListenerClient, reason: string): void {
    this.protocolErrors++;
    this.lastClientError = `client ${c.address}: ${reason}`;
    this.clients.delete(c.id);
  }

  private handshakeFailed(err: Error): void {
    this.handshakeFailures++;
    this.lastError = `TLS handshake: ${err.message}`;
  }

  private clientFailed(c: ListenerClient, err: Error): void {
    this.clientErrors++;
    this.lastClientError = `client ${c.address}: ${err.message}`;
  }

  private failed(err: Error): void {
    this.errors++;
    this.lastError = err.message;
  }
}

function subjectOf(s: TLSSocket): string | null {
  const cn = s.getPeerCertificate()?.subject?.CN;
  return typeof cn === 'string' ? cn : Array.isArray(cn) ? cn.join(',') : null;
}
