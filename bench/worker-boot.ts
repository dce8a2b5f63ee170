/**
 * What it costs to start kernel threads: a pool of BOOT_THREADS (default 2) threads, each answering
 * one probe, for each way a thread can load the kernel host. Process CPU (every thread) and wall
 * time, BOOT_ROUNDS (default 4) fresh pools each, interleaved. Run after `npm run build`:
 *
 *   npm run build && npm run bench:boot
 *
 * Rows: the sources under the tsx loader (how threads started before src/platform/worker-source.ts),
 * the build (one ES module per file, no loader), and the sources as the pool now starts them (one
 * esbuild bundle, no loader).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { acceptedByWorkers, withoutTsLoader, workerSource } from '../src/platform/worker-source.js';

const threads = Number(process.env.BOOT_THREADS ?? 2);
const rounds = Number(process.env.BOOT_ROUNDS ?? 4);
const sources = new URL('../workers/host.ts', import.meta.url);
const built = new URL('../dist/workers/host.js', import.meta.url);
if (!existsSync(fileURLToPath(built))) throw new Error('dist/workers/host.js is missing: run `npm run build` first');

const variants: { name: string; filename: string; execArgv: string[] | undefined }[] = [
  { name: 'workers/host.ts under tsx', filename: sources.href, execArgv: undefined },
  // the build's threads without the loader, as `npm start` runs them
  { name: 'dist/workers/host.js', filename: built.href, execArgv: acceptedByWorkers(withoutTsLoader(process.execArgv)) },
  { name: 'workers/host.ts bundled (worker-source)', ...workerSource(sources) },
];

async function boot(v: (typeof variants)[number]): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const pool = new Piscina({ filename: v.filename, execArgv: v.execArgv, minThreads: threads, maxThreads: threads, concurrentTasksPerWorker: 1 });
  await Promise.all(Array.from({ length: threads }, () => pool.run({ kind: 'probe' })));
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await pool.destroy();
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs };
}

const results = new Map<string, { cpuMs: number; wallMs: number }[]>(variants.map((v) => [v.name, []]));
for (let r = 0; r < rounds; r++) for (const v of variants) results.get(v.name)!.push(await boot(v));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[]): string => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
console.log(`${threads} threads, ${rounds} pools each, Node ${process.version}`);
console.log('| worker entry | CPU ms (median; range) | wall ms (median; range) |\n|---|---|---|');
for (const [name, xs] of results) {
  const cpu = xs.map((x) => x.cpuMs);
  const wall = xs.map((x) => x.wallMs);
  console.log(`| ${name} | ${Math.round(median(cpu))} (${range(cpu)}) | ${Math.round(median(wall))} (${range(wall)}) |`);
}
