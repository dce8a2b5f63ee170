/**
 * fsck in the background of a serving process (file mode): after start-up, which checks only the
 * records after the last checkpoint, every record, tile and signature of the log as it was at that
 * moment is checked once more, one signature chunk at a time in the kernel lane so kernels keep
 * the other thread. Damage found makes the store refuse appends and readiness name the first bad
 * index, as damage found at start does.
 */
import { AppError } from '../http/errors.js';
import type { WorkerPool } from '../platform/pool.js';
import { fsckDataDir, signatureCheck, type BadNode, type FsckReport } from './fsck.js';
import { publicError } from './store/file-store.js';

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
  pool: WorkerPool;
  /** Where the durable log ends now (the range checked). */
  recordsEnd(): number;
  /** Damage found: the store refuses appends from now on. */
  onDamage(bad: BadNode): void;
  log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

/** A shed or deadline of the busy kernel lane is waited out: this check is never urgent. */
const RETRY_MS = 1000;

export class BackgroundFsck {
  private readonly abort = new AbortController();
  private current: FsckStatus = { state: 'off', checked: 0, total: 0, first_bad: null, entries_per_second: null, error: null };
  private running: Promise<void> | null = null;

  constructor(private readonly opts: BackgroundFsckOptions) {}

  status(): FsckStatus {
    return this.current;
  }

  start(): void {
    if (this.running) return;
    this.current = { ...this.current, state: 'running' };
    this.running = this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async run(): Promise<void> {
    const { pool, log } = this.opts;
    const verify = signatureCheck(async (task) => {
      for (;;) {
        this.abort.signal.throwIfAborted();
        try {
          return (await pool.run<boolean[]>(task, { deadlineMs: 60_000 })).value;
        } catch (err) {
          if (!(err instanceof AppError) || (err.status !== 503 && err.status !== 504)) throw err;
          await new Promise((r) => setTimeout(r, RETRY_MS).unref());
        }
      }
    });
    let report: FsckReport;
    try {
      report = await fsckDataDir(this.opts.dataDir, {
        verifySignatures: verify,
        inFlight: 1,
        recordsEnd: this.opts.recordsEnd(),
        signal: this.abort.signal,
        onProgress: (p) => (this.current = { ...this.current, checked: p.done, total: p.total }),
      });
    } catch (err) {
      if (this.abort.signal.aborted) return;
      // paths belong in the logs only
      this.current = { ...this.current, state: 'error', error: publicError(err as Error).split(this.opts.dataDir).join('<data dir>') };
      log.warn({ err: (err as Error).message }, 'background fsck could not finish');
      return;
    }
    const bad = report.firstBad ?? (report.checkpoint && !report.checkpoint.verified ? { index: report.checkpoint.size ?? 0, reason: `the checkpoint: ${report.checkpoint.reason}` } : null);
    this.current = { state: bad ? 'damaged' : 'passed', checked: report.nodes, total: report.nodes, first_bad: bad, entries_per_second: report.entriesPerSecond, error: null };
    if (bad) {
      log.error({ index: bad.index, reason: bad.reason }, 'background fsck: the ledger is damaged; appends refused');
      this.opts.onDamage(bad);
    } else log.info({ nodes: report.nodes, ms: Math.round(report.ms), entries_per_second: report.entriesPerSecond }, 'background fsck: every record, tile and signature verified');
  }
}
