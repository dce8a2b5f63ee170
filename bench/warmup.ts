/**
 * Warm workers (pool.warmup), measured two ways:
 * - start-up to ready: the built service started with warm-up on and off, timed from the spawn to
 *   its first passing /health, with the `ready` line it logs (process start to ready, and each
 *   thread's warm-up);
 * - first call against warm calls: a fresh one-thread pool on the built worker entry, with the
 *   service's warm-up or none, then passes over every kernel (firstVsWarm); run time as the
 *   worker measures it (no message passing), and the thread's CPU time for the call (offCpuNs).
 *   Repeated ROUNDS times with a fresh pool, and the median ratio per kernel kept, so one
 *   preempted or collected call does not decide it.
 *   npm run bench -- warmup
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Piscina } from 'piscina';
import { KERNELS } from '../workers/registry.js';
import { kernelParamsSchema, orderParams } from '../workers/kernel-def.js';
import type { TaskResult } from '../src/lib/tasks.js';
import { loadConfig } from '../src/config/load.js';

const MEASURED_PASSES = 6;
/**
 * The pass whose calls, against the same warm calls (the median of the last three passes), give
 * the call-to-call spread of one kernel's CPU time: with the service's warm-up, every call of it
 * is warm, so its ratios are what a first call's would be with no first-call cost.
 */
const SPREAD_PASS = 2;
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
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    // port 0: the OS picks a free one and the `listening` line names it (a random pick once
    // collided with a client socket of the previous scenario, and the service could not listen)
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', SVC_POOL_WARMUP: String(warmup), SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-warm-')) },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  let ready: { startupMs?: number; warmMs?: number[] } | null = null;
  // set by the log reader below (a holder, so the loop sees it change)
  const listening: { port: number | null } = { port: null };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const rec = JSON.parse(line) as { msg?: string; port?: number; startupMs?: number; warmMs?: number[] };
      if (rec.msg === 'listening') listening.port = rec.port ?? null;
      if (rec.msg === 'ready') ready = rec;
    } catch {
      // not a log line
    }
  });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('the service exited before it was ready');
      if (performance.now() - t0 > 120_000) throw new Error('the service was not ready within 120 s');
      const ok =
        listening.port !== null &&
        (await fetch(`http://127.0.0.1:${listening.port}/api/svc/v1/health`).then(
          (r) => r.ok,
          () => false,
        ));
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

/** A kernel's first call against its warm calls in its thread's CPU time (offCpuNs). */
interface KernelCpuRatio {
  id: string;
  firstCpuMs: number;
  warmCpuMs: number;
  ratio: number;
  /** Its call in SPREAD_PASS against the same warm calls: how far one call strays with no first-call cost in it. */
  spreadRatio: number;
}

/** One kernel on one clock: its first call, its warm time, their ratio, and a warm call's (SPREAD_PASS) ratio to the same warm time. */
interface AgainstWarm {
  first: number;
  warm: number;
  ratio: number;
  spread: number;
}

interface Round {
  /** Per kernel, in registry order: wall time as the worker measures it. */
  wall: AgainstWarm[];
  /** The same in thread CPU time, or null where the thread's schedstat is not readable. */
  cpu: AgainstWarm[] | null;
  /** The thread's CPU time per pass (ms: the sum of its calls'), or null likewise. */
  passCpuMs: number[] | null;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Per kernel (columns) over passes (rows) of one clock: first call against the median of the last three passes. */
function againstWarm(passes: readonly number[][]): AgainstWarm[] {
  return passes[0]!.map((first, j) => {
    const warm = median(passes.slice(-3).map((p) => p[j]!));
    return { first, warm, ratio: first / warm, spread: passes[SPREAD_PASS]![j]! / warm };
  });
}

/** Per kernel, the median of each figure over rounds (one sample per round: one preempted or collected call does not decide it). */
function acrossRounds(rounds: readonly AgainstWarm[][]): AgainstWarm[] {
  const of = (j: number, key: keyof AgainstWarm): number => median(rounds.map((r) => r[j]![key]));
  return rounds[0]!.map((_, j) => ({ first: of(j, 'first'), warm: of(j, 'warm'), ratio: of(j, 'ratio'), spread: of(j, 'spread') }));
}

/** Median, worst and the number over 1.2× of per-kernel ratios. */
function ratioSummary(ratios: readonly number[]): { medianRatio: number; worstRatio: number; over1_2: number } {
  return { medianRatio: median([...ratios]), worstRatio: Math.max(...ratios), over1_2: ratios.filter((r) => r > 1.2).length };
}

/**
 * A thread's CPU time in ns, read once it is off the CPU (Linux `schedstat`), or null. The figure
 * is brought up to date whenever the thread leaves the CPU, and only at a scheduler tick while it
 * runs; an idle pool thread waits in `Atomics.wait`, so read between tasks it is exact, where
 * `process.threadCpuUsage` (Node 22 and 24) moves in whole ticks here. A task's figure includes
 * piscina's message handling in the thread (tens of µs), first call and warm calls alike.
 */
async function offCpuNs(tid: number | null): Promise<number | null> {
  if (tid === null) return null;
  const task = `/proc/${process.pid}/task/${tid}`;
  try {
    // still running: it has answered and is on its way to waiting for the next task (a thread
    // preempted on the way may stay runnable a while: after 100 ms the figure is read as it is)
    const until = performance.now() + 100;
    for (;;) {
      const stat = readFileSync(`${task}/stat`, 'latin1');
      if (stat[stat.lastIndexOf(')') + 2] !== 'R' || performance.now() > until) break;
      await new Promise((r) => setImmediate(r));
    }
    return Number(readFileSync(`${task}/schedstat`, 'latin1').split(' ')[0]);
  } catch {
    return null; // no /proc (not Linux), or the thread is gone
  }
}

/**
 * One fresh one-thread pool: MEASURED_PASSES passes over every kernel in registry order, as mixed
 * traffic calls them; a kernel's first call is its call in pass one, its warm time the median of
 * its calls in the last three passes. (Its time in a streak of calls to itself alone is lower
 * still, warm-up or not: the kernels share helpers that a streak keeps specialised to one of them.)
 */
async function firstVsWarm(warmup: boolean, warmupPasses: number): Promise<Round> {
  const pool = new Piscina({ filename: new URL('../dist/workers/host.js', import.meta.url).href, minThreads: 1, maxThreads: 1, workerData: { niceIncrement: 0, warmup, warmupPasses } });
  let tid: number | null = null;
  const run = async (id: string, params: Record<string, unknown>): Promise<{ ms: number; cpuMs: number | null }> => {
    const c0 = await offCpuNs(tid);
    const r = (await pool.run({ kind: 'kernel', id, params, requestLabel: null })) as TaskResult;
    const c1 = await offCpuNs(tid);
    if (!r.ok) throw new Error(`${id}: ${r.error.msg}`);
    return { ms: r.stats.runMs, cpuMs: c0 === null || c1 === null ? null : (c1 - c0) / 1e6 };
  };
  try {
    // the thread has started (and warmed up, if asked to); its Linux id, for its CPU clock
    const probe = (await pool.run({ kind: 'probe' })) as TaskResult<{ tid: number | null }>;
    tid = probe.ok ? probe.value.tid : null;
    const all = KERNELS.map((def) => ({ id: def.id, params: orderParams(def, kernelParamsSchema(def).validate({}).value as Record<string, unknown>) }));
    const passes: { ms: number; cpuMs: number | null }[][] = [];
    for (let p = 0; p < MEASURED_PASSES; p++) {
      const calls: { ms: number; cpuMs: number | null }[] = [];
      for (const k of all) calls.push(await run(k.id, k.params));
      passes.push(calls);
    }
    const perCallCpu = passes.every((p) => p.every((c) => c.cpuMs !== null));
    const cpuPasses = perCallCpu ? passes.map((p) => p.map((c) => c.cpuMs!)) : null;
    return {
      wall: againstWarm(passes.map((p) => p.map((c) => c.ms))),
      cpu: cpuPasses && againstWarm(cpuPasses),
      passCpuMs: cpuPasses && cpuPasses.map((p) => p.reduce((sum, ms) => sum + ms, 0)),
    };
  } finally {
    await pool.destroy();
  }
}

/** The warm-up passes the service runs with (its production config and the environment). */
function servicePasses(): number {
  return loadConfig({ env: { ...process.env, NODE_ENV: 'production' } }).pool.warmupPasses;
}

export interface FirstCallResult {
  warmup: boolean;
  warmupPasses: number;
  rounds: number;
  kernels: number;
  /**
   * The robust figure: the thread's CPU time for the pass of first calls over its steady pass
   * (median of the last three), median over rounds. CPU time does not count the waits for a core
   * that dominate wall time on a shared machine.
   */
  firstPassCpuRatio: number | null;
  /** Each pass's CPU time (ms), median over rounds. */
  passCpuMs: number[] | null;
  /** Per kernel, wall time (noisy: one sample per round): the median over rounds of first/warm. */
  medianRatio: number;
  worstRatio: number;
  over1_2: number;
  worst: KernelRatio[];
  /** Per kernel, the thread's CPU time for the call (median over rounds of first/warm), or null. */
  cpu: { medianRatio: number; worstRatio: number; over1_2: number; worst: KernelCpuRatio[]; spread: { pass: number; medianRatio: number; worstRatio: number; over1_2: number } } | null;
}

export async function firstCalls(warmup: boolean, warmupPasses = servicePasses()): Promise<FirstCallResult> {
  const rounds: Round[] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await firstVsWarm(warmup, warmupPasses));
  const ids = KERNELS.map((def) => def.id);
  const wall = acrossRounds(rounds.map((r) => r.wall));
  const perKernel = wall.map((k, j) => ({ id: ids[j]!, firstMs: k.first, warmMs: k.warm, ratio: k.ratio }));
  const cpuKernels = rounds.every((r) => r.cpu)
    ? acrossRounds(rounds.map((r) => r.cpu!)).map((k, j) => ({ id: ids[j]!, firstCpuMs: k.first, warmCpuMs: k.warm, ratio: k.ratio, spreadRatio: k.spread }))
    : null;
  const cpuRounds = rounds.every((r) => r.passCpuMs) ? rounds.map((r) => r.passCpuMs!) : null;
  return {
    warmup,
    warmupPasses,
    rounds: ROUNDS,
    kernels: perKernel.length,
    firstPassCpuRatio: cpuRounds ? median(cpuRounds.map((c) => c[0]! / median(c.slice(-3)))) : null,
    passCpuMs: cpuRounds ? cpuRounds[0]!.map((_, p) => median(cpuRounds.map((c) => c[p]!))) : null,
    ...ratioSummary(perKernel.map((k) => k.ratio)),
    worst: [...perKernel].sort((a, b) => b.ratio - a.ratio).slice(0, 5),
    cpu: cpuKernels
      ? {
          ...ratioSummary(cpuKernels.map((k) => k.ratio)),
          worst: [...cpuKernels].sort((a, b) => b.ratio - a.ratio).slice(0, 5),
          spread: { pass: SPREAD_PASS + 1, ...ratioSummary(cpuKernels.map((k) => k.spreadRatio)) },
        }
      : null,
  };
}

export async function warmupBench(): Promise<{ startup: StartupResult[]; firstCalls: FirstCallResult[] }> {
  const starts = [await startup(false), await startup(true)];
  const calls = [await firstCalls(false), await firstCalls(true)];
  return { startup: starts, firstCalls: calls };
}
