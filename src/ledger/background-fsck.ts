/**
 * fsck in the background of a serving process (file mode): after start-up, which checks only the
 * records after the last checkpoint, every record, tile and signature of the log as it was at that
 * moment is checked once more, in a thread of its own at the lowest priority (fsck-thread.ts),
 * so the main thread and the pools never wait for it. Damage found makes the store refuse appends
 * and readiness name the first bad index, as damage found at start does.
 */
import { Worker } from 'node:worker_threads';
import { entryNextTo, workerSource } from '../platform/worker-source.js';
import type { FsckMessage } from './fsck-thread.js';
import type { BadNode, FsckReport } from './fsck.js';

export type FsckState = 'off' | 'running' | 'passed' | 'damaged' | 'error';

export interface FsckStatus {
  state: FsckState;
  /** Nodes whose record and signature were checked so far, of `total`. */
  checked: number;
  total: number;
  first_bad: BadNode | null;
  entries_per_second: number | null;
  /** Why the check could not run to its end (state error). */
  error: string | null;
}

export interface BackgroundFsckOptions {
  dataDir: string;
  /** Where the durable log ends now (the range checked). */
  recordsEnd(): number;
  /** Damage found: the store refuses appends from now on. */
  onDamage(bad: BadNode): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export class BackgroundFsck {
  private current: FsckStatus = { state: 'off', checked: 0, total: 0, first_bad: null, entries_per_second: null, error: null };
  private worker: Worker | null = null;
  private ended: Promise<void> = Promise.resolve();

  constructor(private readonly opts: BackgroundFsckOptions) {}

  status(): FsckStatus {
    return this.current;
  }

  start(): void {
    if (this.worker) return;
    this.current = { ...this.current, state: 'running' };
    const src = workerSource(entryNextTo('./fsck-thread', import.meta.url));
    const worker = new Worker(new URL(src.filename), { execArgv: src.execArgv, workerData: { dataDir: this.opts.dataDir, recordsEnd: this.opts.recordsEnd() } });
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: FsckMessage) => this.onMessage(m));
    worker.on('error', (err) => this.failed(err.message));
    this.ended = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  async stop(): Promise<void> {
    this.worker?.postMessage('stop');
    await this.ended;
  }

  private onMessage(m: FsckMessage): void {
    if (m.type === 'progress') this.current = { ...this.current, checked: m.done, total: m.total };
    else if (m.type === 'error') this.failed(m.message);
    else if (m.type === 'done') this.finished(m.report);
    if (m.type !== 'progress') void this.worker?.terminate();
  }

  private failed(message: string): void {
    // paths belong in the logs only
    this.current = { ...this.current, state: 'error', error: message.split(this.opts.dataDir).join('<data dir>') };
    this.opts.log.warn({ err: message }, 'background fsck could not finish');
  }

  private finished(report: FsckReport): void {
    const bad = report.firstBad ?? (report.checkpoint && !report.checkpoint.verified ? { index: report.checkpoint.size ?? 0, reason: `the checkpoint: ${report.checkpoint.reason}` } : null);
    this.current = { state: bad ? 'damaged' : 'passed', checked: report.nodes, total: report.nodes, first_bad: bad, entries_per_second: report.entriesPerSecond, error: null };
    if (bad) {
      this.opts.log.error({ index: bad.index, reason: bad.reason }, 'background fsck: the ledger is damaged; appends refused');
      this.opts.onDamage(bad);
    } else this.opts.log.info({ nodes: report.nodes, ms: Math.round(report.ms), entries_per_second: report.entriesPerSecond }, 'background fsck: every record, tile and signature verified');
  }
}
