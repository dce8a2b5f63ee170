/**
 * When the kernel lane can take tasks: a thread's boot (and warm-up, with `pool.warmup`) is not a
 * task's run, so deadlines start only once every thread has answered, and again once a replaced
 * thread's successor has booted.
 */
import type { Piscina } from 'piscina';
import type { Task, TaskResult, WarmReport } from '../lib/tasks.js';
import { threadIds } from './pool-threads.js';

/** Warm-up as each live kernel thread reported it. */
export interface WarmupReport {
  enabled: boolean;
  threads: ({ threadId: number } & WarmReport)[];
}

export class KernelWarmup {
  /** Settles once the lane can take tasks (the first start, or a successor's boot). */
  ready: Promise<void>;
  booted = false;
  /** The lane finished its first start (it never goes back: a replaced thread warms alone). */
  startedUp = false;
  private closing = false;
  /** What each kernel thread ran at warm-up, from its probe answers. */
  private readonly reports = new Map<number, WarmReport>();

  constructor(
    private readonly pool: Piscina,
    private readonly threads: number,
    private readonly enabled: boolean,
  ) {
    this.ready = this.bootAll().then(() => {
      this.booted = true;
      this.startedUp = true;
    });
  }

  /** Stops waiting for threads that will not answer (the pool is closing). */
  stop(): void {
    this.closing = true;
  }

  /** A thread was replaced (crash or kill): new tasks' deadlines start once its successor has booted. */
  rewarm(): void {
    this.booted = false;
    const ready = this.pool.run({ kind: 'probe' } satisfies Task).then(
      () => undefined,
      () => undefined,
    );
    this.ready = ready.then(() => {
      if (this.ready === settled) this.booted = true;
    });
    const settled = this.ready;
  }

  /**
   * Every kernel thread has answered a probe. A thread warms up before it answers anything, and
   * piscina hands a probe to whichever thread is ready first, so probes go out until each thread
   * has answered one.
   */
  private async bootAll(): Promise<void> {
    for (;;) {
      const answers = await Promise.all(Array.from({ length: this.threads }, () => this.pool.run({ kind: 'probe' } satisfies Task).catch(() => undefined)));
      for (const a of answers) this.noteProbe(a as TaskResult<unknown> | undefined);
      const ids = threadIds(this.pool);
      if (this.closing || (ids.length >= this.threads && ids.every((id) => this.reports.has(id)))) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private noteProbe(result: TaskResult<unknown> | undefined): void {
    const v = result?.ok ? (result.value as { threadId?: number; warm?: WarmReport }) : undefined;
    if (v?.threadId !== undefined && v.warm) this.reports.set(v.threadId, v.warm);
  }

  /** Warm-up as each live kernel thread reported it (threads not heard from yet are left out). */
  report(): WarmupReport {
    const threads = threadIds(this.pool).flatMap((threadId) => {
      const r = this.reports.get(threadId);
      return r ? [{ threadId, ...r }] : [];
    });
    return { enabled: this.enabled, threads };
  }
}
