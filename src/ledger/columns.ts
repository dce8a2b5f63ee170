/**
 * Packed, append-only storage for the ledger mirror. A 32-byte Buffer costs about 100 bytes of
 * object and backing-store overhead on top of its contents, and a ledger node held five of them
 * plus a Merkle tree of them; here hashes and byte strings live in 1 MiB slabs and are handed out
 * as views, so a node costs little more than its bytes (≤ 1 KB per node held in memory).
 */

const SLAB = 1 << 20;

/** Fixed-width 32-byte hashes, indexed. */
export class HashColumn {
  private static readonly PER_SLAB = SLAB / 32;
  private readonly slabs: Buffer[] = [];
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(hash: Uint8Array): void {
    const slot = this.count % HashColumn.PER_SLAB;
    if (slot === 0) this.slabs.push(Buffer.allocUnsafeSlow(SLAB));
    this.slabs[this.slabs.length - 1]!.set(hash.subarray(0, 32), slot * 32);
    this.count++;
  }

  /** A view of hash `i` (no copy); valid for the life of the column. */
  get(i: number): Buffer {
    const slab = this.slabs[Math.floor(i / HashColumn.PER_SLAB)]!;
    const at = (i % HashColumn.PER_SLAB) * 32;
    return slab.subarray(at, at + 32);
  }
}

/** Variable-length byte strings appended to slabs; `add` returns where they went. */
export class ByteArena {
  private readonly slabs: Buffer[] = [];
  private used = 0;

  /** Stores the byte strings back to back in one slab; returns where the first begins. */
  add(...parts: Uint8Array[]): { slab: number; offset: number } {
    let length = 0;
    for (const p of parts) length += p.byteLength;
    if (this.used + length > (this.slabs.at(-1)?.length ?? 0)) {
      // a string larger than a slab gets one of its own size
      this.slabs.push(Buffer.allocUnsafeSlow(Math.max(SLAB, length)));
      this.used = 0;
    }
    const at = { slab: this.slabs.length - 1, offset: this.used };
    const slab = this.slabs[at.slab]!;
    for (const p of parts) {
      slab.set(p, this.used);
      this.used += p.byteLength;
    }
    return at;
  }

  view(slab: number, offset: number, length: number): Buffer {
    return this.slabs[slab]!.subarray(offset, offset + length);
  }
}

/** A growable typed array of unsigned 32-bit integers. */
export class U32Column {
  private data = new Uint32Array(1024);
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(v: number): void {
    if (this.count === this.data.length) {
      const bigger = new Uint32Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.count++] = v;
  }

  get(i: number): number {
    return this.data[i]!;
  }
}

/** Small-cardinality strings (kinds, keyids) stored once and referred to by number. */
export class Interner {
  private readonly ids = new Map<string, number>();
  private readonly values: string[] = [];

  id(value: string): number {
    let id = this.ids.get(value);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(value);
      this.ids.set(value, id);
    }
    return id;
  }

  value(id: number): string {
    return this.values[id]!;
  }
}
