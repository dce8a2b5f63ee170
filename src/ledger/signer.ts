/**
 * Batched signing in the worker pool. One P-256 signature (~32 µs) costs about as much as a pool
 * round trip, so PAEs that arrive together are signed in one task: requests queue for the rest of
 * the current event-loop turn (setImmediate), then up to `batchMax` go in one round trip.
 */
import type { WorkerPool } from '../platform/pool.js';

interface Pending {
  pae: Buffer;
  resolve(sig: Buffer): void;
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

export class Signer {
  private queue: Pending[] = [];
  private scheduled = false;
  /** Batches sent and signatures made, for the batching-gain figures. */
  batches = 0;
  signatures = 0;

  constructor(
    private readonly pool: WorkerPool,
    private readonly batchMax: number,
  ) {}

  sign(pae: Buffer): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      this.queue.push({ pae, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.batchMax);
      this.batches++;
      this.signatures += batch.length;
      this.pool.run<Uint8Array[]>({ kind: 'sign', paes: packed(batch.map((p) => p.pae)) }).then(
        ({ value }) => batch.forEach((p, i) => p.resolve(asBuffer(value[i]!))),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
    }
  }
}
