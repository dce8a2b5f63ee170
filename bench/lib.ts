/** Shared bench plumbing: start a server process, run autocannon, summarise, print, save. */
import autocannon, { type Instance, type Request, type Result } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as http from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { BaselinePool } from './pool-baseline.js';

export interface Server {
  name: string;
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = http.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Spawns a server on a free port and waits until `readyPath` answers (the service: until its pool has warmed up). */
export async function startServer(name: string, args: string[], readyPath: string, env: Record<string, string> = {}, readyTimeoutS = 120): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    // warn level: a log line per request would measure the pipe, not the service
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
    // its own session, as a deployed service has: Linux's autogroup scheduler shares the CPU
    // between sessions first, and in the generator's session the server's threads would pay for
    // the generator's CPU out of one share (on a machine busy with other sessions, the kernels
    // lost a quarter of their capacity to autocannon that way)
    detached: true,
  });
  let exited = false;
  child.once('exit', () => (exited = true));
  // a detached child outlives an interrupted bench unless told otherwise
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  child.once('exit', () => process.off('exit', orphanGuard));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (exited) throw new Error(`${name} exited before answering`);
    if (i > readyTimeoutS * 10) {
      child.kill('SIGKILL'); // never leave a half-started server behind
      throw new Error(`${name} did not answer ${readyPath} within ${readyTimeoutS} s`);
    }
    try {
      if ((await fetch(base + readyPath)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    base,
    child,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/**
 * The built service as every bench runs it: production config, a fresh data directory (file
 * ledger), SERVICE_LOAD_ENV, then `env`; `nodeArgs` go before the entry (e.g. --cpu-prof).
 */
export function startService(name: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Server> {
  return startServer(name, [...nodeArgs, 'dist/src/main.js'], '/api/svc/v1/health', { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-')), ...SERVICE_LOAD_ENV, ...env });
}

/** The bare Koa baselines (bench/servers/koa-hello.ts), its /pool route on a pool of `pool`'s size and priority. */
export function startKoaHello(name: string, pool: BaselinePool, nodeArgs: string[] = []): Promise<Server> {
  return startServer(name, [...nodeArgs, '--import', 'tsx', 'bench/servers/koa-hello.ts'], '/hello', { POOL_THREADS: String(pool.threads), POOL_NICE: String(pool.niceIncrement), POOL_MAX_OLD_MB: String(pool.maxOldGenerationSizeMb) });
}

export interface LoadOptions {
  url: string;
  connections?: number;
  durationS?: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
}

export interface Summary {
  label: string;
  reqPerSec: number;
  p50: number;
  p99: number;
  p999: number;
  errors: number;
  non2xx: number;
  timeouts: number;
  requests: number;
  /** Answers by status code. */
  status: Record<string, number>;
  max: number;
  /** Paced loads only: the same answers timed from when each request was sent instead of when it was due. */
  fromSend?: { p50: number; p99: number; p999: number };
  /** Requests sent (answered, failed, or in flight at the end); rows without it count `requests`. */
  sent?: number;
  /** Loads at a fixed rate: the rate, and how their latencies avoid coordinated omission. */
  fixedRate?: FixedRate;
}

/**
 * A load at a fixed rate and how its latencies were taken. `open-loop`: each request sent when due
 * and timed from then (paced()). `corrected`: autocannon's overallRate, each answer's time plus,
 * for every request a slow answer held back on its connection, the sample it would have had
 * (timedLoad()). `from-send`: open-loop answers timed from their send, which leaves the generator's
 * own lateness out and so is not free of coordinated omission.
 */
export interface FixedRate {
  ratePerS: number;
  latency: 'open-loop' | 'corrected' | 'from-send';
  /** corrected: the requests the rate asked for over the load, and the samples the correction added. */
  intended?: number;
  added?: number;
}

const TIMING: Record<FixedRate['latency'], string> = {
  'open-loop': 'open loop, each request sent when due and timed from then (no coordinated omission)',
  corrected: "autocannon overallRate with its own correction off; histogram corrected for coordinated omission at each connection's interval",
  'from-send': 'timed from each send, not from when it was due (the generator\'s own lateness left out: not corrected for coordinated omission)',
};

/**
 * What every bench run of the service sets on top of its production config: no write quota (off by
 * default, kept off should the defaults change), the per-address connection cap lifted (the SSE
 * bench holds thousands of viewers from one address), and the ledger's default cap (100,000 nodes)
 * raised: it is ten seconds of verdicts on a quiet machine, after which every append is a quick 503.
 */
export const SERVICE_LOAD_ENV = { SVC_WRITE_RATE_PER_S: '0', SVC_ADDRESS_WRITE_RATE_PER_S: '0', SVC_MAX_CONNECTIONS_PER_ADDRESS: '1000000', SVC_LEDGER_MAX_NODES: '10000000' } as const;

export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

export async function load(label: string, opts: LoadOptions): Promise<Summary> {
  const result: Result = await autocannon({
    url: opts.url,
    connections: opts.connections ?? CONNECTIONS,
    duration: opts.durationS ?? DURATION_S,
    method: opts.method ?? 'GET',
    body: opts.body,
    headers: opts.headers,
  });
  return summarize(label, result);
}

/** One autocannon result as a table row: rate, latency percentiles, failures and status counts. */
export function summarize(label: string, result: Result): Summary {
  const stats = (result as unknown as { statusCodeStats?: Record<string, { count: number }> }).statusCodeStats ?? {};
  return {
    label,
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    errors: result.errors,
    non2xx: result.non2xx,
    timeouts: result.timeouts,
    requests: result.requests.total,
    sent: result.requests.sent,
    status: Object.fromEntries(Object.entries(stats).map(([code, v]) => [code, v.count])),
    max: result.latency.max,
  };
}

export interface PacedOptions {
  url: string;
  ratePerS: number;
  /** Keep-alive sockets at most (requests beyond them wait for one, and that wait counts). */
  connections: number;
  durationS?: number;
}

const percentile = (sorted: number[], p: number): number => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : 0);

/**
 * Open-loop load at a steady rate: request i is due at start + i/rate, sent then whatever earlier
 * answers do, and its latency counts from when it was due (a late send or a wait for a socket is
 * part of it). autocannon's rate limit is not that: each connection sends as fast as answered
 * until its quota for the second is spent, then pauses to the next second, so 50 connections at
 * 1/s each fire together once a second, and its coordinated-omission correction (expected
 * interval = ceil(1/rate) ms) adds synthetic samples to every answer slower than 1 ms. Latencies
 * here are of every answer, whatever its status. Timers fire on whole milliseconds, so a send is
 * ~0.5 ms late at the median on an idle machine: `fromSend` times the same answers from the send
 * (a wait for a socket still counts), which leaves this process's own lateness out.
 */
/** node:http or node:https, whichever `url` needs (a target may be either). */
export const clientFor = (url: string): typeof http | typeof https => (url.startsWith('https:') ? https : http);

export async function paced(label: string, opts: PacedOptions): Promise<Summary> {
  const durationS = opts.durationS ?? DURATION_S;
  const { Agent, request } = clientFor(opts.url);
  const agent = new Agent({ keepAlive: true, maxSockets: opts.connections });
  const interval = 1000 / opts.ratePerS;
  const latencies: number[] = [];
  const fromSend: number[] = [];
  const status: Record<string, number> = {};
  let errors = 0;
  let timeouts = 0;
  const one = (due: number): Promise<void> =>
    new Promise((resolve) => {
      const sent = performance.now();
      const req = request(opts.url, { agent, timeout: 10_000 }, (res) => {
        res.resume();
        res.once('end', () => {
          const now = performance.now();
          latencies.push(now - due);
          fromSend.push(now - sent);
          status[String(res.statusCode)] = (status[String(res.statusCode)] ?? 0) + 1;
          resolve();
        });
      });
      req.once('timeout', () => {
        timeouts++;
        req.destroy();
      });
      req.once('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  const end = started + durationS * 1000;
  const inflight: Promise<void>[] = [];
  for (let i = 0; started + i * interval < end; ) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    // everything due by now goes out (a late timer catches up rather than drops requests)
    for (const now = performance.now(); started + i * interval <= now && started + i * interval < end; i++) inflight.push(one(started + i * interval));
  }
  await Promise.all(inflight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  fromSend.sort((a, b) => a - b);
  const answered = latencies.length;
  return {
    label,
    reqPerSec: answered / durationS,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    errors,
    non2xx: Object.entries(status).reduce((n, [c, k]) => n + (c.startsWith('2') ? 0 : k), 0),
    timeouts,
    requests: answered + errors,
    sent: answered + errors,
    status,
    max: latencies.at(-1) ?? 0,
    fixedRate: { ratePerS: opts.ratePerS, latency: 'open-loop' },
    fromSend: { p50: percentile(fromSend, 0.5), p99: percentile(fromSend, 0.99), p999: percentile(fromSend, 0.999) },
  };
}

/**
 * The latencies of the requests an answer of `ms` held back on a connection meant to send one every
 * `intervalMs`: ms − I, ms − 2I, … while at least I (HdrHistogram's recordValueWithExpectedInterval).
 */
export function heldBack(ms: number, intervalMs: number): number[] {
  const out: number[] = [];
  for (let missing = ms - intervalMs; missing >= intervalMs; missing -= intervalMs) out.push(missing);
  return out;
}

export interface TimedLoadOptions extends LoadOptions {
  /** Requests per second over all connections: a fixed-rate load. */
  ratePerS?: number;
  /** autocannon's request sequence (e.g. a setupRequest varying the body or path of each request). */
  requests?: Request[];
}

/**
 * An autocannon load that keeps every answer's time, so its percentiles are to the microsecond
 * (autocannon's histogram keeps whole milliseconds). At a fixed rate, autocannon's overallRate lets
 * each connection send its share of a second as fast as answered, then wait for the next second,
 * and its own coordinated-omission correction takes 1/rate for the interval in milliseconds (1 ms
 * at any rate above 1/s). That correction is turned off, and the one here uses each connection's
 * real interval I = 1000/its rate ms: an answer that took L also records L−I, L−2I, … down to I,
 * the latencies of the requests it held back (HdrHistogram's recordValueWithExpectedInterval).
 */
export async function timedLoad(label: string, opts: TimedLoadOptions): Promise<Summary> {
  const durationS = opts.durationS ?? DURATION_S;
  const rate = opts.ratePerS;
  const latencies: number[] = [];
  let added = 0;
  const run = autocannon({
    url: opts.url,
    connections: opts.connections ?? CONNECTIONS,
    duration: durationS,
    method: opts.method ?? 'GET',
    body: opts.body,
    headers: opts.headers,
    requests: opts.requests,
    ...(rate ? { overallRate: rate, ignoreCoordinatedOmission: true } : {}),
  }) as unknown as Instance & PromiseLike<Result>;
  run.on('response', (client, _status, _bytes, ms) => {
    latencies.push(ms);
    const connection = client as unknown as { rate?: number; responseMax?: number };
    const perConnection = connection.rate;
    if (!perConnection) return;
    // autocannon sends a connection's share at every whole second, the one the load ends on included,
    // so a connection stops at its due requests (it reads responseMax, 0 for none, before each send)
    connection.responseMax ||= Math.round(perConnection * durationS);
    const missing = heldBack(ms, 1000 / perConnection);
    added += missing.length;
    for (const m of missing) latencies.push(m);
  });
  const row = summarize(label, await run);
  latencies.sort((a, b) => a - b);
  if (rate && row.sent !== undefined) {
    // autocannon counts each connection's first request as its whole rate (its `request` event comes
    // before autocannon listens): one request per connection, of the min(connections, rate) it opens
    row.sent += Math.min(opts.connections ?? CONNECTIONS, rate) - rate;
  }
  return {
    ...row,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    p999: percentile(latencies, 0.999),
    max: latencies.at(-1) ?? 0,
    ...(rate ? { fixedRate: { ratePerS: rate, latency: 'corrected' as const, intended: Math.round(rate * durationS), added } } : {}),
  };
}

/** A short discarded run so JIT and pools are warm before measuring. */
export async function warm(url: string, opts: Partial<LoadOptions> = {}): Promise<void> {
  await load('warm-up', { url, durationS: 2, ...opts });
}

const fmt = (n: number, d = 0): string => n.toFixed(d).padStart(9);

export function printTable(title: string, rows: (Summary & { ratio?: number; vs?: string })[]): void {
  console.log(`\n## ${title}`);
  console.log(`${'scenario'.padEnd(44)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'p99.9'.padStart(9)}${'errors'.padStart(9)}${'non2xx'.padStart(9)}  ratio`);
  for (const r of rows) {
    const ratio = r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}x ${r.vs ?? ''}`;
    console.log(`${r.label.padEnd(44)}${fmt(r.reqPerSec)}${fmt(r.p50, 1)}${fmt(r.p99, 1)}${fmt(r.p999, 1)}${fmt(r.errors)}${fmt(r.non2xx)}  ${ratio}`);
  }
  // how the rows at a fixed rate were timed, once per way, with what the correction added
  for (const mode of Object.keys(TIMING) as FixedRate['latency'][]) {
    const fixed = rows.filter((r) => r.fixedRate?.latency === mode);
    if (!fixed.length) continue;
    const added = fixed.filter((r) => r.fixedRate!.intended !== undefined).map((r) => `${r.label}: ${r.fixedRate!.ratePerS}/s, ${r.sent ?? r.requests} sent (${r.fixedRate!.intended} due), ${r.fixedRate!.added} samples added`);
    console.log(`fixed-rate latency (${fixed.length} row${fixed.length > 1 ? 's' : ''}): ${TIMING[mode]}${added.length ? `; ${added.join('; ')}` : ''}`);
  }
}

/** The machine and settings of a run; against a target (its base URL), the generator's machine only. */
export function environment(target: string | null = null): Record<string, unknown> {
  return {
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model,
    target,
    generator_on_same_host: target === null ? true : 'unknown',
    duration_s: DURATION_S,
    connections: CONNECTIONS,
    note:
      target === null
        ? 'load generator and server share this machine: compare ratios within one run, not absolute figures across machines'
        : 'a running deployment: absolute figures only (no baselines), which include the network between this machine and it',
  };
}

/** Writes the report as JSON under BENCH_RESULTS_DIR (default bench/results) and returns its path. */
export function saveReport(name: string, report: unknown): string {
  const dir = process.env.BENCH_RESULTS_DIR ?? fileURLToPath(new URL('./results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const stem = join(dir, `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  // two runs finishing in the same millisecond each keep their own file
  for (let n = 1; ; n++) {
    const file = n === 1 ? `${stem}.json` : `${stem}-${n}.json`;
    try {
      writeFileSync(file, JSON.stringify(report, null, 2), { flag: 'wx' });
      return file;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

/** The telemetry frame every verdict scenario posts. */
export const VERDICT_FRAME = JSON.stringify({ track_id: 'a1b2c3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 });

/**
 * CPU seconds (user + system) of a process's main thread and of the whole process, from /proc
 * (Linux). A wall-clock profile charges a thread's waits for the CPU to whatever it was running
 * (on a loaded machine, mostly writev: a loopback write wakes the client, which may take the
 * core), so the cost per request is read from the CPU clocks instead.
 */
export function cpuSeconds(pid: number): { main: number; all: number } | null {
  try {
    const ticks = (stat: string): number => {
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    };
    const hz = 100; // USER_HZ: 100 on every Linux ABI node runs on
    return { main: ticks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')) / hz, all: ticks(readFileSync(`/proc/${pid}/stat`, 'utf8')) / hz };
  } catch {
    return null;
  }
}

/**
 * One scrape of a server's /metrics: each sample's value by its series as the exposition writes it,
 * name and labels (`nodejs_gc_duration_seconds_sum{kind="minor"}`, `process_resident_memory_bytes`).
 */
export async function scrapeMetrics(base: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** Sums and counts of the verdict path's stage histograms (src/ledger/ledger.metrics.ts) in one scrape. */
export interface VerdictStages {
  signS: number;
  batches: number;
  signed: number;
  commitS: number;
  commits: number;
  committed: number;
}

/** Seconds of minor (scavenge) GC of the service's main thread so far (prom-client's nodejs_gc_duration_seconds), from one scrape. */
export function minorGcSeconds(m: Map<string, number>): number {
  return m.get('nodejs_gc_duration_seconds_sum{kind="minor"}') ?? NaN;
}

export function verdictStages(m: Map<string, number>): VerdictStages {
  const read = (series: string): number => m.get(series) ?? 0;
  return {
    signS: read('svc_signing_batch_seconds_sum{lane="receipts",outcome="ok"}'),
    batches: read('svc_signing_batch_seconds_count{lane="receipts",outcome="ok"}'),
    signed: read('svc_signing_batch_size_sum{lane="receipts"}'),
    commitS: read('svc_ledger_commit_seconds_sum{outcome="ok"}'),
    commits: read('svc_ledger_commit_seconds_count{outcome="ok"}'),
    committed: read('svc_ledger_commit_nodes_sum'),
  };
}

/**
 * What a verdict waited for outside the main thread between two reads: the mean signing batch
 * (round trip, receipts per batch) and the mean group commit (durable write, nodes per commit).
 */
export function describeStages(a: VerdictStages, b: VerdictStages): string {
  const batches = b.batches - a.batches;
  const commits = b.commits - a.commits;
  if (!batches || !commits) return 'no batches';
  const ms = (s: number, n: number): string => ((1000 * s) / n).toFixed(2);
  return `signing ${ms(b.signS - a.signS, batches)} ms × ${((b.signed - a.signed) / batches).toFixed(1)}, commit ${ms(b.commitS - a.commitS, commits)} ms × ${((b.committed - a.committed) / commits).toFixed(1)}`;
}
