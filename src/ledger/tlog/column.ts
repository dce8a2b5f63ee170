/**
 * Append-only columns of fixed-width items: the tile levels, entry bundles, PAE digests and record
 * offsets of the ledger. In memory (memory mode, postgres mode and tests) or in a file whose item
 * `i` sits at byte `i · width`, read with positioned reads: a read of a few KiB from the page cache
 * costs microseconds, less than a trip through libuv's pool, and nothing per item is held in the
 * heap. Items past the last synced checkpoint may be cut (they are re-derived from the records).
 */
import { closeSync, constants, fdatasync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Column {
  readonly width: number;
  readonly length: number;
  /** Items [from, from + n) as one buffer (a copy); the range must exist. */
  read(from: number, n: number): Buffer;
  /** Whole items, in order. */
  append(items: Uint8Array): void;
  /** Keeps the first `n` items (never more than exist). */
  truncate(n: number): void;
  /** Resolves once every appended item is on stable storage. */
  sync(): Promise<void>;
  close(): void;
}

const CHUNK = 1 << 20;

export class MemoryColumn implements Column {
  private readonly chunks: Buffer[] = [];
  private count = 0;
  private readonly perChunk: number;

  constructor(readonly width: number) {
    this.perChunk = Math.floor(CHUNK / width);
  }

  get length(): number {
    return this.count;
  }

  read(from: number, n: number): Buffer {
    if (from < 0 || n < 0 || from + n > this.count) throw new RangeError(`items ${from}..${from + n} outside a column of ${this.count}`);
    const out = Buffer.allocUnsafe(n * this.width);
    for (let i = 0; i < n; ) {
      const at = from + i;
      const chunk = this.chunks[Math.floor(at / this.perChunk)]!;
      const slot = at % this.perChunk;
      const take = Math.min(n - i, this.perChunk - slot);
      chunk.copy(out, i * this.width, slot * this.width, (slot + take) * this.width);
      i += take;
    }
    return out;
  }

  append(items: Uint8Array): void {
    const n = items.byteLength / this.width;
    for (let i = 0; i < n; ) {
      const slot = this.count % this.perChunk;
      if (slot === 0) this.chunks.push(Buffer.allocUnsafeSlow(this.perChunk * this.width));
      const take = Math.min(n - i, this.perChunk - slot);
      this.chunks.at(-1)!.set(items.subarray(i * this.width, (i + take) * this.width), slot * this.width);
      this.count += take;
      i += take;
    }
  }

  truncate(n: number): void {
    this.count = Math.min(this.count, n);
    this.chunks.length = Math.ceil(this.count / this.perChunk);
  }

  sync(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {}
}

/** Appends are gathered and written in one call per 256 KiB, at a sync, or at close. */
const FLUSH_AT = 256 * 1024;

export class FileColumn implements Column {
  /** Opened when the file exists or at the first write: a column nobody wrote costs no file (and no disk). */
  private fd: number | null = null;
  /** Items in the file. */
  private flushed: number;
  /** Items appended since, not yet written (a full disk keeps them here until a write succeeds). */
  private pend = Buffer.allocUnsafe(0);
  private pendLen = 0;
  private closed = false;

  /** Opens (creating) `path`; a torn last item, written in part before a crash, is cut. */
  constructor(
    readonly path: string,
    readonly width: number,
  ) {
    try {
      this.fd = openSync(path, constants.O_RDWR);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    const bytes = this.fd === null ? 0 : fstatSync(this.fd).size;
    this.flushed = Math.floor(bytes / width);
    if (bytes % width) ftruncateSync(this.fd!, this.flushed * width);
  }

  private file(): number {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, constants.O_RDWR | constants.O_CREAT, 0o644);
    }
    return this.fd;
  }

  get length(): number {
    return this.flushed + this.pendLen / this.width;
  }

  read(from: number, n: number): Buffer {
    if (from < 0 || n < 0 || from + n > this.length) throw new RangeError(`items ${from}..${from + n} outside ${this.path} (${this.length} items)`);
    const out = Buffer.allocUnsafe(n * this.width);
    const inFile = Math.max(0, Math.min(n, this.flushed - from));
    let got = 0;
    while (got < inFile * this.width) {
      const r = readSync(this.fd!, out, got, inFile * this.width - got, from * this.width + got);
      if (r === 0) throw new Error(`${this.path}: short read at item ${from}`);
      got += r;
    }
    if (inFile < n) this.pend.copy(out, inFile * this.width, (from + inFile - this.flushed) * this.width, (from + n - this.flushed) * this.width);
    return out;
  }

  append(items: Uint8Array): void {
    if (this.pendLen + items.byteLength > this.pend.length) {
      const bigger = Buffer.allocUnsafe(Math.max(FLUSH_AT * 2, (this.pendLen + items.byteLength) * 2));
      this.pend.copy(bigger, 0, 0, this.pendLen);
      this.pend = bigger;
    }
    this.pend.set(items, this.pendLen);
    this.pendLen += items.byteLength;
    if (this.pendLen >= FLUSH_AT) this.tryFlush();
  }

  /** Writes what is pending; false (keeping it) when the disk refuses. */
  private tryFlush(): boolean {
    try {
      this.flush();
      return true;
    } catch {
      return false;
    }
  }

  private flush(): void {
    if (this.pendLen === 0) return;
    let off = 0;
    const at = this.flushed * this.width;
    try {
      const fd = this.file();
      while (off < this.pendLen) off += writeSync(fd, this.pend, off, this.pendLen - off, at + off);
    } catch (err) {
      // whole items that made it stay written; the rest waits for the next try
      const items = Math.floor(off / this.width);
      this.pend.copy(this.pend, 0, items * this.width, this.pendLen);
      this.pendLen -= items * this.width;
      this.flushed += items;
      if (this.fd !== null) ftruncateSync(this.fd, this.flushed * this.width);
      throw err;
    }
    this.flushed += this.pendLen / this.width;
    this.pendLen = 0;
  }

  truncate(n: number): void {
    if (n >= this.length) return;
    if (n >= this.flushed) {
      this.pendLen = (n - this.flushed) * this.width;
      return;
    }
    this.pendLen = 0;
    ftruncateSync(this.fd!, n * this.width);
    this.flushed = n;
  }

  sync(): Promise<void> {
    if (this.closed) return Promise.resolve();
    try {
      this.flush();
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const fd = this.fd;
    if (fd === null) return Promise.resolve();
    return new Promise((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.tryFlush();
    if (this.fd !== null) closeSync(this.fd);
  }
}
