/**
 * A TAK Server stand-in for the client tests: TLS with `requestCert` and `rejectUnauthorized`
 * against the test CA (or plain TCP), offering TAK Protocol v1 or not, answering the request, and
 * recording every message it receives, split and decoded with the same protocol module a real peer
 * would mirror. It can stop and start again on the same port, ping its clients and drop them.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import type { CotFields } from '../../src/tak/output.js';
import {
  decodeTakMessage,
  eventType,
  eventXml,
  parseProtocolRequest,
  ping,
  protocolResponse,
  protocolSupport,
  StreamSplitter,
  streamFrame,
  streamXml,
} from '../../src/tak/protocol.js';
import { freePort } from './free-port.js';

export interface FakeTakServerOptions {
  /** PEM paths; omitted: plain TCP. */
  tls?: { cert: string; key: string; ca: string };
  /** Send `t-x-takp-v` version 1 on each connection. */
  offerV1: boolean;
  /** The status answered to `t-x-takp-q` (true unless set). */
  acceptV1?: boolean;
  /** Send the offer but never answer the request. */
  silentOnRequest?: boolean;
  port?: number;
}

export type Received = { conn: number; kind: 'xml'; type: string | null; xml: string } | { conn: number; kind: 'v1'; type: string; fields: CotFields; message: Buffer };

interface Conn {
  id: number;
  socket: Socket;
  v1: boolean;
}

export class FakeTakServer {
  port = 0;
  readonly received: Received[] = [];
  /** Client certificate CNs of accepted TLS connections, in order. */
  readonly peers: string[] = [];
  /** TLS handshakes refused (a client certificate from an unknown CA…). */
  readonly tlsErrors: string[] = [];
  /** Connections accepted since construction. */
  connections = 0;
  /** Bytes received on all connections: with the messages' own lengths, it shows nothing came between them. */
  bytes = 0;
  private server: Server | null = null;
  private readonly conns = new Set<Conn>();

  constructor(private readonly opts: FakeTakServerOptions) {
    this.port = opts.port ?? 0;
  }

  /** Events (not control messages) received, in order. */
  events(): Received[] {
    return this.received.filter((r) => r.type !== null && !r.type.startsWith('t-x-'));
  }

  ofType(type: string): Received[] {
    return this.received.filter((r) => r.type === type);
  }

  async start(): Promise<void> {
    const onConn = (socket: Socket) => this.accept(socket);
    let server: Server;
    if (this.opts.tls) {
      const t = this.opts.tls;
      const tlsServer = createTlsServer({ cert: readFileSync(t.cert), key: readFileSync(t.key), ca: readFileSync(t.ca), requestCert: true, rejectUnauthorized: true }, onConn);
      tlsServer.on('tlsClientError', (err: Error & { code?: string }) => this.tlsErrors.push(err.code ?? err.message));
      server = tlsServer;
    } else {
      server = createTcpServer(onConn);
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Closes the listener and every connection (the port stays this server's for `start()`). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.dropConnections();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  dropConnections(): void {
    for (const c of this.conns) c.socket.destroy();
    this.conns.clear();
  }

  /** Open connections and whether each has switched to v1. */
  openConnections(): { id: number; v1: boolean }[] {
    return [...this.conns].map((c) => ({ id: c.id, v1: c.v1 }));
  }

  /** Pings every client in its connection's format. */
  sendPing(nowMs = Date.now()): void {
    for (const c of this.conns) this.write(c, ping(nowMs, 'fake-server-ping'));
  }

  /** Writes bytes as they are to every client. */
  sendRaw(bytes: Buffer | string): void {
    for (const c of this.conns) c.socket.write(bytes);
  }

  private write(c: Conn, f: CotFields): void {
    c.socket.write(c.v1 ? streamFrame(f) : streamXml(eventXml(f)));
  }

  private accept(socket: Socket): void {
    const c: Conn = { id: ++this.connections, socket, v1: false };
    this.conns.add(c);
    const tlsSocket = socket as TLSSocket;
    if (this.opts.tls) this.peers.push(String(tlsSocket.getPeerCertificate().subject?.CN ?? ''));
    socket.on('close', () => this.conns.delete(c));
    socket.on('error', () => undefined);
    const splitter = new StreamSplitter(1 << 20);
    socket.on('data', (chunk: Buffer) => {
      this.bytes += chunk.length;
      splitter.push(chunk);
      for (let m = splitter.next(); m; m = splitter.next()) {
        if (m.kind === 'error') {
          this.received.push({ conn: c.id, kind: 'xml', type: null, xml: `splitter error: ${m.reason}` });
          socket.destroy();
          return;
        }
        if (m.kind === 'v1') {
          const r = decodeTakMessage(m.message);
          if (r.ok && r.event) this.received.push({ conn: c.id, kind: 'v1', type: r.event.type, fields: r.event, message: m.message });
          continue;
        }
        const type = eventType(m.xml);
        this.received.push({ conn: c.id, kind: 'xml', type, xml: m.xml });
        if (parseProtocolRequest(m.xml) === 1 && !this.opts.silentOnRequest) {
          const accept = this.opts.acceptV1 ?? true;
          this.write(c, protocolResponse(Date.now(), accept));
          if (accept) {
            c.v1 = true;
            splitter.useV1();
          }
        }
      }
    });
    if (this.opts.offerV1) this.write(c, protocolSupport(Date.now()));
  }
}

/**
 * A TLS server that verifies client certificates the way TAK Server's Java stack does, in the
 * handshake, and answers an untrusted one with a TLS alert (Node's own TLS server just closes the
 * connection after the handshake instead): `openssl s_server` with `-verify_return_error`.
 */
export async function opensslVerifyingServer(cert: string, key: string, ca: string): Promise<{ port: number; stop(): Promise<void> }> {
  const port = await freePort();
  // stdin is a pipe left open: at its end s_server would stop serving
  const child = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-cert', cert, '-key', key, '-CAfile', ca, '-Verify', '1', '-verify_return_error'], { stdio: ['pipe', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('ACCEPT')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`openssl s_server exited with ${code} before accepting`)));
  });
  child.stdout.resume();
  child.stderr.resume();
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}
