/**
 * The main thread's side of the TAK thread: a bounded queue of events (beyond `queueMax` the oldest
 * is dropped and counted), posted to the thread one batch at a time (the next batch waits for the
 * thread's ack, so a stalled thread fills this queue, not the heap), and the latest status snapshot
 * the thread reported. `post` only queues: it never waits and never throws.
 */
import { Worker } from 'node:worker_threads';
import { entryNextTo, workerSource } from '../platform/worker-source.js';
import type { CotOut, OutputState } from './output.js';
import type { OutputPlan } from './outputs.js';
import type { FromTakThread, TakThreadData, ToTakThread } from './thread-messages.js';

export interface TakHostOptions {
  plan: OutputPlan;
  queueMax: number;
  statusIntervalMs: number;
  log: { warn(obj: object, msg: string): void };
  /** Called with each status snapshot the thread reports. */
  onStatus?(outputs: Readonly<Record<string, OutputState>>): void;
}

export interface QueueState {
  depth: number;
  max: number;
  dropped: number;
  /** Events handed to the thread. */
  posted: number;
}

export class TakHost {
  private readonly queue: CotOut[] = [];
  private head = 0;
  private dropped = 0;
  private posted = 0;
  /** A batch is with the thread (or the thread has not started yet). */
  private waiting = true;
  private scheduled = false;
  private worker: Worker | null = null;
  private latest: Record<string, OutputState> = {};
  private threadState: 'starting' | 'running' | 'closed' | 'failed' = 'starting';
  private exited: Promise<void> = Promise.resolve();
  private closedByThread: (() => void) | null = null;
  readonly startErrors: Record<string, string> = {};
  private startedWaiters: (() => void)[] = [];

  constructor(private readonly opts: TakHostOptions) {}

  start(): void {
    const src = workerSource(entryNextTo('./tak-thread', import.meta.url));
    const data: TakThreadData = { plan: this.opts.plan, statusIntervalMs: this.opts.statusIntervalMs };
    const worker = new Worker(new URL(src.filename), { execArgv: src.execArgv, workerData: data, name: 'tak' });
    this.worker = worker;
    worker.on('message', (m: FromTakThread) => this.onMessage(m));
    worker.on('error', (err) => this.failed(err));
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  /** Resolves once the thread started its outputs (at once if it already did or failed). */
  started(): Promise<void> {
    if (this.threadState !== 'starting') return Promise.resolve();
    return new Promise((resolve) => this.startedWaiters.push(resolve));
  }

  /** Queues one event for every output; never blocks. */
  post(event: CotOut): void {
    if (this.threadState === 'closed' || this.threadState === 'failed') {
      this.dropped++;
      return;
    }
    this.queue.push(event);
    if (this.queue.length - this.head > this.opts.queueMax) {
      this.head++;
      this.dropped++;
    }
    this.schedule();
  }

  queueState(): QueueState {
    return { depth: this.queue.length - this.head, max: this.opts.queueMax, dropped: this.dropped, posted: this.posted };
  }

  get state(): string {
    return this.threadState;
  }

  /** The outputs' latest reported state, by name. */
  outputs(): Readonly<Record<string, OutputState>> {
    return this.latest;
  }

  /** Asks the thread for a fresh snapshot and resolves with the next one it reports. */
  refresh(): Promise<Readonly<Record<string, OutputState>>> {
    if (!this.worker || this.threadState !== 'running') return Promise.resolve(this.latest);
    return new Promise((resolve) => {
      this.statusWaiters.push(resolve);
      this.send({ type: 'status' });
    });
  }

  private statusWaiters: ((s: Readonly<Record<string, OutputState>>) => void)[] = [];

  private schedule(): void {
    if (this.scheduled || this.waiting) return;
    this.scheduled = true;
    // batched: the events queued in this turn of the loop go together
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    if (this.waiting || !this.worker || this.queue.length === this.head) return;
    const batch = this.queue.slice(this.head);
    this.queue.length = 0;
    this.head = 0;
    this.waiting = true;
    this.posted += batch.length;
    this.send({ type: 'events', events: batch });
  }

  private send(m: ToTakThread): void {
    this.worker?.postMessage(m);
  }

  private onMessage(m: FromTakThread): void {
    if (m.type === 'ack') {
      this.waiting = false;
      this.schedule();
    } else if (m.type === 'status') {
      this.latest = m.outputs;
      this.opts.onStatus?.(m.outputs);
      for (const w of this.statusWaiters.splice(0)) w(m.outputs);
    } else if (m.type === 'started') {
      Object.assign(this.startErrors, m.errors);
      for (const [name, error] of Object.entries(m.errors)) this.opts.log.warn({ output: name, err: error }, 'tak: an output could not start');
      this.threadState = 'running';
      this.waiting = false;
      for (const w of this.startedWaiters.splice(0)) w();
      this.schedule();
    } else {
      this.closedByThread?.();
    }
  }

  private failed(err: Error): void {
    this.threadState = 'failed';
    this.opts.log.warn({ err: err.message }, 'tak: the TAK thread failed; events are dropped and counted');
    this.dropped += this.queue.length - this.head;
    this.queue.length = 0;
    this.head = 0;
    for (const w of this.startedWaiters.splice(0)) w();
  }

  /** Closes the outputs in the thread (bounded by `timeoutMs`), then ends it. */
  async close(timeoutMs = 2000): Promise<void> {
    const worker = this.worker;
    if (!worker || this.threadState === 'closed') return;
    const wasRunning = this.threadState !== 'failed';
    this.threadState = 'closed';
    if (wasRunning) {
      const closed = new Promise<void>((resolve) => (this.closedByThread = resolve));
      this.send({ type: 'close' });
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, this.exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    }
    await worker.terminate();
    await this.exited;
    this.worker = null;
  }
}
