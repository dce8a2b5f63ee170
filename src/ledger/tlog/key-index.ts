/**
 * Finds ledger nodes by a 32-byte key (the PAE digest a receipt verification looks up, the node
 * digest a DAG request names by prefix) without a per-node structure in memory. Keys are indexed
 * in chunks of 65,536 nodes: the chunk being filled in a Map, every full chunk as a sorted run of
 * uint64 `key[0..6] ‖ uint16 offset` (512 KiB, in a file or in memory) plus one fence per 256 items
 * kept in memory. On disk, runs are merged as they accumulate, four of one level into one of the
 * next (run-merge.ts; the service merges in a thread of its own), so a log of n nodes has at most 3 runs per level,
 * O(log n) in all, and a lookup reads one 2 KiB block per run: 5 at 10 million nodes. Memory grows
 * by 2 KiB of fences per 65,536 nodes. Run files are opened on demand and at most `OPEN_RUNS` per
 * index stay open. Candidates are confirmed against the key column, so the shortened key of an
 * item never gives a false match.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { closeSync, fsync, openSync, readSync } from 'node:fs';
import { BLOCK, FAN_IN, itemsOf, MAX_LEVEL, mergeRuns, RUN_SPAN, shiftOf, type MergeJob } from './run-merge.js';

export { RUN_SPAN };
// runs are written and read as native uint64s laid out little-endian
if (endianness() !== 'LE') throw new Error('the ledger key index needs a little-endian machine');
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

  /** Closes `file`'s descriptor, if open (before the file is removed). */
  forget(file: string): void {
    const fd = this.open.get(file);
    if (fd === undefined) return;
    this.open.delete(file);
    closeSync(fd);
  }

  close(): void {
    for (const fd of this.open.values()) closeSync(fd);
    this.open.clear();
  }
}

/** One sorted run: its items in memory until written, then read back from its file by block. */
class Run {
  /** First item of each 256-item block. */
  readonly fences: BigUint64Array;
  /** Low bits of an item holding the node's offset in the run. */
  readonly shift: bigint;

  constructor(
    /** Its first chunk of RUN_SPAN nodes. */
    readonly chunk: number,
    readonly level: number,
    private items: BigUint64Array | null,
    private readonly files: RunFiles,
    private file: string | null = null,
  ) {
    this.fences = new BigUint64Array(itemsOf(level) / BLOCK);
    this.shift = BigInt(shiftOf(level));
    if (items) for (let b = 0; b < this.fences.length; b++) this.fences[b] = items[b * BLOCK]!;
  }

  get first(): number {
    return this.chunk * RUN_SPAN;
  }

  /** Its file, once written. */
  get path(): string | null {
    return this.file;
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

/** Runs a merge; resolves once the target and its fences are durable under their names (`signal`: the index closed). */
export type Merger = (job: MergeJob, signal: AbortSignal) => Promise<void>;

/** Merges on the calling thread (tests, and tools that have no thread to spare). */
export const mergeHere: Merger = (job) => new Promise((resolve) => resolve(mergeRuns(job)));

export interface KeyIndexOptions {
  /** How many run files may be open at once. */
  openRuns?: number;
  /** Where merges run: on the calling thread unless given (the service gives a thread of their own: run-merge-host.ts). */
  merger?: Merger;
}

export class KeyIndex {
  private readonly runs: Run[] = [];
  /** The chunk being filled: first 4 key bytes → indices. */
  private tail = new Map<number, number | number[]>();
  private count = 0;
  /** Run files written since the last sync. */
  private unsynced: string[] = [];
  /** Runs a full disk kept from being written. */
  private unwritten: { run: Run; items: BigUint64Array }[] = [];
  private readonly files: RunFiles;
  private readonly merger: Merger;
  /** The merge under way, if any. */
  private merging: Promise<void> | null = null;
  /** Why the last merge failed (retried at the next sync), if it did. */
  private mergeFailure: string | null = null;
  /** Bumped by resume() and close(): a merge started before does not swap its result in. */
  private generation = 0;
  private closed = false;
  /** Aborts the merge under way when the index closes. */
  private readonly closing = new AbortController();

  /**
   * @param dir  where run files go (null: runs stay in memory and are never merged)
   * @param keyAt the full key of node `i` (from a column), to confirm candidates and build runs
   */
  constructor(
    private readonly name: string,
    private readonly dir: string | null,
    private readonly keyAt: (i: number) => Buffer,
    private readonly keysAt: (from: number, n: number) => Buffer,
    options: KeyIndexOptions = {},
  ) {
    this.files = new RunFiles(options.openRuns ?? OPEN_RUNS);
    this.merger = options.merger ?? mergeHere;
  }

  /** Run files open now (at most the bound given at construction). */
  get openRunFiles(): number {
    return this.files.size;
  }

  get length(): number {
    return this.count;
  }

  /** The level of each run, oldest first (a lookup reads one block of each). */
  get runLevels(): number[] {
    return this.runs.map((r) => r.level);
  }

  /** Why the last merge failed, until the next sync tries it again. */
  get lastMergeFailure(): string | null {
    return this.mergeFailure;
  }

  /** Resolves once no merge is under way or due. */
  async settled(): Promise<void> {
    while (this.merging) await this.merging;
  }

  /**
   * Opens at `size` nodes: stored runs are kept, the largest first (missing or torn ones rebuilt),
   * files no run uses (sources a crash left after their merge, temporaries) removed, the open
   * chunk re-read, and merges that are due started.
   */
  resume(size: number): void {
    this.generation++;
    this.runs.length = 0;
    this.tail = new Map();
    const full = Math.floor(size / RUN_SPAN);
    for (let c = 0; c < full; ) {
      const run = this.storedRun(c, full) ?? this.build(c);
      this.runs.push(run);
      c += FAN_IN ** run.level;
    }
    this.count = full * RUN_SPAN;
    if (size > this.count) {
      const keys = this.keysAt(this.count, size - this.count);
      for (let i = 0; this.count < size; i++) this.addTail(keys.subarray(i * 32, i * 32 + 32), this.count++);
    }
    this.removeUnused();
    this.maybeMerge();
  }

  /** The stored run that starts at chunk `c` and ends by chunk `full`, the highest level first. */
  private storedRun(c: number, full: number): Run | null {
    if (!this.dir) return null;
    for (let level = MAX_LEVEL; level >= 0; level--) {
      const span = FAN_IN ** level;
      if (c % span || c + span > full) continue;
      const file = this.runFile(c, level);
      if (existsSync(file) && statSync(file).size === itemsOf(level) * 8) return this.fileRun(file, c, level);
    }
    return null;
  }

  private removeUnused(): void {
    if (!this.dir || this.merging || !existsSync(this.dir)) return;
    const used = new Set(this.runs.flatMap((r) => (r.path ? [r.path, `${r.path}.fences`] : [])));
    for (const f of readdirSync(this.dir)) {
      const path = join(this.dir, f);
      if (f.startsWith(`${this.name}-`) && /\.run(\.fences)?(\.tmp)?$/.test(f) && !used.has(path)) rmSync(path, { force: true });
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
      this.maybeMerge();
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
      const found = c < this.runs.length ? this.inRun(this.runs[c]!, lo, hi) : prefix.length >= 8 ? this.tailHits(bytes.readUInt32BE(0)) : this.inTail(lo, hi);
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
    for (const run of this.runs) out.push(...this.inRun(run, lo, hi));
    out.push(...(lo === hi ? this.tailHits(key.readUInt32BE(0)) : this.inTail(lo, hi)));
    return out;
  }

  /** Indices in the open chunk whose key starts with the 4 bytes `k`: one map read. */
  private tailHits(k: number): number[] {
    const hit = this.tail.get(k);
    return hit === undefined ? [] : Array.isArray(hit) ? [...hit] : [hit];
  }

  /** Indices in `run` whose 48-bit key may lie in [lo, hi] (a merged run keeps fewer key bits). */
  private inRun(run: Run, lo48: bigint, hi48: bigint): number[] {
    const out: number[] = [];
    const dropped = BigInt(2 * run.level);
    const lo = lo48 >> dropped;
    const hi = hi48 >> dropped;
    const { shift, fences } = run;
    const mask = (1n << shift) - 1n;
    // the last block whose first key is below lo may still hold lo
    let b = 0;
    let e = fences.length;
    while (b < e) {
      const m = (b + e) >> 1;
      if (fences[m]! >> shift < lo) b = m + 1;
      else e = m;
    }
    for (let block = Math.max(0, b - 1); block < fences.length; block++) {
      if (fences[block]! >> shift > hi) break;
      for (const v of run.read(block)) {
        const k = v >> shift;
        if (k > hi) break;
        if (k >= lo) out.push(run.first + Number(v & mask));
      }
    }
    return out;
  }

  /** Indices in the open chunk whose key may lie in [lo, hi]: a scan of the chunk, for prefixes under 4 bytes. */
  private inTail(lo: bigint, hi: bigint): number[] {
    const out: number[] = [];
    for (const [k, v] of this.tail) {
      const top = BigInt(k) << 16n;
      if (top + 0xffffn >= lo && top <= hi) out.push(...(Array.isArray(v) ? v : [v]));
    }
    return out;
  }

  /** Sorts chunk `c` into a run of level 0 (and writes it when the index lives on disk). */
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
    const run = new Run(c, 0, items, this.files);
    if (!this.dir) return run;
    try {
      this.write(run, items);
    } catch {
      // a full disk: the run stays in memory and is written by the next sync (before a checkpoint)
      this.unwritten.push({ run, items });
    }
    return run;
  }

  /** Writes a level-0 run and points it at its file (its items are then read back from the page cache). */
  private write(run: Run, items: BigUint64Array): void {
    const file = this.runFile(run.chunk, 0);
    mkdirSync(this.dir!, { recursive: true });
    writeFileSync(`${file}.tmp`, Buffer.from(items.buffer, items.byteOffset, items.byteLength));
    renameSync(`${file}.tmp`, file);
    // the fences beside it: opening a run at start is one read, not 256
    writeFileSync(`${file}.fences.tmp`, Buffer.from(run.fences.buffer, run.fences.byteOffset, run.fences.byteLength));
    renameSync(`${file}.fences.tmp`, `${file}.fences`);
    this.unsynced.push(file, `${file}.fences`);
    run.moveTo(file);
  }

  /** `<name>-<first chunk>.run` at level 0 (the name runs had before merging), `…-L<level>.run` above. */
  private runFile(c: number, level: number): string {
    return join(this.dir!, `${this.name}-${String(c).padStart(6, '0')}${level ? `-L${level}` : ''}.run`);
  }

  /** Merges the lowest-level FAN_IN written runs of one level that start at a boundary of the next, if any. */
  private maybeMerge(): void {
    if (!this.dir || this.merging || this.closed || this.mergeFailure !== null || this.unwritten.length) return;
    let pick = -1;
    for (let i = 0; i + FAN_IN <= this.runs.length; i++) {
      const { level, chunk } = this.runs[i]!;
      if (level >= MAX_LEVEL || chunk % FAN_IN ** (level + 1) !== 0) continue;
      if (pick >= 0 && this.runs[pick]!.level <= level) continue;
      if (this.runs.slice(i, i + FAN_IN).every((r) => r.level === level && r.path)) pick = i;
    }
    if (pick < 0) return;
    const sources = this.runs.slice(pick, pick + FAN_IN);
    const { chunk, level } = sources[0]!;
    const job: MergeJob = { sources: sources.map((r) => r.path!), level, target: this.runFile(chunk, level + 1) };
    const generation = this.generation;
    this.merging = this.merger(job, this.closing.signal).then(
      () => {
        this.merging = null;
        // a resume() meanwhile rebuilt the list (and finds the merged file at the next start)
        if (generation === this.generation) this.swapIn(sources, job.target, chunk, level + 1);
        this.maybeMerge();
      },
      (err: unknown) => {
        this.merging = null;
        this.mergeFailure = (err as Error)?.message ?? String(err);
      },
    );
  }

  /** The merged run replaces its sources, whose files go (the merged one is durable already). */
  private swapIn(sources: Run[], file: string, chunk: number, level: number): void {
    const at = this.runs.indexOf(sources[0]!);
    if (at < 0 || sources.some((r, k) => this.runs[at + k] !== r)) return;
    this.runs.splice(at, FAN_IN, this.fileRun(file, chunk, level));
    for (const r of sources) {
      this.files.forget(r.path!);
      rmSync(r.path!, { force: true });
      rmSync(`${r.path!}.fences`, { force: true });
    }
    const gone = new Set(sources.flatMap((r) => [r.path!, `${r.path!}.fences`]));
    this.unsynced = this.unsynced.filter((f) => !gone.has(f));
  }

  close(): void {
    this.closed = true;
    this.generation++;
    // a merge cut short leaves only a temporary, removed at the next start
    this.closing.abort();
    this.files.close();
  }

  private fileRun(file: string, chunk: number, level: number): Run {
    const run = new Run(chunk, level, null, this.files, file);
    const fences = Buffer.from(run.fences.buffer, run.fences.byteOffset, run.fences.byteLength);
    try {
      if (readFileSync(`${file}.fences`).copy(fences) === fences.length && run.fences[0] === run.read(0)[0]) return run;
    } catch {
      // written by an older version, or lost: read from the run itself
    }
    const one = Buffer.alloc(8);
    const fd = this.files.fd(file);
    for (let b = 0; b < run.fences.length; b++) {
      readSync(fd, one, 0, 8, b * BLOCK * 8);
      run.fences[b] = one.readBigUInt64LE(0);
    }
    return run;
  }

  /** Run files written since the last call made durable (before a checkpoint is persisted); a failed merge is tried again. */
  async sync(): Promise<void> {
    while (this.unwritten.length) {
      const { run, items } = this.unwritten[0]!;
      this.write(run, items);
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
    this.mergeFailure = null;
    this.maybeMerge();
  }
}
