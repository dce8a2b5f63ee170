/**
 * One kernel task on its way through the pool: its deadline (queue wait included), the listeners
 * for its caller going away, and the switch that terminates it when it runs past its deadline.
 */
import { EventEmitter } from 'node:events';
import { type AppError, Errors } from '../http/errors.js';
import type { Departure } from '../http/departure.js';
import type { Task, TaskStats } from '../lib/tasks.js';

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

/**
 * A queued or running kernel task. A running task is never aborted for a gone client: it is
 * answered 504 at its deadline and finishes in the background, its result dropped.
 */
export class Job {
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
 * Terminates a running task (piscina aborts a task whose signal emits 'abort', and replaces its
 * thread). An EventEmitter, which piscina takes as a signal: an AbortController per task cost more
 * main-thread time than the rest of the dispatch.
 */
export class KillSwitch extends EventEmitter {
  aborted = false;

  abort(): void {
    this.aborted = true;
    this.emit('abort');
  }
}
