/**
 * file mode: the ledger as an append-only JSON Lines log in the data directory, one node per line,
 * auditable with jq, sha256sum and openssl alone (README "Auditing the ledger file").
 *
 *   <dataDir>/khipu.jsonl   line 1: {"schema":"svc.khipu-file/v1",...}; then one node per line
 *   <dataDir>/LOCK          held with an OS lock by the writer, its JSON naming it; a second process refuses to start
 *   <dataDir>/keys/         every public key that has signed into this log (<keyid>.pem)
 *
 * Durability: a batch is written with one write() on a descriptor opened with O_DSYNC, so the write
 * returns only once the data (and the file size) is on stable storage, as write + fdatasync would,
 * before any of its verdicts is answered, so an acknowledged verdict survives a power cut. One
 * system call and one trip through libuv's pool per batch instead of two; it never runs on the
 * event loop. Nothing is rewritten in place: the only truncation is of bytes that were never
 * acknowledged (a torn last line at start, or a batch whose write failed), and the only addition at
 * start is the newline of a last node that verified without it.
 */
import { createPublicKey } from 'node:crypto';
import { closeSync, constants, fdatasync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { open, readdir, readFile, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { HASH_SIZE } from '../../lib/tlog-tiles.js';
import { isDiskFault, writeFileDurably } from '../keys.js';
import { ZERO_DIGEST, type AppendInput, type LedgerNode, type LedgerStorage } from '../ledger.js';
import { FileRecords, type RecordSource } from '../records.js';
import { FileColumn } from '../tlog/column.js';
import { ENTRY_RECORD } from '../tlog/tile-log.js';
import { durableStatus, sequence, StoreUnavailableError, type AdapterStatus, type CheckpointStore, type LedgerStore, type ReplayOptions, type ReplayReport, type Tip } from './store.js';
import { FileCheckpointStore } from '../checkpoint.js';
import { FILE_SCHEMA, LEDGER_FILE, nodeLine, parseNodeLine } from './node-line.js';

export { FILE_SCHEMA, LEDGER_FILE, nodeLine, parseNodeLine };
import { LineReader } from './line-reader.js';
import { ServiceError } from '../../lib/service-error.js';

const noop = (): void => {};

/** Nodes handed to the signature sweep at a time while parsing goes on. */
const SWEEP_CHUNK = 4096;
/** Bytes of the log read at a time at start. */
const READ_CHUNK = 8 * 1024 * 1024;

export class LockHeldError extends ServiceError {
  readonly code = 'SVC_LOCK_HELD';
}

interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
}

// the kernel holds this lock for the open file description, so it dies with its holder however
// that ends (SIGKILL, OOM, PID 1 of a restarted container), which a PID in a file cannot tell
const require = createRequire(import.meta.url);
const { tryLock } = require('fs-native-extensions') as { tryLock(fd: number): boolean };

/** Whoever the LOCK file names, or null when it names nobody (empty, or written half). */
function lockHolder(path: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder> | null;
    return h && typeof h.pid === 'number' ? { pid: h.pid, host: String(h.host), started_at: String(h.started_at) } : null;
  } catch {
    return null;
  }
}

/**
 * The data directory's writer lock: an exclusive OS lock (fcntl open-file-description lock on
 * Linux) on `<dir>/LOCK`, held for as long as the returned release is not called and the process
 * lives. The file's JSON only says who holds it; the file is never removed, so two starters always
 * lock the same inode. A second holder, in this process or another, gets a LockHeldError naming
 * the holder. Writing that name is best-effort: on a full disk the lock holds all the same.
 */
export function acquireLock(dir: string, log?: FileStoreOptions['log']): () => void {
  const path = join(dir, 'LOCK');
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  let locked: boolean;
  try {
    locked = tryLock(fd);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  if (!locked) {
    closeSync(fd);
    const holder = lockHolder(path);
    const who = holder ? `pid ${holder.pid} on ${holder.host} since ${holder.started_at}` : 'another process (it has not written its name yet)';
    throw new LockHeldError(`data directory ${dir} is locked by ${who}; one process writes a file ledger (use postgres mode for replicas)`);
  }
  const me: LockHolder = { pid: process.pid, host: hostname(), started_at: new Date().toISOString() };
  try {
    ftruncateSync(fd, 0);
    writeSync(fd, `${JSON.stringify(me)}\n`, 0);
    fsyncSync(fd);
  } catch (err) {
    log?.warn({ err: (err as Error).message }, 'ledger LOCK: holder not written (the lock is held all the same)');
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    try {
      ftruncateSync(fd, 0); // says nobody holds it; the file stays so the next starter locks this inode
    } catch {
      // the name is information only
    }
    closeSync(fd);
  };
}

export interface FileStoreOptions {
  dataDir: string;
  retryAfterS: number;
  /** Backoff before reopening after a failed write or sync (doubling, capped). */
  recoveryBaseMs?: number;
  recoveryMaxMs?: number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /**
   * A replica's local copy of a chain kept elsewhere (postgres mode): the ledger's nodes are
   * written to it as they are applied, without O_DSYNC, and synced before each checkpoint; a start
   * trusts it up to the nodes it synced.
   */
  copy?: boolean;
}

/** A copy's pending lines are written in one call per this many bytes, at a sync, or at close. */
const COPY_FLUSH_AT = 256 * 1024;
/** How many nodes a copy had synced, written after each sync. */
export const COPY_SYNCED = 'copy-synced';

/** An error as answers may show it: Node quotes the paths it names, and paths belong in the logs only. */
export function publicError(err: Error): string {
  return err.message.replace(/ '[^']*'(?: -> '[^']*')?/g, '');
}

/** A write a start on a failing disk could not make; appends wait until it is made. */
interface PendingWrite {
  what: string;
  run(): Promise<void> | void;
}

export class FileStore implements LedgerStore {
  readonly mode = 'file' as const;
  readonly scope = 'LOCAL_FILE' as const;
  private readonly path: string;
  private fh: FileHandle | null = null;
  /** Bytes known to be durable: everything acknowledged ends here. */
  private durableBytes = 0;
  private state: AdapterStatus['state'] = 'REPLAYING';
  private reason = 'replaying the ledger file';
  private attempts = 0;
  /** Set by close(): a reopen or a failed write in flight must not touch the file after it. */
  private closed = false;
  private lastError: string | null = null;
  private retryAt = 0;
  private unlock: () => void;
  /** Made in order, at the end of replay and then by every reopen, before any append is taken. */
  private readonly pending: PendingWrite[] = [];
  /** Where each node's line ends in the log (a derived file: rebuilt from the log when it is off). */
  private endsColumn: FileColumn | null = null;
  private headerEnd = 0;
  private readonly tlogDir: string;
  /** A copy's lines not written yet, their bytes, and its descriptor for them. */
  private copyPending: string[] = [];
  private copyBytes = 0;
  private copyFd: number | null = null;

  private constructor(private readonly opts: FileStoreOptions) {
    this.path = join(opts.dataDir, LEDGER_FILE);
    this.unlock = noop;
    this.tlogDir = join(opts.dataDir, 'tlog');
  }

  /** Opened with the derived files, not at open(): opening only takes the lock. */
  private get ends(): FileColumn {
    return (this.endsColumn ??= new FileColumn(join(this.tlogDir, 'record-ends'), 8));
  }

  /**
   * The tiles, PAE digests and key indexes under `<dataDir>/tlog/`, all derived from the log and
   * re-derived from it when they do not match; receipts are read back from the log's lines.
   */
  storage(): LedgerStorage {
    const levels: FileColumn[] = [];
    const copy = this.opts.copy === true;
    const interiors: FileColumn[] = [];
    const ends = this.ends;
    const tiles = {
      level: (l: number) => (levels[l] ??= new FileColumn(join(this.tlogDir, 'tile', String(l)), HASH_SIZE)),
      interior: (l: number) => (interiors[l] ??= new FileColumn(join(this.tlogDir, 'interior', String(l)), HASH_SIZE)),
      entries: new FileColumn(join(this.tlogDir, 'tile', 'entries'), ENTRY_RECORD),
    };
    const lines = new FileRecords(this.path, ends, () => this.headerEnd, (text, index) => parseNodeLine(text, index, index === 0 ? ZERO_DIGEST : tiles.entries.read(index - 1, 1).subarray(2)));
    // a copy writes the nodes the ledger applies after its start (its own file has them from then on)
    const records: RecordSource = copy
      ? {
          get: (index) => {
            // a line not written yet (a full disk keeps lines here) is read from memory
            const pending = index - (this.ends.length - this.copyPending.length);
            if (pending < 0 || index >= this.ends.length) return lines.get(index);
            const node = parseNodeLine(this.copyPending[pending]!, index, index === 0 ? ZERO_DIGEST : tiles.entries.read(index - 1, 1).subarray(2));
            if (typeof node === 'string') throw new Error(`ledger copy line ${index}: ${node}`);
            return node;
          },
          remember: (node) => {
            lines.remember(node);
            if (this.state !== 'REPLAYING') this.appendCopy(node);
          },
          close: () => lines.close(),
        }
      : lines;
    const paes = new FileColumn(join(this.tlogDir, 'pae'), HASH_SIZE);
    const close = (): void => {
      for (const c of [...levels, ...interiors, tiles.entries, paes]) c?.close();
    };
    return { tiles, paes, records, indexDir: join(this.tlogDir, 'index'), close };
  }

  syncDerived(): Promise<void> {
    if (this.opts.copy) return this.syncCopy();
    return this.ends.sync();
  }

  /** A copy's line for a node the ledger applied, written with the next flush (not durable until syncCopy). */
  private appendCopy(node: LedgerNode): void {
    const line = nodeLine(node);
    this.copyPending.push(line);
    this.copyBytes += line.length;
    const end = Buffer.allocUnsafe(8);
    end.writeBigUInt64BE(BigInt(this.durableBytes + this.copyBytes));
    this.ends.append(end);
    if (this.copyBytes < COPY_FLUSH_AT) return;
    try {
      this.flushCopy();
    } catch (err) {
      // the database holds the node; the copy catches up once the disk takes writes again
      this.opts.log?.warn({ err: (err as Error).message, pending: this.copyPending.length }, 'ledger copy: write failed; lines kept in memory until it succeeds');
    }
  }

  /** Writes a copy's pending lines (lines are ASCII: JSON with base64 and hex fields). */
  private flushCopy(): void {
    if (!this.copyPending.length) return;
    const buf = Buffer.from(this.copyPending.join(''), 'latin1');
    const fd = (this.copyFd ??= openSync(this.path, constants.O_WRONLY | constants.O_APPEND));
    try {
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
    } catch (err) {
      // a part written is cut, so the retry appends whole lines where they belong
      ftruncateSync(fd, this.durableBytes);
      throw err;
    }
    this.durableBytes += buf.length;
    this.copyPending = [];
    this.copyBytes = 0;
  }

  /** A copy's lines and record offsets on stable storage, then the number of nodes they hold, durably. */
  private async syncCopy(): Promise<void> {
    // counted now: nodes applied while the syncs run are not covered by them
    const held = this.ends.length;
    this.flushCopy();
    const fd = this.copyFd;
    if (fd !== null) await new Promise<void>((resolve, reject) => fdatasync(fd, (err) => (err ? reject(err) : resolve())));
    await this.ends.sync();
    writeFileDurably(join(this.opts.dataDir, COPY_SYNCED), `${held}\n`, 0o644);
  }

  /**
   * How many nodes a copy holds for certain: synced (as its marker says) and whole in its file;
   * 0 for a copy never synced.
   */
  async copyHeld(): Promise<number> {
    let synced = 0;
    try {
      synced = Number(readFileSync(join(this.opts.dataDir, COPY_SYNCED), 'utf8').trim()) || 0;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let fileSize = 0;
    try {
      fileSize = (await stat(this.path)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    let held = 0;
    for (let lo = 0, hi = Math.min(synced, this.ends.length); lo < hi; ) {
      const mid = (lo + hi) >> 1;
      if (Number(this.ends.read(mid, 1).readBigUInt64BE(0)) <= fileSize) lo = held = mid + 1;
      else hi = mid;
    }
    return held;
  }

  /** Cuts a copy's records after its first `size` nodes (0: the file goes; it is recreated empty). */
  async cutCopy(size: number): Promise<void> {
    if (size === 0) {
      // a descriptor left on the removed file would hold it open and take the lines meant for the new one
      await this.dropDescriptors();
      await rm(this.path, { force: true });
      this.ends.truncate(0);
      return;
    }
    const end = Number(this.ends.read(size - 1, 1).readBigUInt64BE(0));
    await truncate(this.path, end);
    this.ends.truncate(size);
  }

  recordsEnd(): number {
    return this.durableBytes;
  }

  fsckTarget(): { dataDir: string; recordsEnd(): number } {
    return { dataDir: this.opts.dataDir, recordsEnd: this.recordsEnd.bind(this) };
  }

  /** `<dataDir>/checkpoint`: the newest signed checkpoint, whatever its origin. */
  checkpointStore(): CheckpointStore {
    return new FileCheckpointStore(join(this.opts.dataDir, 'checkpoint'));
  }

  damaged(bad: { index: number; reason: string }): void {
    if (this.state === 'CORRUPT') return;
    this.state = 'CORRUPT';
    this.reason = `ledger file damaged at node ${bad.index}: ${bad.reason} (found by the background fsck); appends are refused`;
    this.opts.log?.warn({ index: bad.index, reason: bad.reason, file: this.path }, 'ledger file damaged: appends refused');
  }

  /** Creates the data directory if needed and takes the writer lock (throws LockHeldError). */
  static open(opts: FileStoreOptions): FileStore {
    mkdirSync(opts.dataDir, { recursive: true });
    const store = new FileStore(opts);
    store.unlock = acquireLock(opts.dataDir, opts.log);
    const keys = join(opts.dataDir, 'keys');
    try {
      mkdirSync(keys, { recursive: true });
    } catch (err) {
      if (!isDiskFault(err)) {
        store.unlock();
        throw err;
      }
      store.requireWritten('the keys directory', () => void mkdirSync(keys, { recursive: true }), err as Error);
    }
    return store;
  }

  /**
   * A write that failed on a full or failing disk at start: it is made again, in order, before the
   * store takes any append, so start-up degrades as a running store does instead of failing.
   */
  requireWritten(what: string, run: PendingWrite['run'], err: Error): void {
    this.pending.push({ what, run });
    this.lastError = publicError(err);
    this.opts.log?.warn({ err: err.message, what }, 'ledger file store: a start-up write failed; appends wait until it is made');
  }

  /**
   * Opens the log. With a checkpoint persisted before (`opts.anchor`), the tiles, PAE column and
   * record offsets are trusted up to its size once the root recomputed from the tiles equals the
   * signed one (O(log n) reads), and only the records appended after it are read and checked:
   * start-up costs what the checkpoint interval bounds, not the size of the log. Without one (a
   * new directory, a khipu.jsonl written by an older version, or derived files that do not match)
   * every record is read and the derived files are rebuilt from them.
   */
  async replay(opts: ReplayOptions): Promise<ReplayReport> {
    const started = performance.now();
    let fh: FileHandle;
    try {
      fh = await open(this.path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return this.startEmpty(opts, null, started);
    }
    let report: ReplayReport;
    try {
      report = await this.replayFrom(fh, opts, started);
    } finally {
      await fh.close();
    }
    return report;
  }

  /** A new (or never acknowledged) log: derived files emptied, the file created. */
  private async startEmpty(opts: ReplayOptions, trimmed: ReplayReport['trimmed'], started: number): Promise<ReplayReport> {
    this.ends.truncate(0);
    opts.resume?.(0);
    this.pending.push({ what: 'the ledger file', run: () => this.create() });
    await this.settle();
    const corruptAt = opts.anchor && opts.anchor.size > 0 ? this.lost(0, opts.anchor.size) : null;
    return { nodes: 0, trimmed, corruptAt, ms: performance.now() - started };
  }

  /** Records are missing that a checkpoint persisted before counted: damage, named by index. */
  private lost(have: number, signed: number): { index: number; reason: string } {
    const corruptAt = { index: have, reason: `node ${have}: missing, the checkpoint signed before names ${signed} nodes (records ${have}..${signed - 1} are gone)` };
    this.state = 'CORRUPT';
    this.reason = `ledger file damaged at node ${have}: ${corruptAt.reason}; appends are refused, nodes 0..${have - 1} are served`;
    this.opts.log?.warn({ index: have, signed }, 'ledger file: records missing that a checkpoint counted');
    return corruptAt;
  }

  private async replayFrom(fh: FileHandle, opts: ReplayOptions, started: number): Promise<ReplayReport> {
    const fileSize = (await fh.stat()).size;
    // the header line (short, written once)
    const first = Buffer.allocUnsafe(Math.min(fileSize, 64 * 1024));
    await fh.read(first, 0, first.length, 0);
    const nl = first.indexOf(0x0a);
    if (nl < 0 && isHeader(safeParse(first.toString('utf8')))) {
      // a whole header that lost only its newline may have been acknowledged: it is kept
      this.headerEnd = fileSize + 1;
      this.ends.truncate(0);
      opts.resume?.(0);
      this.durableBytes = fileSize;
      this.pending.push({ what: 'the newline of the header', run: () => this.appendNewline() });
      await this.settle();
      return { nodes: 0, trimmed: null, corruptAt: opts.anchor && opts.anchor.size > 0 ? this.lost(0, opts.anchor.size) : null, ms: performance.now() - started };
    }
    if (nl < 0) {
      // not even a complete header: nothing was ever acknowledged in this file
      const trimmed = fileSize ? { bytes: fileSize, reason: `torn last line (${fileSize} bytes without a newline) trimmed: it was never acknowledged` } : null;
      if (fileSize) this.opts.log?.warn({ trimmed_bytes: fileSize, file: this.path }, 'ledger file: torn last line trimmed');
      return this.startEmpty(opts, trimmed, started);
    }
    this.headerEnd = nl + 1;
    let corruptAt: ReplayReport['corruptAt'] = null;
    if (!isHeader(safeParse(first.toString('utf8', 0, nl)))) corruptAt = { index: 0, reason: `line 1 is not a ${FILE_SCHEMA} header` };
    // where reading starts: after the last checkpoint whose tiles check out, else at genesis
    let from = 0;
    let offset = this.headerEnd;
    const anchor = opts.anchor && opts.anchor.size > 0 && !corruptAt ? opts.anchor : null;
    if (anchor) {
      const problem = await this.openAt(fh, anchor, fileSize, opts);
      if (problem === 'lost') {
        // the nodes still wholly in the file are served, from derived files synced before the checkpoint
        const lost = this.lostAt(fileSize, anchor.size);
        this.ends.truncate(lost.index);
        opts.resume?.(lost.index);
        return this.finishCorrupt(lost, started, null);
      }
      if (problem) {
        this.opts.log?.warn({ reason: problem, checkpoint_size: anchor.size }, 'ledger file: derived files do not match the checkpoint; rebuilding them from the records');
      } else {
        from = anchor.size;
        offset = Number(this.ends.read(from - 1, 1).readBigUInt64BE(0));
      }
    }
    if (from === 0) {
      this.ends.truncate(0);
      opts.resume?.(0);
    }
    const head = from === 0 ? ZERO_DIGEST : (opts.head?.() ?? ZERO_DIGEST);
    const scan = corruptAt ? { nodes: 0, end: this.headerEnd, wholeTail: false, corruptAt } : await this.scan(fh, opts, from, offset, head, fileSize);
    corruptAt = scan.corruptAt;
    let trimmed: ReplayReport['trimmed'] = null;
    if (!corruptAt && scan.end < fileSize) {
      trimmed = { bytes: fileSize - scan.end, reason: `torn last line (${fileSize - scan.end} bytes without a newline) trimmed: it was never acknowledged` };
      const w = await open(this.path, 'r+');
      try {
        await w.truncate(scan.end);
        await w.sync();
      } finally {
        await w.close();
      }
      this.opts.log?.warn({ trimmed_bytes: trimmed.bytes, file: this.path }, 'ledger file: torn last line trimmed');
    }
    const nodes = from + scan.nodes;
    if (!corruptAt && opts.anchor && nodes < opts.anchor.size) return this.finishCorrupt(this.lost(nodes, opts.anchor.size), started, trimmed, nodes);
    if (corruptAt) return this.finishCorrupt(corruptAt, started, trimmed, nodes);
    this.durableBytes = scan.wholeTail ? fileSize : scan.end;
    if (scan.wholeTail) {
      this.opts.log?.warn({ index: nodes - 1, file: this.path }, 'ledger file: the last node had lost its newline; it verifies and is kept');
      this.pending.push({ what: 'the newline of the last line', run: () => this.appendNewline() });
    }
    await this.settle();
    return { nodes, trimmed, corruptAt: null, ms: performance.now() - started, fromCheckpoint: from };
  }

  /** The records file ends before the nodes a checkpoint counted: the first one not wholly there. */
  private lostAt(fileSize: number, signed: number): { index: number; reason: string } {
    let have = 0;
    for (let lo = 0, hi = signed; lo < hi; ) {
      const mid = (lo + hi) >> 1;
      if (Number(this.ends.read(mid, 1).readBigUInt64BE(0)) <= fileSize) lo = have = mid + 1;
      else hi = mid;
    }
    return this.lost(have, signed);
  }

  private finishCorrupt(corruptAt: NonNullable<ReplayReport['corruptAt']>, started: number, trimmed: ReplayReport['trimmed'], nodes = corruptAt.index): ReplayReport {
    // nothing is written, not even a missing newline: the file stays exactly as found
    if (this.state !== 'CORRUPT') {
      this.state = 'CORRUPT';
      this.reason = `ledger file damaged at node ${corruptAt.index}: ${corruptAt.reason}; appends are refused, nodes 0..${corruptAt.index - 1} are served`;
      this.opts.log?.warn({ index: corruptAt.index, reason: corruptAt.reason, file: this.path }, 'ledger file damaged: appends refused');
    }
    return { nodes, trimmed, corruptAt, ms: performance.now() - started };
  }

  /**
   * Opens the derived files at the checkpoint's size: null when they hold it and the tiles'
   * root equals the signed one, 'lost' when records it counted are gone from the file, else why not.
   */
  private async openAt(fh: FileHandle, anchor: { size: number; root: Buffer }, fileSize: number, opts: ReplayOptions): Promise<string | null> {
    if (this.ends.length < anchor.size) return `record offsets cover ${this.ends.length} nodes, the checkpoint ${anchor.size}`;
    this.ends.truncate(anchor.size);
    const lastEnd = Number(this.ends.read(anchor.size - 1, 1).readBigUInt64BE(0));
    // a last line that lost only its newline is judged by the full read, which keeps it if it verifies
    if (lastEnd === fileSize + 1) return 'the last line the checkpoint counts has lost its newline';
    if (lastEnd > fileSize) return 'lost';
    const byte = Buffer.alloc(1);
    await fh.read(byte, 0, 1, lastEnd - 1);
    if (byte[0] !== 0x0a) return `record offset ${anchor.size - 1} does not end a line`;
    try {
      const root = opts.resume!(anchor.size);
      if (!root.equals(anchor.root)) return 'the root recomputed from the tiles differs from the checkpoint\'s';
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  }

  /**
   * Reads, checks and hands over the records from `offset` (node `from` on) in chunks: each chunk's
   * signatures are checked in the pool while the next is parsed, and a chunk is applied only once
   * it and everything before it verified, so nothing past a damaged node is ever applied.
   */
  private async scan(fh: FileHandle, opts: ReplayOptions, from: number, offset: number, head: Buffer, fileSize: number): Promise<{ nodes: number; end: number; wholeTail: boolean; corruptAt: ReplayReport['corruptAt'] }> {
    type Chunk = { nodes: LedgerNode[]; ends: number[]; sweep: Promise<{ index: number; reason: string } | null> };
    const inFlight: Chunk[] = [];
    let corruptAt: ReplayReport['corruptAt'] = null;
    let applied = 0;
    let chunk: { nodes: LedgerNode[]; ends: number[] } = { nodes: [], ends: [] };
    const settleOne = async (): Promise<void> => {
      const c = inFlight.shift()!;
      const bad = await c.sweep;
      if (bad && (!corruptAt || bad.index < corruptAt.index)) corruptAt = bad;
      const keep = corruptAt ? c.nodes.filter((n) => n.index < corruptAt!.index) : c.nodes;
      for (const n of keep) opts.apply(n);
      const ends = Buffer.allocUnsafe(keep.length * 8);
      keep.forEach((_, k) => ends.writeBigUInt64BE(BigInt(c.ends[k]!), k * 8));
      this.ends.append(ends);
      applied += keep.length;
    };
    const ship = async (): Promise<void> => {
      if (!chunk.nodes.length) return;
      inFlight.push({ ...chunk, sweep: opts.verifySignatures(chunk.nodes) });
      chunk = { nodes: [], ends: [] };
      // a few chunks ahead at most: memory stays bounded however long the log
      while (inFlight.length > 4) await settleOne();
    };
    const reader = new LineReader(fh, offset, fileSize, READ_CHUNK);
    let k = from;
    let end = offset;
    let wholeTail = false;
    for await (const { text, end: lineEnd } of reader.lines()) {
      const n = parseNodeLine(text, k, head);
      if (typeof n === 'string') {
        corruptAt = { index: k, reason: `node ${k} (line ${k + 2}): ${n}` };
        break;
      }
      chunk.nodes.push(n);
      chunk.ends.push(lineEnd);
      head = n.nodeDigest;
      end = lineEnd;
      k++;
      if (chunk.nodes.length >= SWEEP_CHUNK) {
        await ship();
        if (corruptAt) break; // a bad signature found meanwhile: nothing after it is read
      }
    }
    const carry = reader.rest;
    if (!corruptAt && carry.length) {
      // bytes after the last newline: a whole node that lost only its newline may have been
      // acknowledged, so it is judged as a line (and kept); anything less is a torn write, never
      // acknowledged, and is trimmed
      if (safeParse(carry.toString('utf8')) !== null) {
        const n = parseNodeLine(carry.toString('utf8'), k, head);
        if (typeof n === 'string') corruptAt = { index: k, reason: `node ${k} (line ${k + 2}): ${n}` };
        else {
          chunk.nodes.push(n);
          // its newline is written before any append, so the next line starts one byte on
          chunk.ends.push(fileSize + 1);
          wholeTail = true;
          end = fileSize;
          k++;
        }
      }
    }
    await ship();
    while (inFlight.length) await settleOne();
    if (corruptAt) wholeTail = false;
    return { nodes: applied, end, wholeTail, corruptAt };
  }

  async commit(inputs: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]> {
    if (this.state !== 'READY' || !this.fh) throw this.refusal();
    const nodes = sequence(inputs, tip);
    const lines = nodes.map(nodeLine);
    const buf = Buffer.from(lines.join(''), 'utf8');
    try {
      let off = 0;
      while (off < buf.length) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten;
    } catch (err) {
      this.fail(err as Error);
      throw this.refusal();
    }
    const ends = Buffer.allocUnsafe(nodes.length * 8);
    let end = this.durableBytes;
    lines.forEach((l, k) => ends.writeBigUInt64BE(BigInt((end += Buffer.byteLength(l))), k * 8));
    this.ends.append(ends);
    this.durableBytes += buf.length;
    return nodes;
  }

  readFrom(): Promise<LedgerNode[]> {
    return Promise.resolve([]); // the lock makes this process the only writer
  }

  onRemoteAppend(): void {}

  async loadKeys(): Promise<string[]> {
    const dir = join(this.opts.dataDir, 'keys');
    let names: string[];
    try {
      names = (await readdir(dir)).filter((f) => f.endsWith('.pem')).sort();
    } catch (err) {
      // keys/ could not be made on a full disk: no key has signed here yet
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && this.pending.length) return [];
      throw err;
    }
    return Promise.all(names.map((f) => readFile(join(dir, f), 'utf8')));
  }

  /**
   * Publishes a key in keys/<keyid>.pem and when this log first recorded it in
   * keys/<keyid>.created_at (both first wins); returns that time, so a restart reports the same.
   * A key published by an older version without the time gets its file's modification time,
   * which was written when it was first recorded.
   */
  async recordKey(keyid: string, spkiPem: string, createdAt: string = new Date().toISOString()): Promise<string> {
    const file = join(this.opts.dataDir, 'keys', `${keyid}.pem`);
    const timeFile = join(this.opts.dataDir, 'keys', `${keyid}.created_at`);
    const what = `public key ${keyid.slice(0, 16)}`;
    const published = wholePublicKey(file);
    const recorded = readCreatedAt(timeFile) ?? (published ? statSync(file).mtime.toISOString() : createdAt);
    const write = (): void => {
      // a key there in whole is kept (first wins); a damaged one, as older versions could leave on a full disk, is replaced
      if (!wholePublicKey(file)) writeFileDurably(file, spkiPem, 0o644);
      if (readCreatedAt(timeFile) === null) writeFileDurably(timeFile, `${recorded}\n`, 0o644);
    };
    if (this.pending.length) {
      this.pending.push({ what, run: write }); // after the writes it depends on (keys/ itself)
      return recorded;
    }
    try {
      write();
    } catch (err) {
      if (!isDiskFault(err)) throw err;
      this.requireWritten(what, write, err as Error);
    }
    await Promise.resolve();
    return recorded;
  }

  status(): AdapterStatus {
    return durableStatus(this.state, this.reason, this.attempts, this.retryAt, this.lastError);
  }

  async close(): Promise<void> {
    this.closed = true;
    const fh = this.fh;
    this.fh = null;
    if (this.state === 'READY') this.state = 'UNAVAILABLE';
    this.reason = 'closed';
    await fh?.close().catch(() => {});
    try {
      this.flushCopy();
    } catch (err) {
      this.opts.log?.warn({ err: (err as Error).message }, 'ledger copy: lines not written at close (the next start reads them from the database again)');
    }
    if (this.copyFd !== null) closeSync(this.copyFd);
    this.copyFd = null;
    this.endsColumn?.close();
    this.unlock();
  }

  private ready(): void {
    this.state = 'READY';
    this.reason = `appending to ${LEDGER_FILE} in the data directory with O_DSYNC writes (durable before every acknowledgement)`;
  }

  /** Closes the append and copy descriptors, if open (their files are about to be replaced or cut). */
  private async dropDescriptors(): Promise<void> {
    const fh = this.fh;
    this.fh = null;
    if (this.copyFd !== null) closeSync(this.copyFd);
    this.copyFd = null;
    await fh?.close();
  }

  /** Every write on this descriptor is durable when it returns (data and size, like fdatasync). */
  private openForAppend(): Promise<FileHandle> {
    return open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_DSYNC);
  }

  private refusal(): StoreUnavailableError {
    const wait = this.state === 'UNAVAILABLE' ? Math.max(this.opts.retryAfterS, Math.ceil((this.retryAt - Date.now()) / 1000)) : this.opts.retryAfterS;
    return new StoreUnavailableError(this.reason, wait);
  }

  /** Makes the pending writes, in order, each once; stops at the first that fails (it stays first). */
  private async makePending(): Promise<void> {
    while (this.pending.length && !this.closed) {
      await this.pending[0]!.run();
      this.pending.shift();
    }
  }

  /**
   * The end of replay: pending writes made, the append descriptor opened, READY. A full or failing
   * disk leaves the store UNAVAILABLE and recovering, as a failed write does later on; any other
   * error (a permission, say) fails the start.
   */
  private async settle(): Promise<void> {
    try {
      await this.makePending();
      // a copy rebuilt from the rows replays a second time: its first descriptor is closed, not dropped
      await this.dropDescriptors();
      this.fh = await this.openForAppend();
      this.ready();
    } catch (err) {
      if (!isDiskFault(err)) throw err;
      const what = this.pending[0]?.what ?? 'the ledger file';
      this.state = 'UNAVAILABLE';
      this.lastError = publicError(err as Error);
      this.reason = `${what} could not be written at start (${this.lastError}); appends are refused until it is`;
      this.opts.log?.warn({ err: (err as Error).message, what }, 'ledger file store: start-up write failed: appends refused');
      this.scheduleReopen();
    }
  }

  private async create(): Promise<void> {
    const fh = await open(this.path, 'w', 0o644);
    const header = `${JSON.stringify({ schema: FILE_SCHEMA, created_at: new Date().toISOString(), node_digest: 'SHA-256("svc.khipu.node.v1\\n" || uint64_be(i) || prev || pae_sha256)' })}\n`;
    try {
      await fh.write(header);
      await fh.sync();
    } finally {
      await fh.close();
    }
    // the new file's directory entry must be durable too
    const dir = await open(this.opts.dataDir, 'r');
    await dir.sync().catch(() => {});
    await dir.close();
    this.durableBytes = Buffer.byteLength(header);
    this.headerEnd = this.durableBytes;
  }

  /** Completes a last line that verified but had lost its newline, so the next node starts a line of its own. */
  private async appendNewline(): Promise<void> {
    const fh = await this.openForAppend();
    try {
      await fh.write('\n');
    } finally {
      await fh.close();
    }
    this.durableBytes += 1;
  }

  /**
   * A failed write or sync: the kernel may have dropped the dirty pages, so a retried fsync on this
   * descriptor could lie (fsyncgate). Refuse appends, then reopen, cut back to the durable length
   * and carry on, with a capped doubling backoff.
   */
  private fail(err: Error): void {
    if (this.closed) return; // a write cut short by close(): nothing to recover
    this.state = 'UNAVAILABLE';
    this.lastError = publicError(err);
    this.reason = `ledger file write failed (${this.lastError}); appends are refused until it is reopened`;
    this.opts.log?.warn({ err: err.message, file: this.path }, 'ledger file write failed: appends refused');
    const fh = this.fh;
    this.fh = null;
    void fh?.close().catch(() => {});
    this.scheduleReopen();
  }

  private scheduleReopen(): void {
    const base = this.opts.recoveryBaseMs ?? 500;
    const delay = Math.min(this.opts.recoveryMaxMs ?? 30_000, base * 2 ** Math.min(this.attempts, 16));
    this.retryAt = Date.now() + delay;
    setTimeout(() => void this.reopen(), delay).unref();
  }

  private async reopen(): Promise<void> {
    if (this.state !== 'UNAVAILABLE' || this.closed) return;
    this.attempts++;
    try {
      // what a start on a failing disk could not write comes first
      await this.makePending();
      // close() may run during any await here: it releases the lock, after which another writer
      // may own the file, so nothing is cut and no descriptor is kept once it has
      if (this.closed) return;
      const fh = await open(this.path, 'r+');
      try {
        if (this.closed) return;
        await fh.truncate(this.durableBytes); // only the failed, unacknowledged batch is cut
        await fh.sync();
      } finally {
        await fh.close();
      }
      const append = await this.openForAppend();
      if (this.closed) {
        await append.close();
        return;
      }
      this.fh = append;
      this.ready();
      this.opts.log?.info({ attempts: this.attempts }, 'ledger file reopened: appends resume');
    } catch (err) {
      this.lastError = publicError(err as Error);
      const what = this.pending[0]?.what;
      if (what) this.reason = `${what} could not be written (${this.lastError}); appends are refused until it is`;
      this.scheduleReopen();
    }
  }
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The time a keys/<keyid>.created_at file holds; null when it is missing or damaged (then written anew). */
function readCreatedAt(file: string): string | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  return ISO_MS.test(text) && !Number.isNaN(Date.parse(text)) ? text : null;
}

/** True when `file` holds a public key PEM; false when it is missing or damaged. */
function wholePublicKey(file: string): boolean {
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  try {
    createPublicKey({ key: pem, format: 'pem' });
    return true;
  } catch {
    return false;
  }
}

function isHeader(v: Record<string, unknown> | null): boolean {
  return v !== null && v.schema === FILE_SCHEMA;
}

function safeParse(text: string): Record<string, unknown> | null {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
