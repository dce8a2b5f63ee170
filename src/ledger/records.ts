/**
 * Where the ledger reads whole receipts (payload, signature, keyid, time, simulated flag) by index.
 * The tiles hold only digests; receipts stay in the store's own append-only records: the packed
 * table in memory (memory and postgres modes, capped), or the lines of khipu.jsonl in file mode,
 * found through a column of line end offsets and read back with one positioned read.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { Column } from './tlog/column.js';
import type { LedgerNode } from './ledger.js';
import { NodeTable } from './node-table.js';

export interface RecordSource {
  get(index: number): LedgerNode | undefined;
  /** Every node the ledger applies, in order. */
  remember(node: LedgerNode): void;
  close(): void;
}

export class MemoryRecords implements RecordSource {
  private readonly table = new NodeTable();

  get(index: number): LedgerNode | undefined {
    return this.table.get(index);
  }

  remember(node: LedgerNode): void {
    this.table.push(node);
  }

  close(): void {}
}

/** Recent nodes stay parsed: the stream's backfill, the mesh view and verdict answers read them. */
const RECENT = 4096;

export class FileRecords implements RecordSource {
  private fd: number | null = null;
  private readonly recent = new Map<number, LedgerNode>();

  /**
   * @param ends   byte offset of the end of each node's line (8-byte big-endian items)
   * @param parse  parses and checks a line against the digest of the node before it
   */
  constructor(
    private readonly path: string,
    private readonly ends: Column,
    private readonly headerEnd: () => number,
    private readonly parse: (text: string, index: number) => LedgerNode | string,
  ) {}

  get(index: number): LedgerNode | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.ends.length) return undefined;
    const hit = this.recent.get(index);
    if (hit) return hit;
    const bounds = this.ends.read(index === 0 ? 0 : index - 1, index === 0 ? 1 : 2);
    const start = index === 0 ? this.headerEnd() : Number(bounds.readBigUInt64BE(0));
    const end = Number(bounds.readBigUInt64BE(index === 0 ? 0 : 8));
    this.fd ??= openSync(this.path, 'r');
    const buf = Buffer.allocUnsafe(end - start);
    let got = 0;
    while (got < buf.length) {
      const r = readSync(this.fd, buf, got, buf.length - got, start + got);
      if (r === 0) break;
      got += r;
    }
    const node = this.parse(buf.toString('utf8', 0, got), index);
    if (typeof node === 'string') throw new Error(`ledger record ${index} is damaged: ${node}`);
    return node;
  }

  remember(node: LedgerNode): void {
    this.recent.set(node.index, node);
    if (this.recent.size > RECENT) this.recent.delete(this.recent.keys().next().value!);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
