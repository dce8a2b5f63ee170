import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { runServiceToEnd, startService } from './helpers/service-process.js';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { openSse } from './helpers/sse.js';
import { allocatorAdvice, allocatorFacts } from '../src/platform/allocator.js';
import { heapLimitAdvice, heapLimitMb } from '../src/platform/heap-limit.js';
import { openWritesWarning } from '../src/http/listen.js';
import { until } from './helpers/until.js';

type LogLine = { level?: number; env?: string; heapLimitMb?: number; setting?: string; port?: number; msg?: string };

/** The messages of a service's warnings that `about` picks out of its log lines. */
const warnings = (lines: string[], about: (m: LogLine) => boolean): string[] =>
  lines.flatMap((l) => {
    let m: LogLine;
    try {
      m = JSON.parse(l) as LogLine;
    } catch {
      return [];
    }
    return m.level === 40 && about(m) ? [m.msg!] : [];
  });

/** The start-up warning about glibc's allocator (src/platform/allocator.ts). */
const allocatorWarnings = (lines: string[]): string[] => warnings(lines, (m) => m.env === 'MALLOC_TOP_PAD_');

/** The start-up warning about the main thread's heap limit (src/platform/heap-limit.ts). */
const heapWarnings = (lines: string[]): string[] => warnings(lines, (m) => m.heapLimitMb !== undefined);

/** The lines a shutdown logs when it had to wait for server.shutdownTimeoutMs or its last-resort deadline. */
const cutShort = (lines: string[]): string[] => lines.filter((l) => l.includes('shutdown timeout') || l.includes('shutdown deadline'));

/** The start-up warning about writes open beyond loopback (src/http/listen.ts). */
const openWritesWarnings = (lines: string[]): string[] => warnings(lines, (m) => m.setting === 'guard.writeTokens');

/** Writes `text` on a raw socket and collects everything until the server closes it. */
function rawExchange(port: number, text: string, keepOpenMs = 5000): Promise<{ data: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ data, ms: Date.now() - started }));
    socket.write(text);
    setTimeout(() => socket.destroy(), keepOpenMs);
  });
}


describe('src/main.ts (process entry)', function () {
  // each test starts the entry point under tsx: seconds on a quiet machine, a minute on a loaded one
  this.timeout(180_000);

  it('shuts down gracefully on SIGTERM: the in-flight request completes, exit 0 without waiting for the shutdown timeout', async () => {
    // the timeouts are long so that a slow machine's request is never cut; the log says if one was waited for
    const { child, base, lines } = await startService({ SVC_SHUTDOWN_TIMEOUT_MS: '60000', SVC_KERNEL_DEADLINE_MS: '60000' });
    const inflight = fetch(`${base}/api/svc/v1/ssm/scan?seq_len=4096&state_dim=32`);
    // a request sent after it, on a second connection, is answered only once the server has taken the first
    expect((await fetch(`${base}/api/svc/v1/health`)).status).to.be.oneOf([200, 503]);
    child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { kernel: string }).kernel).to.equal('ssm/scan');
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(0);
    await until('the stopped line', () => lines.some((l) => l.includes('"msg":"stopped"')));
    expect(cutShort(lines), 'nothing waited for the shutdown timeout').to.deep.equal([]);
    // launched as the tests launch it, without npm start's MALLOC_TOP_PAD_ (unless the caller set it)
    const advice = allocatorAdvice({ ...allocatorFacts(), env: process.env });
    expect(allocatorWarnings(lines)).to.deep.equal(advice ? [advice] : []);
    // and with the heap limit Node gives this machine's processes (the tests' own)
    const heapAdvice = heapLimitAdvice(heapLimitMb());
    expect(heapWarnings(lines)).to.deep.equal(heapAdvice ? [heapAdvice] : []);
    // on 127.0.0.1 open writes reach nobody else: no warning
    expect(openWritesWarnings(lines)).to.deep.equal([]);
  });

  it('warns at start-up when the main thread heap limit puts V8 in its slow-growing regime, naming the limit and the flag', async () => {
    const { child, lines } = await startService({ NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=512` });
    try {
      const [line] = lines.map((l) => JSON.parse(l) as LogLine).filter((m) => m.heapLimitMb !== undefined);
      // the limit V8 reports is the old generation's 512 MB plus the young generation's reservation
      expect(line!.heapLimitMb).to.be.within(513, 1024);
      expect(line!.level).to.equal(40);
      expect(line!.msg).to.equal(heapLimitAdvice(line!.heapLimitMb!));
      expect(line!.msg).to.include('NODE_OPTIONS=--max-old-space-size=2048');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('header timeout, connection cap with a clean 503, and SIGTERM ends streams and exits well inside the timeout', async () => {
    // the shutdown timeout is long so that a slow machine never reaches it; the log says if it was waited for
    const { child, base, lines } = await startService({ SVC_HEADERS_TIMEOUT_MS: '600', SVC_MAX_CONNECTIONS: '4', SVC_STREAM_TICK_MS: '100', SVC_SHUTDOWN_TIMEOUT_MS: '60000', MALLOC_TOP_PAD_: '33554432' });
    expect(allocatorWarnings(lines), 'launched as npm start launches it').to.deep.equal([]);
    const port = Number(new URL(base).port);
    // a request head that never completes is answered 408 and closed (not held 60 s), and the answer
    // names the configured 600 ms, not the 10 s default: no wall-clock bound needed
    const slow = await rawExchange(port, 'GET /api/svc/v1/health HTTP/1.1\r\nHost: x\r\n', 60_000);
    expect(slow.data).to.match(/^HTTP\/1\.1 408/);
    expect(slow.data).to.include('Request not received within 600 ms');
    // beyond the cap a new connection gets a 503 with a body, then is closed
    const holders = await Promise.all(Array.from({ length: 4 }, () => new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.on('error', () => {});
    })));
    // connected is not yet accepted: a connection the server has not counted yet is answered normally
    const refused = await until('a connection beyond the cap to be refused', async () => {
      const r = await rawExchange(port, 'GET /api/svc/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
      return /^HTTP\/1\.1 503/.test(r.data) && r.data.includes('Too many connections') ? r : null;
    }, 60_000);
    expect(refused.data).to.match(/Retry-After: 1/);
    for (const h of holders) h.destroy();
    // the slots are free once a plain request is answered again
    await until('a connection to be served again', async () => {
      const r = await rawExchange(port, 'GET /api/svc/v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 10_000);
      return /^HTTP\/1\.1 \d{3}/.test(r.data) && !r.data.includes('Too many connections');
    }, 60_000);
    // a viewer is connected when SIGTERM arrives
    const viewer = await openSse(`${base}/api/svc/v1/stream/verdicts`);
    await viewer.waitFor(1, 60_000);
    const ended = new Promise<void>((resolve) => viewer.res.on('close', () => resolve()));
    child.kill('SIGTERM');
    await ended;
    expect(viewer.events.at(-1)!.event).to.equal('shutdown');
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(0);
    await until('the stopped line', () => lines.some((l) => l.includes('"msg":"stopped"')));
    expect(cutShort(lines), 'the stream ended itself: nothing waited for the shutdown timeout').to.deep.equal([]);
  });

  it('refuses to start with an invalid setting, naming the key', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).to.equal(2);
    expect(stderr).to.match(/server\.port \(env PORT\)/);
  });

  it('a port already in use: one line on stderr naming the port and what to do, exit 2, no stack trace', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const { code, stderr, stdout } = await runServiceToEnd({ PORT: String(port) });
      expect(code).to.equal(2);
      expect(stderr).to.equal(`port ${port} is in use (EADDRINUSE) on 127.0.0.1: stop the other process or set PORT to a free port\n`);
      expect(stdout).to.not.include('"msg":"listening"');
    } finally {
      holder.close();
    }
  });

  it('listening beyond loopback without write tokens warns once that anyone reaching the port can append to the ledger, and how to set tokens', async () => {
    const { child, lines } = await startService({ HOST: '0.0.0.0' });
    try {
      const port = lines.map((l) => JSON.parse(l) as LogLine).find((m) => m.msg === 'listening')!.port!;
      const found = openWritesWarnings(lines);
      expect(found).to.deep.equal([openWritesWarning('0.0.0.0', port, '')]);
      expect(found[0]).to.include(`listening on 0.0.0.0:${port} without write tokens`);
      expect(found[0]).to.include('anyone who can reach this port can append signed verdicts to the ledger');
      expect(found[0]).to.include('set SVC_WRITE_TOKENS (guard.writeTokens) to comma-separated bearer tokens');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  it('beyond loopback with write tokens set: no such warning', async () => {
    const { child, lines } = await startService({ HOST: '0.0.0.0', SVC_WRITE_TOKENS: 'alpha-token' });
    try {
      expect(lines.some((l) => l.includes('"msg":"serving"'))).to.equal(true);
      expect(openWritesWarnings(lines)).to.deep.equal([]);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
