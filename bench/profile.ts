/**
 * `npm run bench:profile -- <scenario>`: the built service under `node --cpu-prof`, loaded by
 * autocannon for BENCH_DURATION seconds, then the main thread's profile summarised: idle, GC and
 * program shares, and the functions with the most self time. The .cpuprofile stays in
 * bench/results/ (open it in Chrome DevTools or speedscope for the call tree).
 *   npm run bench:profile -- 404 doctrine health verdict kernel
 * BENCH_PROF_INTERVAL_US sets the sampling interval (V8's default is 1,000 µs; 100 shows the main
 * thread's idle stretches, at a cost of about a fifth of its throughput).
 * Scenarios: see TARGETS. The service runs as in the bench (production config, file ledger in a
 * temporary directory, write limit off); the worker threads are not profiled (--cpu-prof profiles
 * the main thread only).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, DURATION_S, load, startServer, startService, warm, type LoadOptions, VERDICT_FRAME as FRAME } from './lib.js';
import { summarise, type Profile } from './profile-summary.js';

interface Target extends Omit<LoadOptions, 'url'> {
  path: string;
  /** The bare baselines are profiled the same way, for their main-thread cost per request. */
  server?: 'koa' | 'bare';
}

const TARGETS: Record<string, Target> = {
  'koa-hello': { path: '/hello', server: 'koa' },
  'http-hello': { path: '/', server: 'bare' },
  '404': { path: '/api/svc/v1/no-such-route' },
  doctrine: { path: '/api/svc/v1/doctrine' },
  health: { path: '/api/svc/v1/health' },
  verdict: { path: '/api/svc/v1/verdict', method: 'POST', body: FRAME, headers: { 'content-type': 'application/json' } },
  kernel: { path: '/api/svc/v1/ssm/scan' },
};

const wanted = process.argv.slice(2);
const names = wanted.length ? wanted : Object.keys(TARGETS);
const outRoot = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(outRoot, { recursive: true });
for (const name of names) {
  const target = TARGETS[name];
  if (!target) throw new Error(`unknown profile target ${name}: one of ${Object.keys(TARGETS).join(', ')}`);
  const dir = mkdtempSync(join(outRoot, `profile-${name}-`));
  const prof = ['--cpu-prof', '--cpu-prof-dir', dir, ...(process.env.BENCH_PROF_INTERVAL_US ? ['--cpu-prof-interval', process.env.BENCH_PROF_INTERVAL_US] : [])];
  const spawnedAt = performance.now();
  const { path, server, ...opts } = target;
  const svc =
    server === 'koa'
      ? await startServer('koa-hello', [...prof, '--import', 'tsx', 'bench/servers/koa-hello.ts'], path)
      : server === 'bare'
        ? await startServer('http-hello', [...prof, '--import', 'tsx', 'bench/servers/http-hello.ts'], path)
        : await startService('service', {}, prof);
  let window: [number, number];
  let requests: number;
  try {
    await warm(svc.base + path, opts);
    const from = performance.now() - spawnedAt;
    const cpu0 = cpuSeconds(svc.child.pid!);
    const r = await load(name, { url: svc.base + path, ...opts });
    const cpu1 = cpuSeconds(svc.child.pid!);
    // a quarter second off either end: the process started a little after the spawn call
    window = [from + 250, performance.now() - spawnedAt - 250];
    requests = r.requests * ((window[1] - window[0]) / (DURATION_S * 1000));
    console.log(`\n## ${name}: ${opts.method ?? 'GET'} ${path}, ${r.reqPerSec.toFixed(0)} req/s over ${DURATION_S} s (p99 ${r.p99} ms)`);
    if (cpu0 && cpu1) console.log(`CPU per request: main thread ${((1e6 * (cpu1.main - cpu0.main)) / r.requests).toFixed(1)} µs, whole process ${((1e6 * (cpu1.all - cpu0.all)) / r.requests).toFixed(1)} µs`);
  } finally {
    await svc.stop();
  }
  // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread (the workers write their own)
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile') && f.split('.')[4] === '0');
  if (!file) throw new Error(`no profile written in ${dir}`);
  console.log(summarise(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile, window[0], window[1], requests));
  console.log(`profile: ${join(dir, file)}`);
}
