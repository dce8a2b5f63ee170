/**
 * Merges FAN_IN sorted key-index runs of one level, covering consecutive node ranges, into one run
 * of the next level (key-index.ts describes the item layout). A run of level L holds
 * RUN_SPAN·4^L items, each a little-endian uint64 whose low `shift(L)` bits are the node's offset
 * in the run and whose high bits are the top of its key, ordered by those key bits. Merging moves
 * the split two bits up: the key loses its two lowest bits and the offset gains room for the
 * sources' positions. The sources are read and the target written in chunks, so memory stays at
 * a few MiB whatever the level; the target and its fences reach the disk under temporary names and
 * are renamed into place once synced, so a crash leaves either the sources or a complete target.
 */
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export const RUN_SPAN = 65_536;
export const FAN_IN = 4;
export const BLOCK = 256;
/** Offsets of a run above this level would not fit the 32-bit half of an item the merge works on. */
export const MAX_LEVEL = 7;
const CHUNK = 65_536;

/** Low bits of an item holding the node's offset in a run of `level`. */
export const shiftOf = (level: number): number => 16 + 2 * level;
export const itemsOf = (level: number): number => RUN_SPAN * FAN_IN ** level;

export interface MergeJob {
  sources: string[];
  /** The level of every source; the target is one above. */
  level: number;
  target: string;
}

/** One source read a chunk at a time, its current item split into 32-bit halves. */
class Reader {
  private readonly buf = Buffer.allocUnsafeSlow(CHUNK * 8);
  private readonly words = new Uint32Array(this.buf.buffer, this.buf.byteOffset, CHUNK * 2);
  private have = 0;
  private at = 0;
  private read = 0;
  /** The current item's key bits at the target's shift (a double: at most 48 bits), or Infinity when done. */
  key = Infinity;
  lo = 0;
  hi = 0;

  constructor(
    private readonly fd: number,
    private readonly total: number,
    private readonly targetShift: number,
  ) {
    this.next();
  }

  next(): void {
    if (this.at === this.have) {
      const n = Math.min(CHUNK, this.total - this.read);
      if (n === 0) {
        this.key = Infinity;
        return;
      }
      for (let got = 0; got < n * 8; ) {
        const r = readSync(this.fd, this.buf, got, n * 8 - got, this.read * 8 + got);
        if (r === 0) throw new Error(`key-index run: short read at item ${this.read}`);
        got += r;
      }
      this.read += n;
      this.have = n;
      this.at = 0;
    }
    this.lo = this.words[this.at * 2]!;
    this.hi = this.words[this.at * 2 + 1]!;
    this.at++;
    this.key = this.hi * 2 ** (32 - this.targetShift) + Math.floor(this.lo / 2 ** this.targetShift);
  }
}

/** Writes `bytes` whole at the end of what `fd` holds. */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
}

/** Writes `<path>.tmp` and syncs it (renamed into place by the caller). */
function writeSynced(path: string, write: (fd: number) => void): void {
  const fd = openSync(`${path}.tmp`, 'w', 0o644);
  try {
    write(fd);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function mergeRuns(job: MergeJob): void {
  if (job.sources.length !== FAN_IN || job.level >= MAX_LEVEL) throw new Error(`key-index merge: ${job.sources.length} runs of level ${job.level}`);
  const perSource = itemsOf(job.level);
  const shift = shiftOf(job.level);
  const target = shiftOf(job.level + 1);
  const fences = new Uint32Array((FAN_IN * perSource * 2) / BLOCK);
  const fds = job.sources.map((f) => openSync(f, 'r'));
  try {
    const readers = fds.map((fd) => new Reader(fd, perSource, target));
    const out = Buffer.allocUnsafeSlow(CHUNK * 8);
    const words = new Uint32Array(out.buffer, out.byteOffset, CHUNK * 2);
    const sourceMask = 2 ** shift - 1;
    writeSynced(job.target, (fd) => {
      let n = 0;
      let written = 0;
      for (;;) {
        let j = -1;
        let best = Infinity;
        for (let r = 0; r < FAN_IN; r++) {
          if (readers[r]!.key < best) {
            best = readers[r]!.key;
            j = r;
          }
        }
        if (j < 0) break;
        const src = readers[j]!;
        // the key's bits above the target shift, then the offset in the merged run
        const lo = (Math.floor(src.lo / 2 ** target) * 2 ** target + j * perSource + (src.lo & sourceMask)) >>> 0;
        words[n * 2] = lo;
        words[n * 2 + 1] = src.hi;
        const item = written + n;
        if (item % BLOCK === 0) {
          fences[(item / BLOCK) * 2] = lo;
          fences[(item / BLOCK) * 2 + 1] = src.hi;
        }
        src.next();
        if (++n === CHUNK) {
          writeAll(fd, out);
          written += n;
          n = 0;
        }
      }
      if (n) writeAll(fd, out.subarray(0, n * 8));
      if (written + n !== FAN_IN * perSource) throw new Error(`key-index merge: ${written + n} items, expected ${FAN_IN * perSource}`);
    });
  } catch (err) {
    rmSync(`${job.target}.tmp`, { force: true });
    throw err;
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  // the fences in place before the run: a run found at start then has its fences (else it is read through its blocks)
  try {
    writeSynced(`${job.target}.fences`, (fd) => writeAll(fd, new Uint8Array(fences.buffer)));
    renameSync(`${job.target}.fences.tmp`, `${job.target}.fences`);
    renameSync(`${job.target}.tmp`, job.target);
  } catch (err) {
    rmSync(`${job.target}.tmp`, { force: true });
    rmSync(`${job.target}.fences.tmp`, { force: true });
    throw err;
  }
  const dir = openSync(dirname(job.target), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
