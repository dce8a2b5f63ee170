/**
 * The ledger's RFC 6962 Merkle tree kept as C2SP tlog-tiles: one column per tile level (level 0 the
 * leaf hashes, level L the hashes of the tree nodes of height 8·L, so tile N of level L is items
 * [256·N, 256·N + 256) of column L) and a column of entry-bundle records (uint16 length ‖ entry).
 * In memory it keeps only the right edge of the tree (one hash per set bit of the size) and small
 * caches: appends cost O(1) amortised, roots, inclusion and consistency proofs O(log n) tile reads.
 * Beside each level, a derived column holds the interior of every full tile (its subtrees of
 * heights between tile levels), written once when the tile fills: a proof then reads the hashes
 * it needs instead of hashing up to 254 pairs for each tile it crosses.
 */
import { EMPTY_ROOT, leafHash, nodeHash, splitPoint } from '../../lib/merkle.js';
import { RecentMemo } from '../../lib/memo.js';
import { HASH_SIZE, levelCount, TILE_HEIGHT, TILE_WIDTH } from '../../lib/tlog-tiles.js';
import { MemoryColumn, type Column } from './column.js';

/** Entry-bundle records are a 2-byte big-endian length and the 32-byte entry (a node digest). */
export const ENTRY_RECORD = 2 + HASH_SIZE;

/** Rows 1..7 of a tile's interior: 128 + 64 + … + 2 hashes. */
export const INTERIOR_HASHES = 254;

export interface TileColumns {
  /** The column of tile level `level`, created on first use. */
  level(level: number): Column;
  /** The interiors of the full tiles of `level`, INTERIOR_HASHES hashes each, created on first use. */
  interior(level: number): Column;
  entries: Column;
}

/** Every column in process memory. */
export function memoryTileColumns(): TileColumns {
  const levels: Column[] = [];
  const interiors: Column[] = [];
  return { level: (l) => (levels[l] ??= new MemoryColumn(HASH_SIZE)), interior: (l) => (interiors[l] ??= new MemoryColumn(HASH_SIZE)), entries: new MemoryColumn(ENTRY_RECORD) };
}

export class TileLog {
  /** Perfect subtrees along the right edge, largest first: [height, hash]. */
  private edge: [number, Buffer][] = [];
  private cachedRoot: Buffer | null = null;
  /** MTH(D[lo:size]) by lo for the current size: the proofs of one group commit share them. */
  private edgeRanges = new Map<number, Buffer>();
  /**
   * Recently used tile interiors (8 KiB each): a proof needs one or two hashes of each row of every
   * tile it crosses, and the upper tiles are crossed by every proof. A full tile's interior is read
   * from its column in one read; the partial tile on the right edge is hashed once per width.
   */
  private interiors = new RecentMemo<Buffer>(1024, 48);

  constructor(private readonly columns: TileColumns) {}

  get size(): number {
    return this.columns.level(0).length;
  }

  /**
   * Cuts every column back to a tree of `size` leaves (derived data written after the last synced
   * checkpoint) and rebuilds the right edge from stored hashes: O(log n) reads.
   */
  resume(size: number): void {
    for (let level = 0; this.columns.level(level).length > 0 || level === 0; level++) {
      this.columns.level(level).truncate(levelCount(size, level));
      this.columns.interior(level).truncate(Math.floor(levelCount(size, level) / TILE_WIDTH) * INTERIOR_HASHES);
    }
    this.columns.entries.truncate(size);
    if (this.columns.level(0).length !== size || this.columns.entries.length !== size) throw new Error(`tiles hold ${this.columns.level(0).length} leaves and ${this.columns.entries.length} entries, not ${size}`);
    this.edge = [];
    this.interiors = new RecentMemo<Buffer>(1024, 48);
    let lo = 0;
    for (let h = 52; h >= 0; h--) {
      if (size >= lo + 2 ** h && Math.floor(size / 2 ** h) % 2 === 1) {
        this.edge.push([h, this.perfect(h, lo / 2 ** h)]);
        lo += 2 ** h;
      }
    }
    // interiors missing after a crash, or all of them in a log written before they were kept
    for (let level = 0; this.columns.level(level).length > 0; level++) this.fillInteriors(level);
    this.grown();
  }

  /** Appends entries (32-byte node digests) in order. */
  append(entries: readonly Uint8Array[]): void {
    if (entries.length === 0) return;
    const records = Buffer.allocUnsafe(entries.length * ENTRY_RECORD);
    const leaves = Buffer.allocUnsafe(entries.length * HASH_SIZE);
    const upper = new Map<number, Buffer[]>();
    entries.forEach((e, k) => {
      records.writeUInt16BE(HASH_SIZE, k * ENTRY_RECORD);
      records.set(e, k * ENTRY_RECORD + 2);
      let h = leafHash(e);
      leaves.set(h, k * HASH_SIZE);
      let height = 0;
      // a completed pair of equal subtrees becomes one of the next height; every 8th height is a tile level
      while (this.edge.length && this.edge.at(-1)![0] === height) {
        h = nodeHash(this.edge.pop()![1], h);
        height++;
        if (height % TILE_HEIGHT === 0) {
          const list = upper.get(height / TILE_HEIGHT) ?? [];
          list.push(h);
          upper.set(height / TILE_HEIGHT, list);
        }
      }
      this.edge.push([height, h]);
    });
    this.columns.entries.append(records);
    this.columns.level(0).append(leaves);
    for (const level of [...upper.keys()].sort((a, b) => a - b)) this.columns.level(level).append(Buffer.concat(upper.get(level)!));
    for (let level = 0; level === 0 || upper.has(level); level++) this.fillInteriors(level);
    this.grown();
  }

  /** Writes the interior of every full tile of `level` that has none yet, in order. */
  private fillInteriors(level: number): void {
    const hashes = this.columns.level(level);
    const interior = this.columns.interior(level);
    const full = Math.floor(hashes.length / TILE_WIDTH);
    // a tile whose interior was cut short by a crash is written again whole
    interior.truncate(Math.floor(interior.length / INTERIOR_HASHES) * INTERIOR_HASHES);
    for (let tile = interior.length / INTERIOR_HASHES; tile < full; tile++) interior.append(tileInterior(hashes.read(tile * TILE_WIDTH, TILE_WIDTH)));
  }

  private grown(): void {
    this.cachedRoot = null;
    this.edgeRanges = new Map();
  }

  /** The entry (node digest) at `index`. */
  entry(index: number): Buffer {
    return this.columns.entries.read(index, 1).subarray(2);
  }

  /** `n` entry-bundle records from `from` (the bytes of an entry bundle). */
  entryRecords(from: number, n: number): Buffer {
    return this.columns.entries.read(from, n);
  }

  /** `n` hashes of tile level `level` from `from` (the bytes of a hash tile). */
  levelHashes(level: number, from: number, n: number): Buffer {
    return this.columns.level(level).read(from, n);
  }

  /** Hashes stored at `level` now. */
  levelLength(level: number): number {
    return this.columns.level(level).length;
  }

  /** The leaf hash at `index`. */
  leaf(index: number): Buffer {
    return this.columns.level(0).read(index, 1);
  }

  /** The hash of the complete subtree of height `h` whose leaves start at k·2^h. */
  perfect(h: number, k: number): Buffer {
    const level = Math.floor(h / TILE_HEIGHT);
    const r = h % TILE_HEIGHT;
    if (r === 0) {
      if (level === 0) return this.columns.level(0).read(k, 1);
      // upper tiles are few and crossed by every proof: read whole and kept
      const tile = Math.floor(k / TILE_WIDTH);
      const width = Math.min(TILE_WIDTH, this.columns.level(level).length - tile * TILE_WIDTH);
      const hashes = this.interiors.get(`${level}/${tile}/${width}/hashes`, () => this.columns.level(level).read(tile * TILE_WIDTH, width));
      return hashes.subarray((k % TILE_WIDTH) * HASH_SIZE, (k % TILE_WIDTH + 1) * HASH_SIZE);
    }
    // the subtree lies in one tile of its level: its row r holds 256 / 2^r subtrees
    const tile = Math.floor((k << r) / TILE_WIDTH);
    const stored = this.columns.interior(level);
    const width = Math.min(TILE_WIDTH, this.columns.level(level).length - tile * TILE_WIDTH);
    const rows = this.interiors.get(`${level}/${tile}/${width}`, () =>
      (tile + 1) * INTERIOR_HASHES <= stored.length ? stored.read(tile * INTERIOR_HASHES, INTERIOR_HASHES) : tileInterior(this.columns.level(level).read(tile * TILE_WIDTH, width)),
    );
    const at = ROW_START[r]! + (k - tile * (TILE_WIDTH >> r));
    return rows.subarray(at * HASH_SIZE, (at + 1) * HASH_SIZE);
  }

  /** MTH(D[lo:hi]) for hi ≤ size. */
  rangeHash(lo: number, hi: number): Buffer {
    const n = hi - lo;
    if (n === 0) return EMPTY_ROOT;
    if ((n & (n - 1)) === 0 && lo % n === 0) return this.perfect(Math.log2(n), lo / n);
    const onEdge = hi === this.size;
    if (onEdge) {
      const known = this.edgeRanges.get(lo);
      if (known) return known;
    }
    const k = splitPoint(n);
    const hash = nodeHash(this.rangeHash(lo, lo + k), this.rangeHash(lo + k, hi));
    if (onEdge) this.edgeRanges.set(lo, hash);
    return hash;
  }

  root(size = this.size): Buffer {
    if (size > this.size || size < 0) throw new RangeError(`no tree of size ${size} in a log of ${this.size}`);
    if (size !== this.size) return this.rangeHash(0, size);
    if (!this.cachedRoot) {
      // the right edge folded from the smallest subtree up
      let h: Buffer | null = null;
      for (let i = this.edge.length - 1; i >= 0; i--) h = h ? nodeHash(this.edge[i]![1], h) : this.edge[i]![1];
      this.cachedRoot = h ?? EMPTY_ROOT;
    }
    return this.cachedRoot;
  }

  /** Audit path for leaf `index` in the tree of the first `size` leaves (RFC 9162 §2.1.3.1). */
  inclusionProof(index: number, size = this.size): Buffer[] {
    if (index < 0 || index >= size || size > this.size) throw new RangeError(`leaf ${index} outside tree of size ${size}`);
    const path: Buffer[] = [];
    const walk = (m: number, lo: number, hi: number): void => {
      const n = hi - lo;
      if (n === 1) return;
      const k = splitPoint(n);
      if (m < k) {
        walk(m, lo, lo + k);
        path.push(this.rangeHash(lo + k, hi));
      } else {
        walk(m - k, lo + k, hi);
        path.push(this.rangeHash(lo, lo + k));
      }
    };
    walk(index, 0, size);
    return path;
  }

  /** Proof that the tree of size `m` is a prefix of the tree of size `n` (RFC 9162 §2.1.4.1). */
  consistencyProof(m: number, n = this.size): Buffer[] {
    if (m < 1 || m > n || n > this.size) throw new RangeError(`sizes ${m} -> ${n} invalid for a tree of ${this.size}`);
    const path: Buffer[] = [];
    const sub = (mm: number, lo: number, hi: number, complete: boolean): void => {
      const len = hi - lo;
      if (mm === len) {
        if (!complete) path.push(this.rangeHash(lo, hi));
        return;
      }
      const k = splitPoint(len);
      if (mm <= k) {
        sub(mm, lo, lo + k, complete);
        path.push(this.rangeHash(lo + k, hi));
      } else {
        sub(mm - k, lo + k, hi, false);
        path.push(this.rangeHash(lo, lo + k));
      }
    };
    sub(m, 0, n, true);
    return path;
  }

  /** Every column durable up to now (before a checkpoint that names this size is persisted). */
  async sync(): Promise<void> {
    const all: Promise<void>[] = [this.columns.entries.sync()];
    for (let level = 0; level === 0 || this.columns.level(level).length > 0; level++) all.push(this.columns.level(level).sync(), this.columns.interior(level).sync());
    await Promise.all(all);
  }
}

/** Where row r (1..7) of a tile's interior starts, in hashes: rows of 128, 64, …, 2. */
const ROW_START = [0, 0, 128, 192, 224, 240, 248, 252];

/** Rows 1..7 of the interior of a tile of `hashes` (its complete pairs only, for a partial tile). */
export function tileInterior(hashes: Buffer): Buffer {
  const out = Buffer.alloc(INTERIOR_HASHES * HASH_SIZE);
  let row = hashes;
  for (let r = 1; r < TILE_HEIGHT; r++) {
    const n = Math.floor(row.length / HASH_SIZE / 2);
    const next = Buffer.allocUnsafe(n * HASH_SIZE);
    for (let i = 0; i < n; i++) nodeHash(row.subarray(2 * i * HASH_SIZE, (2 * i + 1) * HASH_SIZE), row.subarray((2 * i + 1) * HASH_SIZE, (2 * i + 2) * HASH_SIZE)).copy(next, i * HASH_SIZE);
    next.copy(out, ROW_START[r]! * HASH_SIZE);
    row = next;
  }
  return out;
}

export { TILE_WIDTH };
