import { expect } from 'chai';
import { connect } from 'node:net';
import { buildTestApp, type TestApp } from '../helpers/app.js';

interface Answer {
  status: number;
  body: string;
}

/** Reads HTTP/1.1 answers (Content-Length bodies) off a byte stream, in order. */
function parseAnswers(raw: Buffer): Answer[] {
  const out: Answer[] = [];
  let at = 0;
  while (at < raw.length) {
    const headEnd = raw.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const head = raw.toString('latin1', at, headEnd);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    out.push({ status: Number(head.slice(9, 12)), body: raw.toString('utf8', headEnd + 4, headEnd + 4 + length) });
    at = headEnd + 4 + length;
  }
  return out;
}

/**
 * Writes `parts` to a fresh connection, `gapMs` apart (0: all in one write), and returns the
 * answers once the server closes it (the last request says `Connection: close`).
 */
function exchange(port: number, parts: Buffer[], gapMs = 0): Promise<Answer[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('close', () => resolve(parseAnswers(Buffer.concat(chunks))));
    socket.on('error', reject);
    // idle this long, the server has hung; a loaded machine answers well within it
    socket.setTimeout(60_000, () => socket.destroy(new Error('no answer within 60 s')));
    if (gapMs === 0) return void socket.write(Buffer.concat(parts));
    parts.forEach((p, i) => setTimeout(() => socket.writable && socket.write(p), i * gapMs));
  });
}

/** A POST's head and body as separate parts (so a test can send them apart). */
function post(path: string, body: Buffer | string, { close = true, chunked = false } = {}): Buffer[] {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const framing = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${bytes.length}`;
  const head = `POST ${path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n${framing}\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;
  const payload = chunked ? Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]) : bytes;
  return [Buffer.from(head, 'latin1'), payload];
}

const VERDICT = '/api/svc/v1/verdict';
const frame = (track: string): string => JSON.stringify({ track_id: track, source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, id_authenticated: true, n_observations: 800 });
const LIMIT = 1024;

// A body that arrives with its headers is taken straight from the parser's buffer (src/http/body.ts
// `arrived`); one that arrives later is streamed through koa-body. The two must not differ.
describe('request bodies: arrived with the headers or streamed later, the same answer', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await buildTestApp({ http: { jsonLimitBytes: LIMIT } });
    port = Number(new URL(t.baseUrl).port);
  });
  after(() => t.close());

  const bothWays = async (parts: Buffer[]): Promise<[Answer, Answer]> => {
    const [together] = await exchange(port, parts);
    const [apart] = await exchange(port, parts, 40);
    return [together!, apart!];
  };

  it('a valid frame is decided the same way; refused bodies get byte-identical 4xx answers', async () => {
    const [a, b] = await bothWays(post(VERDICT, frame('body-1')));
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    expect(JSON.parse(a.body).decision).to.equal(JSON.parse(b.body).decision);
    expect(JSON.parse(a.body).track_id).to.equal('body-1');
    const refused = [
      '{"track_id":"x","lat":1,', // truncated JSON
      '{"track_id":"x","lat":"north","lon":1}', // wrong type
      '[1,2]', // not an object
      '   ', // nothing but blanks
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // not UTF-8
    ];
    for (const body of refused) {
      const [x, y] = await bothWays(post(VERDICT, body));
      expect(x.status, String(body)).to.be.within(400, 499);
      expect(x, String(body)).to.deep.equal(y);
    }
  });

  it('a body at the limit is read; one byte over is 413 either way', async () => {
    const at = frame('body-2').replace(/}$/, `${' '.repeat(LIMIT - frame('body-2').length)}}`);
    expect(Buffer.byteLength(at)).to.equal(LIMIT);
    const [a, b] = await bothWays(post(VERDICT, at));
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    const [c, d] = await bothWays(post(VERDICT, at.replace(/}$/, ' }')));
    expect([c.status, d.status]).to.deep.equal([413, 413]);
    expect(c.body).to.equal(d.body);
  });

  it('a chunked body is read whole, in one write or in two', async () => {
    const [a, b] = await bothWays(post(VERDICT, frame('body-3'), { chunked: true }));
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    expect(JSON.parse(a.body).track_id).to.equal('body-3');
    expect(JSON.parse(b.body).track_id).to.equal('body-3');
  });

  it('requests pipelined in one write each get their own body, in order', async () => {
    const answers = await exchange(port, [...post(VERDICT, frame('pipe-a'), { close: false }), ...post(VERDICT, '{"lat":', { close: false }), ...post(VERDICT, frame('pipe-c'))]);
    expect(answers.map((a) => a.status)).to.deep.equal([200, 422, 200]);
    expect(JSON.parse(answers[0]!.body).track_id).to.equal('pipe-a');
    expect(JSON.parse(answers[1]!.body).detail[0].type).to.equal('json_invalid');
    expect(JSON.parse(answers[2]!.body).track_id).to.equal('pipe-c');
  });
});
