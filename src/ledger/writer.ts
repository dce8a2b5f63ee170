/**
 * Group commit in front of a store: appends that arrive while a batch is being made durable wait
 * and go together in the next one, so one durable (O_DSYNC) write (or one transaction) serves many
 * verdicts and the event loop never waits for the disk. Nodes reach the in-memory mirror, and so
 * every reader, the SSE stream and the HTTP answer, only once their batch is durable. Commits and
 * catch-ups from other replicas run one at a time, so the mirror only ever grows by whole, verified
 * extensions of its head.
 */
import type { AppendInput, Ledger, LedgerNode } from './ledger.js';
import { StoreUnavailableError, type LedgerStore } from './store/store.js';

interface Request {
  inputs: readonly AppendInput[];
  resolve(nodes: LedgerNode[]): void;
  reject(err: unknown): void;
}

export interface WriterOptions {
  /** Nodes per write + sync (or per transaction) at most. */
  groupMax: number;
  /** The longest a lone append waits for company, in ms (0: the rest of this event-loop turn). */
  waitMs: number;
  /** Nodes allowed to wait for a commit; beyond it appends are refused (503). */
  queueMax: number;
  retryAfterS: number;
  /** Told of each group commit: its wall time, the nodes it held, and whether they became durable. */
  onCommit?: (seconds: number, nodes: number, durable: boolean) => void;
}

export class LedgerWriter {
  private pending: Request[] = [];
  private pendingNodes = 0;
  private scheduled = false;
  private flushing = false;
  private exclusive: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ledger: Ledger,
    private readonly store: LedgerStore,
    private readonly opts: WriterOptions,
  ) {
    store.onRemoteAppend(() => void this.catchUp().catch(() => {}));
  }

  /** Resolves with the batch's nodes once they are durable; all or nothing. */
  append(inputs: readonly AppendInput[]): Promise<LedgerNode[]> {
    if (this.pendingNodes + inputs.length > this.opts.queueMax) {
      return Promise.reject(new StoreUnavailableError(`ledger write queue full (${this.opts.queueMax} nodes waiting for a commit)`, this.opts.retryAfterS));
    }
    return new Promise((resolve, reject) => {
      this.pending.push({ inputs, resolve, reject });
      this.pendingNodes += inputs.length;
      this.schedule();
    });
  }

  /** Pulls in what other writers appended (postgres replicas); a no-op for single-writer stores. */
  catchUp(): Promise<void> {
    return this.serially(async () => {
      for (;;) {
        const nodes = await this.store.readFrom(this.ledger.size, 500);
        for (const n of nodes) this.ledger.applyNode(n);
        if (nodes.length < 500) return;
      }
    });
  }

  /** Waits for everything queued so far to be committed or refused. */
  async drain(): Promise<void> {
    while (this.pending.length || this.flushing) await new Promise((r) => setTimeout(r, 1));
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    if (this.opts.waitMs > 0) setTimeout(() => void this.flush(), this.opts.waitMs);
    else setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.flushing = true;
    try {
      while (this.pending.length) {
        const batch: Request[] = [];
        let n = 0;
        while (this.pending.length && (batch.length === 0 || n + this.pending[0]!.inputs.length <= this.opts.groupMax)) {
          const r = this.pending.shift()!;
          batch.push(r);
          n += r.inputs.length;
        }
        this.pendingNodes -= n;
        await this.serially(() => this.commit(batch));
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commit(batch: Request[]): Promise<void> {
    const inputs = batch.flatMap((r) => r.inputs);
    const started = performance.now();
    let nodes: LedgerNode[];
    try {
      nodes = await this.store.commit(inputs, { size: this.ledger.size, head: this.ledger.head });
    } catch (err) {
      this.opts.onCommit?.((performance.now() - started) / 1000, inputs.length, false);
      for (const r of batch) r.reject(err);
      return;
    }
    this.opts.onCommit?.((performance.now() - started) / 1000, inputs.length, true);
    const ownFrom = nodes.length - inputs.length;
    try {
      nodes.forEach((node, k) => this.ledger.applyNode(node, k >= ownFrom));
    } catch (err) {
      // a durable node that does not extend the mirror is a bug, never a client's fault: the throw
      // leaves flush() unhandled and ends the process (fail fast); the restart replays the store
      for (const r of batch) r.reject(err);
      throw err;
    }
    let at = ownFrom;
    for (const r of batch) {
      r.resolve(nodes.slice(at, at + r.inputs.length));
      at += r.inputs.length;
    }
  }

  private serially<T>(job: () => Promise<T>): Promise<T> {
    const run = this.exclusive.then(job); // exclusive never rejects (caught below)
    this.exclusive = run.catch(() => {});
    return run;
  }
}
