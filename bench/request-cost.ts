/**
 * `npm run bench:cost`: CPU time per request of the service's main thread against the bare
 * Koa + @koa/router hello, both driven in this process through Node's own HTTP server on
 * in-memory connections (a Duplex per connection handed to `server.emit('connection')`): the
 * request is parsed and the answer formatted and written exactly as on a socket, but no kernel
 * network stack and no load generator share the CPU. On a machine shared with other work the
 * socket benchmarks swing by 2x from run to run; this figure moves by a few per cent, so it is the
 * one to read when changing the request path.
 *   npm run bench:cost                      # every target
 *   npm run bench:cost -- 404 health        # some
 * BENCH_REQUESTS (per target and round, default 20000; a tenth for kernel and verdict) and
 * BENCH_ROUNDS (default 5, after one warm-up round; the median is reported) tune it.
 * The service runs with the bench's settings (production config, file ledger in a temporary
 * directory, write limit off). Kernel and verdict targets wait for the pool (their CPU on worker
 * threads is counted too: process CPU time).
 */
import Router from '@koa/router';
import Koa from 'koa';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duplex } from 'node:stream';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/load.js';
import { effectiveThreads } from '../src/config/schema.js';
import type { Piscina } from 'piscina';
import { barePool } from './pool-baseline.js';
import { KERNELS } from '../workers/registry.js';
import { kernelParamsSchema, orderParams } from '../workers/kernel-def.js';
import { SERVICE_LOAD_ENV, VERDICT_FRAME as FRAME } from './lib.js';


interface Target {
  server: 'koa' | 'svc';
  path: string;
  method?: 'GET' | 'POST';
  body?: string;
}

const TARGETS: Record<string, Target> = {
  'koa-hello': { server: 'koa', path: '/hello' },
  '404': { server: 'svc', path: '/api/svc/v1/no-such-route' },
  doctrine: { server: 'svc', path: '/api/svc/v1/doctrine' },
  health: { server: 'svc', path: '/api/svc/v1/health' },
  verdict: { server: 'svc', path: '/api/svc/v1/verdict', method: 'POST', body: FRAME },
  kernel: { server: 'svc', path: '/api/svc/v1/ssm/scan' },
  // the same task behind a bare Koa route on a bare pool of the service's size and priority: what
  // any Koa front end of a worker pool pays per kernel call, so kernel - koa-pool is the service's own
  'koa-pool': { server: 'koa', path: '/pool' },
  // refused at validation (422): the body reading, parsing and validation share of a verdict
  'verdict-422': { server: 'svc', path: '/api/svc/v1/verdict', method: 'POST', body: '{"lat":1}' },
};

const CONNECTIONS = 8;

function requestBytes(t: Target): Buffer {
  const body = t.body ?? '';
  const head = [`${t.method ?? 'GET'} ${t.path} HTTP/1.1`, 'Host: bench.invalid', ...(t.body ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : []), '', ''];
  return Buffer.from(head.join('\r\n') + body, 'latin1');
}

/** One keep-alive connection: sends the request again as soon as an answer is written. */
class Connection extends Duplex {
  answers = 0;
  private stopped = false;

  constructor(
    private readonly request: Buffer,
    private readonly onAnswer: () => boolean,
  ) {
    // strings stay strings, as a socket hands them to the kernel: converting each answer to a
    // Buffer here would be garbage a real socket never makes
    super({ decodeStrings: false });
  }

  start(): void {
    this.push(this.request);
  }

  stop(): void {
    this.stopped = true;
    this.push(null);
  }

  override _read(): void {}

  override _write(_chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.seen();
    cb();
  }

  override _writev(_chunks: { chunk: Buffer | string }[], cb: () => void): void {
    this.seen();
    cb();
  }

  // every answer of these routes is one write (head and body corked together); its bytes are
  // not looked at (reading the head + body string would flatten it: garbage a socket never makes).
  // The next request arrives as a new I/O event would
  private seen(): void {
    this.answers++;
    if (!this.stopped && this.onAnswer()) setImmediate(() => this.push(this.request));
  }
}

/** This thread's CPU seconds (Linux /proc, 10 ms ticks): the main thread alone, without the pool's. */
function mainThreadCpuS(): number {
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Drives `server` with `requests` answers over CONNECTIONS connections; CPU and wall time per answer. */
async function drive(server: Server, t: Target, requests: number): Promise<{ cpuUs: number; mainUs: number; wallUs: number }> {
  let sent = CONNECTIONS;
  let answered = 0;
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const onAnswer = (): boolean => {
    if (++answered >= requests) done();
    return sent < requests && ++sent > 0;
  };
  const conns = Array.from({ length: CONNECTIONS }, () => new Connection(requestBytes(t), onAnswer));
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuS();
  const t0 = performance.now();
  for (const c of conns) {
    server.emit('connection', c);
    c.start();
  }
  await finished;
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const mainS = mainThreadCpuS() - main0;
  for (const c of conns) c.stop();
  return { cpuUs: (cpu.user + cpu.system) / answered, mainUs: (mainS * 1e6) / answered, wallUs: (wall * 1000) / answered };
}

/** The `kernel` target's task, with the parameters its route works out from an empty query. */
function kernelTask(): { kind: 'kernel'; id: string; params: Record<string, unknown> } {
  const def = KERNELS.find((k) => k.id === 'ssm/scan')!;
  const { value } = kernelParamsSchema(def).validate({});
  return { kind: 'kernel', id: def.id, params: orderParams(def, value as Record<string, unknown>) };
}

function koaHello(pool: Piscina | null): Server {
  const app = new Koa();
  const router = new Router();
  router.get('/hello', (ctx) => {
    ctx.body = { hello: 'world' };
  });
  if (pool) {
    const task = kernelTask();
    router.get('/pool', async (ctx) => {
      ctx.type = 'application/json';
      ctx.body = ((await pool.run(task)) as { value: string }).value;
    });
  }
  app.use(router.routes());
  const handle = app.callback();
  return createServer((req, res) => void handle(req, res));
}

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(TARGETS);
const config = loadConfig({ env: { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'warn', SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cost-')), ...SERVICE_LOAD_ENV } });
const built = await buildApp(config);
await built.services.pool.ready();
const handleSvc = built.app.callback();
const svc = createServer((req, res) => void handleSvc(req, res));
const koaPool = names.includes('koa-pool')
  ? // the worker entry the service's own pool runs here: its sources, under tsx
    barePool({ threads: effectiveThreads(config), niceIncrement: config.pool.niceIncrement, maxOldGenerationSizeMb: config.pool.maxOldGenerationSizeMb }, 'sources')
  : null;
const koa = koaHello(koaPool);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
try {
  const results = new Map<string, { cpu: number; main: number }[]>();
  // rounds interleave the targets, so a slow spell of the machine hits them all alike
  for (let round = 0; round <= ROUNDS; round++) {
    for (const name of ['koa-hello', ...names.filter((n) => n !== 'koa-hello')]) {
      const t = TARGETS[name];
      if (!t) throw new Error(`unknown target ${name}: one of ${Object.keys(TARGETS).join(', ')}`);
      const heavy = name === 'kernel' || name === 'koa-pool' || name === 'verdict';
      const r = await drive(t.server === 'koa' ? koa : svc, t, heavy ? REQUESTS / 10 : REQUESTS);
      if (round > 0) results.set(name, [...(results.get(name) ?? []), { cpu: r.cpuUs, main: r.mainUs }]); // round 0 warms up
    }
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(results.get('koa-hello')!.map((r) => r.cpu));
  console.log(`CPU µs per request, median of ${ROUNDS} rounds, ${CONNECTIONS} in-memory connections: the process (every thread), and its main thread alone`);
  console.log(`${'target'.padEnd(12)}${'process'.padStart(9)}${'main'.padStart(9)}  koa hello's process CPU / this   [process CPU per round]`);
  for (const [name, rs] of results) {
    const cpu = median(rs.map((r) => r.cpu));
    console.log(`${name.padEnd(12)}${cpu.toFixed(1).padStart(9)}${median(rs.map((r) => r.main)).toFixed(1).padStart(9)}  ${(base / cpu).toFixed(2)}x   [${rs.map((r) => r.cpu.toFixed(1)).join(', ')}]`);
  }
} finally {
  await built.close();
  await koaPool?.destroy();
}
