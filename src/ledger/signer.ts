/**
 * Batched signing in the worker pool. One P-256 signature (~32 µs) costs about as much as a pool
 * round trip, so work that arrives together goes in one task: requests queue for the rest of the
 * current event-loop turn (setImmediate), then up to `batchMax` go in one round trip. At most one
 * batch per signing thread is out at a time: what arrives while every thread is busy waits here
 * (the verdicts in flight, so bounded by the connection cap) and goes as one batch when a
 * thread's batch comes back. Sent at once, it would only have waited in the pool's queue (a
 * thread takes its next task only after the main thread has handled its last answer), as several
 * smaller batches, each a round trip of main-thread work. Two kinds: bare PAEs (sign), and whole
 * receipts (signReceipt), which the lane also serialises and hashes so that work stays off the
 * main thread.
 */
import type { WorkerPool } from '../platform/pool.js';
import type { PackedReceipts, Task } from '../lib/tasks.js';
import type { ReceiptBody } from './receipt.js';

/** A receipt as the lane made it: the exact signed payload, SHA-256 of its PAE, the DER signature. */
export interface SignedReceipt {
  payload: Buffer;
  paeSha256: Buffer;
  sig: Buffer;
}

/** The two kinds of signing work, as /metrics labels them. */
export type SigningLane = 'receipts' | 'signatures';

/**
 * Told of each batch once it ends: its round trip (queue, thread wake-up, signing, return), its
 * size, and whether the lane answered (false: the round trip failed, and every item with it; a
 * receipt that cannot be serialised fails alone inside an answered batch).
 */
export type BatchObserver = (lane: SigningLane, seconds: number, size: number, answered: boolean) => void;

interface Pending<I, O> {
  input: I;
  resolve(out: O): void;
  reject(err: unknown): void;
}

/**
 * A signature as a Buffer. Each arrives in an ArrayBuffer of its own size (crypto.sign's, cloned):
 * a Buffer view of it costs nothing, where a fresh unpooled copy cost ~2 µs per signature. The
 * ledger copies signatures into its arena (node-table.ts); anything larger than the signature is
 * copied, so no view ever holds more memory than its bytes.
 */
function asBuffer(bytes: Uint8Array): Buffer {
  return bytes.byteLength === bytes.buffer.byteLength ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : Buffer.copyBytesFrom(bytes);
}

/**
 * The batch's PAEs as views of one exact-size buffer. A PAE is a small Buffer, and Node carves
 * small Buffers out of a shared 8 KiB slab: posted as they are, each view drags its whole slab
 * through the structured clone (8 KiB per signature, a tenth of the main thread under a verdict
 * load).
 */
function packed(paes: readonly Buffer[]): Uint8Array[] {
  const all = new Uint8Array(paes.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  return paes.map((p) => {
    all.set(p, at);
    at += p.byteLength;
    return all.subarray(at - p.byteLength, at);
  });
}

/** A packed answer's receipts, as views of the one buffer the batch arrived in (its own, exact size). */
function unpackReceipts(r: PackedReceipts): (SignedReceipt | Error)[] {
  const bytes = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
  return r.at.map((at, i) => {
    const len = r.payloadLen[i]!;
    if (len < 0) return new Error(r.errors[i] ?? 'receipt could not be serialised');
    return {
      payload: bytes.subarray(at, at + len),
      paeSha256: bytes.subarray(at + len, at + len + 32),
      sig: bytes.subarray(at + len + 32, at + len + 32 + r.sigLen[i]!),
    };
  });
}

/** One kind of signing work: its queue, and how a batch becomes a task and the answer results. */
class Lane<I, O> {
  private queue: Pending<I, O>[] = [];

  constructor(
    private readonly name: SigningLane,
    private readonly signer: Signer,
    private readonly task: (inputs: I[]) => Task,
    private readonly results: (value: unknown) => (O | Error)[],
  ) {}

  add(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.signer.schedule();
    });
  }

  /** Sends the next batch (up to batchMax), if any waits; `done` runs when it comes back, before its promises settle. */
  sendOne(pool: WorkerPool, batchMax: number, done: () => void): boolean {
    if (!this.queue.length) return false;
    const batch = this.queue.splice(0, batchMax);
    this.signer.batches++;
    this.signer.signatures += batch.length;
    const started = performance.now();
    const ended = (answered: boolean): void => {
      this.signer.onBatch?.(this.name, (performance.now() - started) / 1000, batch.length, answered);
      done();
    };
    pool.run<unknown>(this.task(batch.map((p) => p.input))).then(
      ({ value }) => {
        ended(true);
        const out = this.results(value);
        batch.forEach((p, i) => (out[i] instanceof Error ? p.reject(out[i]) : p.resolve(out[i] as O)));
      },
      (err: unknown) => {
        ended(false);
        batch.forEach((p) => p.reject(err));
      },
    );
    return true;
  }
}

export interface SignerOptions {
  /** Batches with the signing threads at once (pool.signThreads): one per thread. */
  inFlight?: number;
  onBatch?: BatchObserver;
}

export class Signer {
  private scheduled = false;
  private inFlight = 0;
  private readonly maxInFlight: number;
  readonly onBatch: BatchObserver | undefined;
  /** Batches sent and signatures made, for the batching-gain figures. */
  batches = 0;
  signatures = 0;
  private readonly paes = new Lane<Buffer, Buffer>(
    'signatures',
    this,
    (paes) => ({ kind: 'sign', paes: packed(paes) }),
    (value) => (value as Uint8Array[]).map(asBuffer),
  );
  private readonly receipts = new Lane<{ body: ReceiptBody; tsUtc: string; frame?: { track_id: string } }, SignedReceipt>(
    'receipts',
    this,
    (items) => ({ kind: 'receipts', items }),
    (value) => unpackReceipts(value as PackedReceipts),
  );

  /** Out of reach of reflection: the pool leads to the signing key, and plugins are handed the Signer. */
  readonly #pool: WorkerPool;

  constructor(
    pool: WorkerPool,
    private readonly batchMax: number,
    opts: SignerOptions = {},
  ) {
    this.#pool = pool;
    this.maxInFlight = opts.inFlight ?? 1;
    this.onBatch = opts.onBatch;
  }

  /** The DER signature over `pae`. */
  sign(pae: Buffer): Promise<Buffer> {
    return this.paes.add(pae);
  }

  /** The receipt of `body` at `tsUtc`, bound to `frame` when given, serialised, hashed and signed in the lane. */
  signReceipt(body: ReceiptBody, tsUtc: string, frame?: { track_id: string }): Promise<SignedReceipt> {
    return this.receipts.add(frame === undefined ? { body, tsUtc } : { body, tsUtc, frame });
  }

  /** @internal the lanes call this when they have work: one send per event-loop turn. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  /**
   * A batch per free signing thread, bare PAEs first (only the start-up self-test signs those).
   * Runs at the end of a turn and whenever a batch comes back: what arrived while every thread
   * was busy goes then, as one batch.
   */
  private send(): void {
    while (this.inFlight < this.maxInFlight && (this.paes.sendOne(this.#pool, this.batchMax, this.batchDone) || this.receipts.sendOne(this.#pool, this.batchMax, this.batchDone))) this.inFlight++;
  }

  private readonly batchDone = (): void => {
    this.inFlight--;
    this.send();
  };
}
