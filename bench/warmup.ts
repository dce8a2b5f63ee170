/**
 * Warm workers (pool.warmup), measured two ways:
 * - start-up to ready: the built service started with warm-up on and off, timed from the spawn to
 *   its first passing /health, with the `ready` line it logs (process start to ready, and each
 *   thread's warm-up);
 * - first call against warm calls: a fresh one-thread pool on the built worker entry, each kernel
 *   called once (its first call in that thread) and then WARM_CALLS times (its warm time, the
 *   median); run time as the worker measures it (no message passing). Repeated ROUNDS times with
 *   a fresh pool, and the median ratio per kernel kept, so one preempted or collected call does
 *   not decide it.
 *   npm run bench -- warmup
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Piscina } from 'piscina';
import { KERNELS } from '../workers/registry.js';
import { kernelParamsSchema, orderParams } from '../workers/kernel-def.js';
import type { TaskResult } from '../workers/tasks.js';

const WARM_CALLS = 5;
const ROUNDS = Number(process.env.BENCH_WARMUP_ROUNDS ?? 3);

export interface StartupResult {
  warmup: boolean;
  /** Spawn to the first /health 200, as a client sees it. */
  spawnToHealthyMs: number;
  /** The service's own figure: process start to every thread ready (`ready` log line). */
  startupMs: number | null;
  warmMs: number[] | null;
}

/** Starts the built service once and times it to ready. */
async function startup(warmup: boolean): Promise<StartupResult> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', SVC_POOL_WARMUP: String(warmup), SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-warm-')) },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let ready: { startupMs?: number; warmMs?: number[] } | null = null;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const rec = JSON.parse(line) as { msg?: string; startupMs?: number; warmMs?: number[] };
      if (rec.msg === 'ready') ready = rec;
    } catch {
      // not a log line
    }
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('the service exited before it was ready');
      if (performance.now() - t0 > 120_000) throw new Error('the service was not ready within 120 s');
      const ok = await fetch(`http://127.0.0.1:${port}/api/svc/v1/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const spawnToHealthyMs = performance.now() - t0;
    for (let i = 0; i < 20 && !ready; i++) await new Promise((r) => setTimeout(r, 50));
    const r = ready as { startupMs?: number; warmMs?: number[] } | null;
    return { warmup, spawnToHealthyMs, startupMs: r?.startupMs ?? null, warmMs: r?.warmMs ?? null };
  } finally {
    child.kill('SIGTERM');
  }
}

interface KernelRatio {
  id: string;
  firstMs: number;
  warmMs: number;
  ratio: number;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One fresh one-thread pool: each kernel's first call and its warm median, in registry order. */
async function firstVsWarm(warmup: boolean): Promise<KernelRatio[]> {
  const pool = new Piscina({ filename: new URL('../dist/workers/host.js', import.meta.url).href, minThreads: 1, maxThreads: 1, workerData: { diagnostics: false, niceIncrement: 0, warmup } });
  const run = async (id: string, params: Record<string, unknown>): Promise<number> => {
    const r = (await pool.run({ kind: 'kernel', id, params, requestLabel: null })) as TaskResult;
    if (!r.ok) throw new Error(`${id}: ${r.error.msg}`);
    return r.stats.runMs;
  };
  try {
    await pool.run({ kind: 'probe' }); // the thread has started (and warmed up, if asked to)
    const out: KernelRatio[] = [];
    for (const def of KERNELS) {
      const params = orderParams(def, kernelParamsSchema(def).validate({}).value as Record<string, unknown>);
      const firstMs = await run(def.id, params);
      const warm: number[] = [];
      for (let i = 0; i < WARM_CALLS; i++) warm.push(await run(def.id, params));
      const warmMs = median(warm);
      out.push({ id: def.id, firstMs, warmMs, ratio: firstMs / warmMs });
    }
    return out;
  } finally {
    await pool.destroy();
  }
}

export interface FirstCallResult {
  warmup: boolean;
  rounds: number;
  kernels: number;
  /** Over kernels, of each kernel's median (over rounds) first/warm ratio. */
  medianRatio: number;
  worstRatio: number;
  over1_2: number;
  worst: KernelRatio[];
}

async function firstCalls(warmup: boolean): Promise<FirstCallResult> {
  const rounds: KernelRatio[][] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await firstVsWarm(warmup));
  const perKernel = rounds[0]!.map((k, j) => {
    const ratio = median(rounds.map((r) => r[j]!.ratio));
    return { id: k.id, firstMs: median(rounds.map((r) => r[j]!.firstMs)), warmMs: median(rounds.map((r) => r[j]!.warmMs)), ratio };
  });
  const ratios = perKernel.map((k) => k.ratio);
  return {
    warmup,
    rounds: ROUNDS,
    kernels: perKernel.length,
    medianRatio: median(ratios),
    worstRatio: Math.max(...ratios),
    over1_2: ratios.filter((r) => r > 1.2).length,
    worst: [...perKernel].sort((a, b) => b.ratio - a.ratio).slice(0, 5),
  };
}

export async function warmupBench(): Promise<{ startup: StartupResult[]; firstCalls: FirstCallResult[] }> {
  const starts = [await startup(false), await startup(true)];
  const calls = [await firstCalls(false), await firstCalls(true)];
  return { startup: starts, firstCalls: calls };
}
