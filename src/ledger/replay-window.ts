/**
 * The replay window: the receipt nodes appended in the last N minutes, newest `limit` of them, in
 * ledger order. The start is found by binary search over the nodes' ts_utc through the ledger's
 * own record reads (the bounded caches, or the store's records), so a request reads O(log n) nodes
 * to find it and at most `limit` + WINDOW_SLACK nodes to fill it, whatever the ledger's size.
 */
import type { LedgerNode } from './ledger.js';
import { RECEIPT_KIND } from './receipt.js';

/** What the window reads of the ledger: its size and one node by index. */
export interface NodeReader {
  readonly size: number;
  get(index: number): LedgerNode | undefined;
}

/** Nodes looked at before the binary search's answer: replicas' appends may be slightly out of time order. */
export const SCAN_BACK = 32;
/** Non-receipt nodes a window may read past beyond `limit` before it stops and says it is truncated. */
export const WINDOW_SLACK = 64;

export interface ReplayWindow {
  fromMs: number;
  toMs: number;
  /** Receipt nodes, oldest first. */
  nodes: LedgerNode[];
  /** Receipts of the window were left out (older than the newest `limit`, or past the read budget). */
  truncated: boolean;
  /** The ledger's size as read on entry: no node at or past it is included. */
  size: number;
  /** Nodes read in all (search included), for the tests of the bound. */
  reads: number;
}

function tsMs(n: LedgerNode): number {
  return Date.parse(n.tsUtc);
}

/**
 * The receipts with ts_utc in [nowMs − minutes, …] among the ledger's first `size` nodes, newest
 * `limit` of them. Reads nothing past `reader.size` as it was on entry.
 */
export function replayWindow(reader: NodeReader, minutes: number, limit: number, nowMs: number): ReplayWindow {
  const fromMs = nowMs - minutes * 60_000;
  const size = reader.size;
  let reads = 0;
  const read = (i: number): LedgerNode => {
    reads++;
    return reader.get(i)!;
  };
  // first index whose time is at or after the window's start (times are non-decreasing per writer)
  let lo = 0;
  let hi = size;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tsMs(read(mid)) < fromMs) lo = mid + 1;
    else hi = mid;
  }
  // in postgres mode replicas interleave their appends, so times are only nearly sorted: look a little further back
  let start = lo;
  for (let i = lo - 1; i >= Math.max(0, lo - SCAN_BACK); i--) if (tsMs(read(i)) >= fromMs) start = i;
  // newest first, within the read budget
  const picked: LedgerNode[] = [];
  const budget = limit + WINDOW_SLACK;
  let truncated = false;
  let i = size - 1;
  for (let looked = 0; i >= start; i--, looked++) {
    if (picked.length === limit || looked === budget) {
      truncated = hasReceiptAtOrAfter(reader, start, i, fromMs, () => reads++);
      break;
    }
    const n = read(i);
    if (n.kind === RECEIPT_KIND && tsMs(n) >= fromMs) picked.push(n);
  }
  return { fromMs, toMs: nowMs, nodes: picked.reverse(), truncated, size, reads };
}

/**
 * Whether a receipt of the window remains at or below index `i`: true as soon as one is found,
 * reading at most SCAN_BACK nodes (beyond that, the window is reported truncated without looking).
 */
function hasReceiptAtOrAfter(reader: NodeReader, start: number, i: number, fromMs: number, count: () => void): boolean {
  for (let k = i; k >= Math.max(start, i - SCAN_BACK + 1); k--) {
    count();
    const n = reader.get(k)!;
    if (n.kind === RECEIPT_KIND && tsMs(n) >= fromMs) return true;
  }
  return i - SCAN_BACK + 1 > start;
}
