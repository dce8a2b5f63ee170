/**
 * Finds ledger nodes by a 32-byte key (the PAE digest a receipt verification looks up, the node
 * digest a DAG request names by prefix) without a per-node structure in memory. Keys are indexed
 * in chunks of 65,536 nodes: the chunk being filled in a Map, every full chunk as a sorted run of
 * uint64 `key[0..6] ‖ uint16 offset` (512 KiB, in a file or in memory) plus one fence per 256 items
 * kept in memory, so a lookup reads one 2 KiB block per run (153 runs at 10 million nodes) and
 * memory grows by 2 KiB per 65,536 nodes. Run files are opened on demand and at most `OPEN_RUNS`
 * per index stay open, so the open-file count does not grow with the log. Candidates are confirmed
 * against the key column, so the 48-bit prefix never gives a false match.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { closeSync, fsync, openSync, readSync } from 'node:fs';

export const RUN_SPAN = 65_536;
// runs are written and read as native uint64s laid out little-endian
if (endianness() !== 'LE') throw new Error('the ledger key index needs a little-endian machine');
const BLOCK = 256;
const FENCES = RUN_SPAN / BLOCK;
/** Run files an index keeps open at most: every run up to 8.4 M nodes; a lookup past them reopens one, a few µs (Node raises the soft open-file limit to the hard one at start). */
export const OPEN_RUNS = 128;

/** Descriptors of run files, opened on demand; past the bound the least recently read is closed. */
class RunFiles {
  /** File → descriptor, in order of last use (oldest first). */
  private readonly open = new Map<string, number>();

  constructor(private readonly bound: number) {}

  fd(file: string): number {
    let fd = this.open.get(file);
    if (fd !== undefined) this.open.delete(file);
    else fd = openSync(file, 'r');
    this.open.set(file, fd);
    if (this.open.size > this.bound) {
      const [oldest, oldFd] = this.open.entries().next().value as [string, number];
      this.open.delete(oldest);
      closeSync(oldFd);
    }
    return fd;
  }

  get size(): number {
    return this.open.size;
  }

  close(): void {
    for (const fd of this.open.values()) closeSync(fd);
    this.open.clear();
  }
}

/** One sorted run: its items in memory until written, then read back from its file by block. */
class Run {
  /** First key of each 256-item block. */
  readonly fences = new BigUint64Array(FENCES);

  constructor(
    private items: BigUint64Array | null,
    private readonly files: RunFiles,
    private file: string | null = null,
  ) {
    if (items) for (let b = 0; b < FENCES; b++) this.fences[b] = items[b * BLOCK]!;
  }

  /** The run now lives in `file`: its items are no longer held. */
  moveTo(file: string): void {
    this.file = file;
    this.items = null;
  }

  read(block: number): BigUint64Array {
    if (this.items) return this.items.subarray(block * BLOCK, (block + 1) * BLOCK);
    // a buffer of its own: a typed view of 64-bit items needs an aligned offset
    const buf = Buffer.allocUnsafeSlow(BLOCK * 8);
    readSync(this.files.fd(this.file!), buf, 0, buf.length, block * BLOCK * 8);
    return new BigUint64Array(buf.buffer, buf.byteOffset, BLOCK);
  }
}

function key48(key: Uint8Array): bigint {
  return (BigInt(key[0]!) << 40n) | (BigInt(key[1]!) << 32n) | BigInt(((key[2]! << 24) | (key[3]! << 16) | (key[4]! << 8) | key[5]!) >>> 0);
}

export class KeyIndex {
  private readonly runs: Run[] = [];
  /** The chunk being filled: first 4 key bytes → indices. */
  private tail = new Map<number, number | number[]>();
  private count = 0;
  /** Run files written since the last sync. */
  private unsynced: string[] = [];
  /** Runs a full disk kept from being written. */
  private unwritten: { c: number; run: Run; items: BigUint64Array }[] = [];
  private readonly files: RunFiles;

  /**
   * @param dir  where run files go (null: runs stay in memory)
   * @param keyAt the full key of node `i` (from a column), to confirm candidates and build runs
   * @param openRuns how many run files may be open at once
   */
  constructor(
    private readonly name: string,
    private readonly dir: string | null,
    private readonly keyAt: (i: number) => Buffer,
    private readonly keysAt: (from: number, n: number) => Buffer,
    openRuns = OPEN_RUNS,
  ) {
    this.files = new RunFiles(openRuns);
  }

  /** Run files open now (at most the bound given at construction). */
  get openRunFiles(): number {
    return this.files.size;
  }

  get length(): number {
    return this.count;
  }

  /** Opens at `size` nodes: stored runs are kept (missing or torn ones rebuilt), the open chunk re-read. */
  resume(size: number): void {
    this.runs.length = 0;
    this.tail = new Map();
    const full = Math.floor(size / RUN_SPAN);
    for (let c = 0; c < full; c++) {
      const file = this.dir ? this.runFile(c) : null;
      if (file && existsSync(file) && statSync(file).size === RUN_SPAN * 8) this.runs.push(this.fileRun(file));
      else this.runs.push(this.build(c));
    }
    this.count = full * RUN_SPAN;
    if (size > this.count) {
      const keys = this.keysAt(this.count, size - this.count);
      for (let i = 0; this.count < size; i++) this.addTail(keys.subarray(i * 32, i * 32 + 32), this.count++);
    }
  }

  /** Indexes node `index` (= length) under `key`. */
  add(key: Uint8Array, index: number): void {
    if (index !== this.count) throw new Error(`key index ${this.name}: node ${index} added at ${this.count}`);
    this.addTail(key, index);
    this.count++;
    if (this.count % RUN_SPAN === 0) {
      this.runs.push(this.build(this.count / RUN_SPAN - 1));
      this.tail = new Map();
    }
  }

  private addTail(key: Uint8Array, index: number): void {
    const k = ((key[0]! << 24) | (key[1]! << 16) | (key[2]! << 8) | key[3]!) >>> 0;
    const prev = this.tail.get(k);
    if (prev === undefined) this.tail.set(k, index);
    else if (Array.isArray(prev)) prev.push(index);
    else this.tail.set(k, [prev, index]);
  }

  /** The newest node whose key is `key`. */
  newest(key: Buffer): number | undefined {
    const hits = this.candidates(key, key48(key), key48(key)).filter((i) => this.keyAt(i).equals(key));
    return hits.length ? Math.max(...hits) : undefined;
  }

  /** Up to `limit` nodes whose key starts with the hex `prefix` (0–64 hex digits), oldest first. */
  withPrefix(prefix: string, limit: number): number[] {
    const bytes = Buffer.from(prefix.slice(0, 12).padEnd(12, '0'), 'hex');
    const lo = key48(bytes);
    const hi = prefix.length >= 12 ? lo : lo + (1n << BigInt(48 - 4 * prefix.length)) - 1n;
    const out: number[] = [];
    // runs cover ascending index ranges and the tail comes last: stop as soon as `limit` are found
    for (let c = 0; c <= this.runs.length && out.length < limit; c++) {
      const found = c < this.runs.length ? this.inRun(this.runs[c]!, c, lo, hi) : this.inTail(lo, hi);
      for (const i of found.sort((a, b) => a - b)) {
        if (out.length >= limit) break;
        if (this.keyAt(i).toString('hex').startsWith(prefix)) out.push(i);
      }
    }
    return out;
  }

  /** Indices whose 48-bit key lies in [lo, hi]. */
  private candidates(key: Buffer, lo: bigint, hi: bigint): number[] {
    const out: number[] = [];
    this.runs.forEach((run, c) => out.push(...this.inRun(run, c, lo, hi)));
    if (lo === hi) {
      const hit = this.tail.get(key.readUInt32BE(0));
      if (hit !== undefined) out.push(...(Array.isArray(hit) ? hit : [hit]));
    } else out.push(...this.inTail(lo, hi));
    return out;
  }

  private inRun(run: Run, c: number, lo: bigint, hi: bigint): number[] {
    const out: number[] = [];
    // the last block whose first key is below lo may still hold lo
    let b = 0;
    let e = run.fences.length;
    while (b < e) {
      const m = (b + e) >> 1;
      if (run.fences[m]! >> 16n < lo) b = m + 1;
      else e = m;
    }
    for (let block = Math.max(0, b - 1); block < FENCES; block++) {
      if (run.fences[block]! >> 16n > hi) break;
      for (const v of run.read(block)) {
        const k = v >> 16n;
        if (k > hi) break;
        if (k >= lo) out.push(c * RUN_SPAN + Number(v & 0xffffn));
      }
    }
    return out;
  }

  private inTail(lo: bigint, hi: bigint): number[] {
    const out: number[] = [];
    for (const [k, v] of this.tail) {
      const top = BigInt(k) << 16n;
      if (top + 0xffffn >= lo && top <= hi) out.push(...(Array.isArray(v) ? v : [v]));
    }
    return out;
  }

  /** Sorts chunk `c` into a run (and writes it when the index lives on disk). */
  private build(c: number): Run {
    const keys = this.keysAt(c * RUN_SPAN, RUN_SPAN);
    // each item laid out byte by byte as the little-endian uint64 key[0..6] ‖ offset: no BigInt per
    // key, and the typed array's native sort orders them (a few ms of main thread per run, not tens)
    const bytes = Buffer.allocUnsafeSlow(RUN_SPAN * 8);
    for (let i = 0; i < RUN_SPAN; i++) {
      const o = i * 8;
      const k = i * 32;
      bytes[o] = i & 0xff;
      bytes[o + 1] = i >>> 8;
      for (let b = 0; b < 6; b++) bytes[o + 7 - b] = keys[k + b]!;
    }
    const items = new BigUint64Array(bytes.buffer, 0, RUN_SPAN);
    items.sort();
    const run = new Run(items, this.files);
    if (!this.dir) return run;
    try {
      this.write(c, run, items);
    } catch {
      // a full disk: the run stays in memory and is written by the next sync (before a checkpoint)
      this.unwritten.push({ c, run, items });
    }
    return run;
  }

  /** Writes run `c` and points it at its file (its items are then read back from the page cache). */
  private write(c: number, run: Run, items: BigUint64Array): void {
    const file = this.runFile(c);
    mkdirSync(this.dir!, { recursive: true });
    writeFileSync(`${file}.tmp`, Buffer.from(items.buffer, items.byteOffset, items.byteLength));
    renameSync(`${file}.tmp`, file);
    // the fences beside it: opening a run at start is one read, not 256
    writeFileSync(`${file}.fences.tmp`, Buffer.from(run.fences.buffer, run.fences.byteOffset, run.fences.byteLength));
    renameSync(`${file}.fences.tmp`, `${file}.fences`);
    this.unsynced.push(file, `${file}.fences`);
    run.moveTo(file);
  }

  private runFile(c: number): string {
    return join(this.dir!, `${this.name}-${String(c).padStart(6, '0')}.run`);
  }

  close(): void {
    this.files.close();
  }

  private fileRun(file: string): Run {
    const run = new Run(null, this.files, file);
    const fences = Buffer.from(run.fences.buffer, run.fences.byteOffset, run.fences.byteLength);
    try {
      if (readFileSync(`${file}.fences`).copy(fences) === fences.length && run.fences[0] === run.read(0)[0]) return run;
    } catch {
      // written by an older version, or lost: read from the run itself
    }
    const one = Buffer.alloc(8);
    const fd = this.files.fd(file);
    for (let b = 0; b < FENCES; b++) {
      readSync(fd, one, 0, 8, b * BLOCK * 8);
      run.fences[b] = one.readBigUInt64LE(0);
    }
    return run;
  }

  /** Run files written since the last call made durable (before a checkpoint is persisted). */
  async sync(): Promise<void> {
    while (this.unwritten.length) {
      const { c, run, items } = this.unwritten[0]!;
      this.write(c, run, items);
      this.unwritten.shift();
    }
    const files = this.unsynced;
    this.unsynced = [];
    await Promise.all(
      files.map(
        (f) =>
          new Promise<void>((resolve, reject) => {
            const fd = openSync(f, 'r');
            fsync(fd, (err) => {
              closeSync(fd);
              if (err) reject(err);
              else resolve();
            });
          }),
      ),
    );
  }
}
