/** Shared bench plumbing: start a server process, run autocannon, summarise, print, save. */
import autocannon, { type Result } from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Server {
  name: string;
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Spawns a server on a free port and waits until `readyPath` answers. */
export async function startServer(name: string, args: string[], readyPath: string, env: Record<string, string> = {}, readyTimeoutS = 20): Promise<Server> {
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

export interface LoadOptions {
  url: string;
  connections?: number;
  durationS?: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** Requests per second across all connections (open-loop pacing); unset = as fast as answered. */
  overallRate?: number;
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
}

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
    ...(opts.overallRate ? { overallRate: opts.overallRate } : {}),
  });
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
    status: Object.fromEntries(Object.entries(stats).map(([code, v]) => [code, v.count])),
    max: result.latency.max,
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
}

export function environment(): Record<string, unknown> {
  return {
    node: process.version,
    cpus: cpus().length,
    cpu_model: cpus()[0]?.model,
    generator_on_same_host: true,
    duration_s: DURATION_S,
    connections: CONNECTIONS,
    note: 'load generator and server share this machine: compare ratios within one run, not absolute figures across machines',
  };
}

export function saveReport(name: string, report: unknown): string {
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const file = new URL(`./results/${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, import.meta.url);
  writeFileSync(file, JSON.stringify(report, null, 2));
  return file.pathname;
}
