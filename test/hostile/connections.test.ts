/**
 * One client address cannot hold every connection: above `guard.maxConnectionsPerAddress` its new
 * sockets get the global cap's answer (503 JSON, then closed) while other addresses are served.
 * Loopback 127.0.0.0/8 gives distinct client addresses on Linux.
 */
import { expect } from 'chai';
import { get, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { createHttpServer } from '../../src/http/server.js';
import { testConfig } from '../helpers/app.js';

const HEALTH = '/api/svc/v1/health';

interface Listening {
  server: Server;
  port: number;
  /** Sockets the server has seen, accepted or refused. */
  seen: () => number;
  refused: () => number;
}

/** Resolves once `cond` holds, checking on every turn of the event loop (rejects after `ms`). */
async function until(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

interface Held {
  socket: Socket;
  /** What the server sent (a refused socket gets its answer; an accepted idle one nothing). */
  data: () => string;
}

/** An idle connection from `localAddress`: it sends nothing, so an accepted one is simply held. */
function hold(port: number, localAddress: string): Held {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => (text += d));
  socket.on('error', () => {});
  return { socket, data: () => text };
}

function healthFrom(port: number, localAddress: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path: HEALTH, localAddress, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
  });
}

describe('hostile clients: connections per address', function () {
  // above the waits' own 60 s limit, so a slow machine fails on the condition it waited for
  this.timeout(120_000);
  const config = testConfig({ guard: { maxConnections: 20, maxConnectionsPerAddress: 8, trustProxy: ['127.0.0.6'] } });
  let built: BuiltApp;
  const servers: Server[] = [];
  const sockets: Socket[] = [];

  async function listen(): Promise<Listening> {
    let refused = 0;
    let seen = 0;
    const server = createHttpServer(built.app.callback(), { guard: config.guard, keepAliveTimeoutMs: 5000, onRefused: () => refused++ });
    server.on('connection', () => seen++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    return { server, port: (server.address() as AddressInfo).port, seen: () => seen, refused: () => refused };
  }

  const holdMany = (port: number, from: string, n: number): Held[] =>
    Array.from({ length: n }, () => {
      const h = hold(port, from);
      sockets.push(h.socket);
      return h;
    });

  before(async () => {
    built = await buildApp(config);
    await built.services.pool.ready();
  });
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
  after(() => built.close());

  it('an address holding more idle sockets than the global cap allows gets the 503 beyond its own cap; another address is still served', async () => {
    const l = await listen();
    const held = holdMany(l.port, '127.0.0.2', 24);
    await until('every socket to be accepted or refused', () => l.seen() === 24 && l.refused() === 16);
    expect(await healthFrom(l.port, '127.0.0.3')).to.equal(200);
    // the refusal is the global cap's: a JSON 503 with Retry-After, then the connection closes
    await until('the refused sockets to be answered', () => held.filter((h) => h.data() !== '').length === 16);
    const answer = held.find((h) => h.data() !== '')!.data();
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    expect(head).to.match(/^HTTP\/1\.1 503 /);
    expect(head).to.match(/\r\nRetry-After: 1\r\n/);
    expect(head).to.match(/\r\nConnection: close$/);
    expect(JSON.parse(body)).to.deep.equal({ detail: 'Too many connections, retry later' });
  });

  it('an address gets its room back as its connections close', async () => {
    const l = await listen();
    const held = holdMany(l.port, '127.0.0.2', 8);
    await until('the eight to be accepted', () => l.seen() === 8);
    expect(l.refused()).to.equal(0);
    expect(await healthFrom(l.port, '127.0.0.2')).to.equal(503);
    for (const h of held.slice(0, 2)) h.socket.destroy();
    let open = 8;
    await until('two to close', () => {
      l.server.getConnections((_e, n) => (open = n));
      return open <= 6;
    });
    expect(await healthFrom(l.port, '127.0.0.2')).to.equal(200);
  });

  it('a trusted proxy is held to the global cap only', async () => {
    const l = await listen();
    holdMany(l.port, '127.0.0.6', 12);
    await until('the twelve to be seen', () => l.seen() === 12);
    expect(l.refused()).to.equal(0);
    expect(await healthFrom(l.port, '127.0.0.6')).to.equal(200);
  });
});
