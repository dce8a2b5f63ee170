/**
 * The one Piscina pool: fixed size, explicit numeric maxQueue, a deadline on every task (queue
 * wait included) and an abort when the client goes away. Failures come back as AppErrors:
 * queue full → 503 + Retry-After, deadline → 504, a crashed worker → 500 (piscina replaces it).
 */
import type { KeyObject } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Piscina } from 'piscina';
import type { Config } from '../config/schema.js';
import { AppError, Errors } from '../http/errors.js';
import type { Logger } from '../observability/logger.js';
import type { PoolSnapshot } from '../observability/metrics.js';
import type { Task, TaskResult, TaskStats, WarmReport } from '../lib/tasks.js';
import type { Departure } from '../http/departure.js';
import { entryNextTo, workerSource } from './worker-source.js';

export interface RunOptions {
  /** Aborts when the client disconnects. */
  signal?: AbortSignal;
  /** The client's connection, as a cheaper signal (departure.ts): a gone client is answered like an aborted signal. */
  departure?: Departure;
  /** Overrides the configured deadline (ms), queue wait included. */
  deadlineMs?: number;
  /**
   * `signing`: a signature check run in the signing lane, which boots in milliseconds, so the
   * start-up check of the ledger never waits for the kernel threads' warm-up.
   */
  lane?: 'signing';
}

export interface RunOutcome<T> {
  value: T;
  stats: TaskStats;
  /** Time from submission to the start of the run, as seen from the main thread. */
  waitMs: number;
}

export interface PoolOptions {
  /** The kernel lane's worker module (default `workers/host`): tests start it with a fixture
   * worker that adds fault kernels, so the production host carries no test-only code. */
  kernelWorker?: URL;
}

export interface PoolState {
  threads: number;
  queueSize: number;
  /** Share of threads running a task right now (piscina's own figure costs ~0.3 ms to read). */
  busy: number;
  completed: number;
  maxQueue: number;
  crashes: number;
}

function workerEntry(name = 'host'): URL {
  return entryNextTo(`../../workers/${name}`, import.meta.url);
}

/**
 * The worker pools: one fixed Piscina pool for kernels (and probes) behind an admission queue kept
 * on the main thread, and a separate small pool that only signs, so a kernel flood never delays a
 * receipt.
 *
 * Admission: a task starts at once when a kernel thread is free; otherwise it waits only if the
 * estimated wait (work queued and running, from a moving average of how long each kind of task
 * holds a thread, spread over the threads) plus its own run, with a margin for its spread, fits in
 * its deadline; else it is shed at once with 503 and a `Retry-After` of the estimated wait (never
 * less than `pool.retryAfterS`). `pool.maxQueue` stays a hard cap. A queued task is checked again
 * when a thread frees: if what is left of its deadline no longer fits its run (an earlier task
 * overran its estimate), it is shed then with 503 rather than started and answered 504 with the
 * thread's time wasted. A task that waits past its deadline leaves the queue without costing a
 * thread.
 *
 * The estimate is the time a task holds a thread as the main thread sees it (dispatch to result),
 * not only the run the worker reports: under load the round trip and a busy loop add to it, and
 * only the observed figure keeps admitted work inside its deadline.
 *
 * Priority: kernel threads lower their own scheduling priority (`pool.niceIncrement`, Linux), so
 * on a saturated machine the main thread (HTTP, /health) and the signing lane get the CPU first.
 *
 * Deadlines and disconnects: a running task is never aborted for a gone client, and is answered 504
 * at its deadline while it finishes in the background (its result is dropped). Only a task still
 * running `pool.killGraceMs` after its deadline is terminated (its thread is replaced), so a
 * runaway kernel cannot hold a thread for ever.
 */
class Job {
  readonly deadlineAt: number;
  startedAt = 0;
  /** The caller has been answered (result, deadline or disconnect): a late result is dropped. */
  settled = false;
  private timer: NodeJS.Timeout | undefined = undefined;
  // what listens for the caller going away; cleanup() removes the listeners and drops these, since
  // something old still reaches a finished job, and through these fields the response and request
  // stayed alive through every minor GC
  private signal: AbortSignal | undefined = undefined;
  private onAbort: (() => void) | undefined = undefined;
  private stopDeparture: (() => void) | undefined = undefined;

  // a class with a static deadline callback, and a closure only when the caller can go away:
  // the object literal it replaces made four closures per task
  constructor(
    readonly task: Task,
    readonly key: string,
    /** Mean time this kind of task holds a thread (queue sums use it). */
    readonly expectedMs: number,
    /** Mean plus twice its mean deviation: what this task's own run must fit in. */
    readonly upperMs: number,
    /** Admitted to wait (every thread was busy): checked again at dispatch. A task offered a free
     * thread starts whatever the estimate says (it may be a first, unknown run). */
    readonly waits: boolean,
    readonly budget: number,
    readonly enqueuedAt: number,
    readonly resolve: (v: RunOutcome<unknown>) => void,
    private readonly rejectCaller: (e: AppError) => void,
    private readonly leaveQueue: (job: Job) => void,
  ) {
    this.deadlineAt = enqueuedAt + budget;
  }

  /** Arms the deadline and listens for the caller going away. */
  watch(opts: RunOptions): void {
    this.timer = setTimeout(Job.expire, this.budget, this);
    const signal = opts.signal;
    const departure = opts.departure;
    if (!signal && !departure) return;
    // named, then stored (the no-restricted-syntax rule in eslint.config.js)
    const onAbort = (): void => this.fail(Errors.clientClosed());
    signal?.addEventListener('abort', onAbort, { once: true });
    this.signal = signal;
    this.onAbort = onAbort;
    this.stopDeparture = departure?.onDepart(onAbort);
  }

  private static expire(job: Job): void {
    job.fail(Errors.deadline(job.budget));
  }

  /** Answers the caller with `err`; a still-queued task leaves the queue without costing a thread. */
  fail(err: AppError): void {
    if (this.settled) return;
    this.settled = true;
    this.cleanup();
    this.leaveQueue(this);
    this.rejectCaller(err);
  }

  reject(err: AppError): void {
    this.rejectCaller(err);
  }

  cleanup(): void {
    clearTimeout(this.timer);
    if (this.onAbort) this.signal?.removeEventListener('abort', this.onAbort);
    this.stopDeparture?.();
    this.signal = this.onAbort = this.stopDeparture = undefined;
  }
}

/**
 * A task's value, taken out of piscina's result object. piscina's TaskInfo assigns a function
 * literal to a property in its constructor (eslint.config.js says why that matters), so the
 * settled task's promise and this result stay reachable through minor GCs until the next full one.
 * Emptied, the result keeps nothing big there: the kernel's body and the signatures die young.
 */
function takeValue<T>(result: { value: T }): T {
  const value = result.value;
  (result as { value: T | undefined }).value = undefined;
  return value;
}

/**
 * Terminates a running task (piscina aborts a task whose signal emits 'abort', and replaces its
 * thread). An EventEmitter, which piscina takes as a signal: an AbortController per task cost more
 * main-thread time than the rest of the dispatch.
 */
class KillSwitch extends EventEmitter {
  aborted = false;

  abort(): void {
    this.aborted = true;
    this.emit('abort');
  }
}

/** Until a kind of task has run once its cost is unknown: assumed heavy enough to queue few. */
const DEFAULT_EXPECTED_MS = 50;
/** Weight of the newest observation in the moving averages. */
const EWMA_ALPHA = 0.2;
/** Share of a task's deadline its estimated wait and run may use at admission. */
const ADMIT_SHARE = 0.8;

/** Whether a task failed because its thread is gone (it exited, or V8 ended it at its heap cap,
 * `pool.maxOldGenerationSizeMb`): piscina starts a successor. */
function threadLost(err: unknown): boolean {
  const e = err as (Error & { code?: unknown }) | undefined;
  return e?.code === 'ERR_WORKER_OUT_OF_MEMORY' || /worker exited with code/.test(e?.message ?? '');
}

export class WorkerPool {
  private readonly pool: Piscina;
  private readonly signPool: Piscina;
  private crashes = 0;
  /** Running tasks past their deadline + grace, terminated (their threads replaced). */
  killed = 0;
  /** Tasks refused at admission or, later, at dispatch. */
  shed = 0;
  /** Of those, tasks shed at dispatch: admitted, but their deadline no longer fit their run. */
  shedLate = 0;
  private readonly queue: Job[] = [];
  private readonly running = new Set<Job>();
  private signInFlight = 0;
  /** Per task key (kernel id, task kind): moving average of the time a task holds a thread, and of its deviation. */
  private readonly estimates = new Map<string, { mean: number; dev: number }>();
  private kernelsReady: Promise<void>;
  private readonly signReady: Promise<void>;
  private kernelsBooted = false;
  private signBooted = false;
  /** The kernel lane finished its first start (it never goes back: a replaced thread warms alone). */
  private startedUp = false;
  private closing = false;

  /** A thread was replaced (crash or kill): new tasks' deadlines start once its successor has booted. */
  private rewarm(): void {
    this.kernelsBooted = false;
    const ready = this.pool.run({ kind: 'probe' } satisfies Task).then(
      () => undefined,
      () => undefined,
    );
    this.kernelsReady = ready.then(() => {
      if (this.kernelsReady === settled) this.kernelsBooted = true;
    });
    const settled = this.kernelsReady;
  }

  /** Resolves once every thread of both lanes has booted (kernel threads warmed up, with pool.warmup). */
  ready(): Promise<void> {
    return Promise.all([this.kernelsReady, this.signReady]).then(() => undefined);
  }

  /** Whether the pool has finished starting (every kernel thread answered, warmed up if configured). */
  get started(): boolean {
    return this.startedUp && this.signBooted;
  }

  /**
   * Every kernel thread has answered a probe. A thread warms up before it answers anything, and
   * piscina hands a probe to whichever thread is ready first, so probes go out until each thread
   * has answered one.
   */
  private async bootKernels(): Promise<void> {
    for (;;) {
      const answers = await Promise.all(Array.from({ length: this.threads }, () => this.pool.run({ kind: 'probe' } satisfies Task).catch(() => undefined)));
      for (const a of answers) this.noteProbe(a as TaskResult<unknown> | undefined);
      const ids = this.threadIds();
      if (this.closing || (ids.length >= this.threads && ids.every((id) => this.warmReports.has(id)))) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** What each kernel thread ran at warm-up, from its probe answers. */
  private readonly warmReports = new Map<number, WarmReport>();

  private noteProbe(result: TaskResult<unknown> | undefined): void {
    const v = result?.ok ? (result.value as { threadId?: number; warm?: WarmReport }) : undefined;
    if (v?.threadId !== undefined && v.warm) this.warmReports.set(v.threadId, v.warm);
  }

  /** Warm-up as each live kernel thread reported it (threads not heard from yet are left out). */
  warmup(): { enabled: boolean; threads: ({ threadId: number } & WarmReport)[] } {
    const threads = this.threadIds().flatMap((threadId) => {
      const r = this.warmReports.get(threadId);
      return r ? [{ threadId, ...r }] : [];
    });
    return { enabled: this.cfg.warmup, threads };
  }

  constructor(
    private readonly cfg: Config['pool'],
    readonly threads: number,
    private readonly log: Logger,
    signingKey?: KeyObject,
    opts: PoolOptions = {},
  ) {
    const common = {
      idleTimeout: cfg.idleTimeoutMs,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: cfg.maxOldGenerationSizeMb },
    };
    // kernel threads never hold the signing key: only the signing lane does
    this.pool = new Piscina({
      ...common,
      ...workerSource(opts.kernelWorker ?? workerEntry()),
      minThreads: threads,
      maxThreads: threads,
      workerData: { niceIncrement: cfg.niceIncrement, warmup: cfg.warmup, warmupPasses: cfg.warmupPasses },
    });
    this.signPool = new Piscina({ ...common, ...workerSource(workerEntry('sign-host')), minThreads: cfg.signThreads, maxThreads: cfg.signThreads, workerData: { signingKey } });
    // a thread's boot is not a task's run: deadlines start once the lanes have booted
    const warm = (p: Piscina, task: Task, n: number) => Promise.all(Array.from({ length: n }, () => p.run(task).catch(() => undefined)));
    this.kernelsReady = this.bootKernels().then(() => {
      this.kernelsBooted = true;
      this.startedUp = true;
    });
    this.signReady = warm(this.signPool, { kind: 'sign', paes: [] }, cfg.signThreads).then(() => {
      this.signBooted = true;
    });
    // an error outside a task (e.g. a worker dying between tasks) must never crash the process
    for (const p of [this.pool, this.signPool]) {
      p.on('error', (err: Error) => {
        this.crashes++;
        this.log.error({ err }, 'worker pool error');
      });
    }
  }

  private static keyOf(task: Task): string {
    return task.kind === 'kernel' ? `kernel:${task.id}` : task.kind;
  }

  /** Mean and upper estimate (mean + 2 deviations) of how long a task of this key holds a thread. */
  private expected(key: string): { mean: number; upper: number } {
    const known = this.estimates.get(key);
    if (known !== undefined) return { mean: known.mean, upper: known.mean + 2 * known.dev };
    return { mean: DEFAULT_EXPECTED_MS, upper: DEFAULT_EXPECTED_MS };
  }

  private learn(key: string, ms: number): void {
    const prev = this.estimates.get(key);
    if (!prev) {
      this.estimates.set(key, { mean: ms, dev: 0 });
      return;
    }
    prev.dev = prev.dev * (1 - EWMA_ALPHA) + Math.abs(ms - prev.mean) * EWMA_ALPHA;
    prev.mean = prev.mean * (1 - EWMA_ALPHA) + ms * EWMA_ALPHA;
  }

  /** Milliseconds until a task submitted now would start: queued and remaining running work over the threads. */
  estimatedWaitMs(now = performance.now()): number {
    let work = 0;
    for (const j of this.running) {
      const killAt = j.deadlineAt + this.cfg.killGraceMs;
      work += Math.max(0, Math.min(j.startedAt + j.expectedMs, killAt) - now);
    }
    for (const j of this.queue) work += j.expectedMs;
    return work / Math.max(1, this.threads);
  }

  private shedError(waitMs: number): AppError {
    this.shed++;
    return Errors.queueFull(Math.max(this.cfg.retryAfterS, Math.ceil(waitMs / 1000)));
  }

  async run<T = string>(task: Task, opts: RunOptions = {}): Promise<RunOutcome<T>> {
    if (task.kind === 'sign' || task.kind === 'receipts' || (task.kind === 'verify' && opts.lane === 'signing')) return this.runSign<T>(task, opts);
    if (!this.kernelsBooted) await this.kernelsReady;
    const budget = opts.deadlineMs ?? this.cfg.taskDeadlineMs;
    const key = WorkerPool.keyOf(task);
    const { mean: expectedMs, upper: upperMs } = this.expected(key);
    const now = performance.now();
    const waits = this.running.size >= this.threads;
    if (waits) {
      if (this.queue.length >= this.cfg.maxQueue) throw this.shedError(this.estimatedWaitMs(now));
      const waitMs = this.estimatedWaitMs(now);
      // 20 % of the budget is kept for dispatch and scheduling jitter: admitted work should finish
      if (waitMs + upperMs > budget * ADMIT_SHARE) throw this.shedError(waitMs);
    }
    if (opts.signal?.aborted || opts.departure?.departed) throw Errors.clientClosed();
    return new Promise<RunOutcome<T>>((resolve, reject) => {
      const job = new Job(task, key, expectedMs, upperMs, waits, budget, now, resolve as (v: RunOutcome<unknown>) => void, reject, this.leaveQueue);
      job.watch(opts);
      this.queue.push(job);
      this.dispatch();
    });
  }

  private readonly leaveQueue = (job: Job): void => {
    const i = this.queue.indexOf(job);
    if (i >= 0) this.queue.splice(i, 1);
  };

  private dispatch(): void {
    while (this.running.size < this.threads && this.queue.length) {
      const job = this.queue[0]!;
      if (job.settled) {
        this.queue.shift();
        continue;
      }
      const now = performance.now();
      // admitted on an estimate that an earlier task overran: it would be answered 504 after
      // holding a thread for nothing, so it is shed now, before any work, like at admission
      if (job.waits && now + job.expectedMs > job.deadlineAt) {
        this.shedLate++;
        job.fail(this.shedError(this.estimatedWaitMs(now)));
        continue;
      }
      this.queue.shift();
      this.start(job);
    }
  }

  private start(job: Job): void {
    job.startedAt = performance.now();
    this.running.add(job);
    const kill = new KillSwitch();
    const killTimer = setTimeout(() => kill.abort(), Math.max(0, job.deadlineAt + this.cfg.killGraceMs - job.startedAt));
    this.pool.run(job.task, { signal: kill }).then(
      (result: TaskResult<unknown>) => this.finish(job, killTimer, result, null, kill),
      (err: unknown) => this.finish(job, killTimer, null, err, kill),
    );
  }

  private finish(job: Job, killTimer: NodeJS.Timeout, result: TaskResult<unknown> | null, err: unknown, kill: KillSwitch): void {
    clearTimeout(killTimer);
    this.running.delete(job);
    const elapsed = performance.now() - job.startedAt;
    // the thread was held from dispatch to now, whatever the worker's own clock says
    if (result) this.learn(job.key, elapsed);
    else if (kill.aborted) {
      this.killed++;
      this.learn(job.key, elapsed);
      this.rewarm();
    } else if (this.noteLost(err)) this.rewarm();
    this.dispatch();
    if (job.settled) return; // answered already (deadline or disconnect): the result is dropped
    job.settled = true;
    job.cleanup();
    if (err) {
      job.reject(kill.aborted ? Errors.deadline(job.budget) : this.classify(err));
      return;
    }
    if (!result!.ok) {
      this.log.error({ task: job.task.kind, code: result!.error.code, msg: result!.error.msg }, 'worker task failed');
      job.reject(Errors.internal(new Error(`${result!.error.code}: ${result!.error.msg}`)));
      return;
    }
    job.resolve({ value: takeValue(result!), stats: result!.stats, waitMs: Math.max(0, job.startedAt - job.enqueuedAt) });
  }

  /** The signing lane: its own threads, so receipts never queue behind kernels. */
  private async runSign<T>(task: Task, opts: RunOptions): Promise<RunOutcome<T>> {
    if (this.signInFlight >= this.cfg.signThreads + this.cfg.maxQueue) throw this.shedError(0);
    if (!this.signBooted) await this.signReady;
    const budget = opts.deadlineMs ?? this.cfg.taskDeadlineMs;
    // a timer cleared when the task ends: AbortSignal.timeout's would fire for every batch, long
    // after it was answered, and build an AbortError each time
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), budget);
    const started = performance.now();
    let result: TaskResult<T>;
    this.signInFlight++;
    try {
      // a signature is tiny: it is never aborted for a gone client, only at its deadline
      result = (await this.signPool.run(task, { signal: deadline.signal })) as TaskResult<T>;
    } catch (err) {
      this.noteLost(err);
      throw deadline.signal.aborted ? Errors.deadline(budget) : this.classify(err);
    } finally {
      clearTimeout(timer);
      this.signInFlight--;
    }
    if (!result.ok) {
      this.log.error({ task: task.kind, code: result.error.code, msg: result.error.msg }, 'worker task failed');
      throw Errors.internal(new Error(`${result.error.code}: ${result.error.msg}`));
    }
    return { value: takeValue(result), stats: result.stats, waitMs: Math.max(0, performance.now() - started - result.stats.runMs) };
  }

  /** Counts the task's thread as lost when its error says so (also when its caller was answered already). */
  private noteLost(err: unknown): boolean {
    if (!threadLost(err)) return false;
    this.crashes++;
    return true;
  }

  private classify(err: unknown): AppError {
    const e = err as Error;
    if (e?.message === 'Task queue is at limit') return Errors.queueFull(this.cfg.retryAfterS);
    this.log.error({ err: e }, 'worker task crashed');
    return Errors.internal(e);
  }

  /** Thread ids of the kernel pool's workers: a replaced (killed) worker shows as a new id. */
  threadIds(): number[] {
    return this.pool.threads.map((t) => t.threadId);
  }

  /** Resolves once no kernel task is running or queued (tests, shutdown). */
  async idle(pollMs = 10): Promise<void> {
    while (this.running.size || this.queue.length) await new Promise((r) => setTimeout(r, pollMs));
  }

  /** Cheap counters, safe on hot paths such as /health. */
  snapshot(): PoolState {
    return {
      threads: this.pool.threads.length,
      queueSize: this.queue.length,
      busy: this.running.size / Math.max(1, this.threads),
      completed: this.pool.completed,
      maxQueue: this.cfg.maxQueue,
      crashes: this.crashes,
    };
  }

  /** Counters plus piscina's utilisation and latency percentiles: piscina summarises its
   * histograms on every read (~0.3–0.5 ms each), so this is for the metrics scrape only. */
  detailedSnapshot(): PoolSnapshot {
    const h = this.pool.histogram;
    return {
      ...this.snapshot(),
      utilization: this.pool.utilization,
      waitP99Ms: h.waitTime?.p99 ?? 0,
      runP99Ms: h.runTime?.p99 ?? 0,
      rejections: { admission: this.shed - this.shedLate, dispatch: this.shedLate, killed: this.killed },
    };
  }

  /** Finishes running tasks, then stops the threads. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([this.pool.close({ force: false }), this.signPool.close({ force: false })]);
  }

  async destroy(): Promise<void> {
    this.closing = true;
    await Promise.all([this.pool.destroy(), this.signPool.destroy()]);
  }
}
