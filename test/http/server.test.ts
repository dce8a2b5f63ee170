import { expect } from 'chai';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { buildApp, type BuiltApp } from '../../src/app.js';
import { ConfigError } from '../../src/config/load.js';
import { MIN_HEADER_BYTES } from '../../src/http/guard.config.js';
import { createHttpServer } from '../../src/http/server.js';
import { REQUEST_MAX_CHARS } from '../../src/kernels/kernel-params.js';
import { testConfig } from '../helpers/app.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (and nothing else) on a raw socket and parses the one answer before the close. */
function rawRequest(port: number, head: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
    // no half-close: Node aborts a request whose client has ended its side before the answer
    socket.write(head);
  });
}

const LABEL_KERNEL = '/api/svc/v1/fgbrain/evolve';
const get = (target: string, extra = ''): string => `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`;
// an emoji: one character of the widest kind, two UTF-16 code units, 4 UTF-8 bytes, 12 bytes once percent-encoded
const EMOJI = '\u{1F6F8}';
const widest = (n: number): string => encodeURIComponent(EMOJI.repeat(n));

describe('src/http/server.ts: the HTTP server in front of Koa', function () {
  let built: BuiltApp;
  let server: Server;
  let port: number;
  const config = testConfig();

  before(async () => {
    built = await buildApp(config);
    server = createHttpServer(built.app.callback(), { guard: config.guard, keepAliveTimeoutMs: 5000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await built.close();
  });

  it('a `request` of 4,096 non-ASCII characters fits the head limit: answered by the route (200, label echoed)', async () => {
    const label = '雪'.repeat(REQUEST_MAX_CHARS);
    const res = await rawRequest(port, get(`${LABEL_KERNEL}?request=${encodeURIComponent(label)}`));
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.match(/^application\/json/);
    expect((JSON.parse(res.body) as { request_label: string }).request_label).to.equal(label);
  });

  it('a `request` of 4,096 emoji (8,192 UTF-16 code units) is 4,096 characters: answered by the route (200, label echoed)', async () => {
    const label = EMOJI.repeat(REQUEST_MAX_CHARS);
    const res = await rawRequest(port, get(`${LABEL_KERNEL}?request=${widest(REQUEST_MAX_CHARS)}`));
    expect(res.status).to.equal(200);
    expect((JSON.parse(res.body) as { request_label: string }).request_label).to.equal(label);
  });

  it('one character over the bound is the route\'s 422 with a JSON body, not a head-size refusal', async () => {
    const res = await rawRequest(port, get(`${LABEL_KERNEL}?request=${widest(REQUEST_MAX_CHARS + 1)}`));
    expect(res.status).to.equal(422);
    // the echoed input is cut at 256 characters, never inside an emoji
    expect(JSON.parse(res.body)).to.deep.equal({
      detail: [
        {
          type: 'string_too_long',
          loc: ['query', 'request'],
          msg: `String should have at most ${REQUEST_MAX_CHARS} characters`,
          input: `${EMOJI.repeat(256)}…`,
          ctx: { max_length: REQUEST_MAX_CHARS },
        },
      ],
    });
  });

  it('a head over the limit gets 431 with a JSON error body and Connection: close', async () => {
    const res = await rawRequest(port, get('/api/svc/v1/health', `X-Pad: ${'a'.repeat(config.guard.maxHeaderBytes + 1024)}\r\n`));
    expect(res.status).to.equal(431);
    expect(res.headers['content-type']).to.equal('application/json');
    expect(res.headers.connection).to.equal('close');
    expect(Number(res.headers['content-length'])).to.equal(Buffer.byteLength(res.body));
    expect(JSON.parse(res.body)).to.deep.equal({ detail: `Request line and headers too large: the limit is ${config.guard.maxHeaderBytes} bytes` });
  });

  it('a malformed request line gets 400 with a JSON error body', async () => {
    const res = await rawRequest(port, 'GET / HTTP/9.9 nonsense\r\n\r\n');
    expect(res.status).to.equal(400);
    expect((JSON.parse(res.body) as { detail: string }).detail).to.match(/^Malformed HTTP request/);
  });

  it('the smallest allowed limit still carries the largest legal `request` on any kernel path; smaller is a config error', () => {
    const longestPath = Math.max(...built.routes.map((r) => r.path.length));
    const line = get(`${'/'.repeat(longestPath)}?request=${widest(REQUEST_MAX_CHARS)}`, 'User-Agent: a-browser-sized-agent-string/1.0\r\n');
    expect(Buffer.byteLength(line)).to.be.below(MIN_HEADER_BYTES - 4096);
    expect(() => testConfig({ guard: { maxHeaderBytes: MIN_HEADER_BYTES - 1 } })).to.throw(ConfigError, /guard\.maxHeaderBytes/);
  });
});
