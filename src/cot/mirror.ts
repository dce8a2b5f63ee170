/**
 * postgres mode: this replica's copy of the shared CoT ingest table (shared-store.ts), read by
 * export and status exactly as the in-process store is. Events are held in the table's storage
 * order (`stored_seq`), so every replica exports them in the same order. It never decides
 * anything: rows come from the table, and eviction is learnt from the smallest sequence still
 * stored (the table always evicts its oldest row, so every evicted row is older than every live one).
 */
import type { IngestView, StoredEvent } from './store.js';

export interface MirroredEvent extends StoredEvent {
  /** The table's `stored_seq`: when it was stored, across every replica. */
  seq: number;
}

export class IngestMirror implements IngestView {
  private byUid = new Map<string, MirroredEvent>();
  private totalBytes = 0;
  private validCount = 0;
  /** The table's sequence this copy is current with: every row stored up to it is reflected here. */
  private seenSeq = 0;

  get size(): number {
    return this.byUid.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  get valid(): number {
    return this.validCount;
  }

  get seq(): number {
    return this.seenSeq;
  }

  values(): IterableIterator<StoredEvent> {
    return this.byUid.values();
  }

  get(uid: string): StoredEvent | undefined {
    return this.byUid.get(uid);
  }

  list(): StoredEvent[] {
    return [...this.byUid.values()];
  }

  /** A row newer than every one held: it replaces its uid's event and goes last. */
  apply(ev: MirroredEvent): void {
    if (ev.seq <= this.seenSeq) return; // already reflected: applied twice it would move to the end
    this.remove(ev.uid);
    this.byUid.set(ev.uid, ev);
    this.totalBytes += ev.bytes ?? 0;
    if (ev.exported?.valid) this.validCount++;
    this.seenSeq = ev.seq;
  }

  /** Drops the events older than the oldest row the table still holds (null: it holds none). */
  evictBelow(minSeq: number | null): void {
    for (const e of this.byUid.values()) {
      if (minSeq !== null && e.seq >= minSeq) break;
      this.remove(e.uid);
    }
  }

  /** Current with the table up to `seq` (rows after the last one applied may have been evicted already). */
  caughtUpTo(seq: number): void {
    this.seenSeq = Math.max(this.seenSeq, seq);
  }

  /** Takes over another copy's contents at once (a reload), so no read ever sees a half-built copy. */
  adopt(other: IngestMirror): void {
    this.byUid = other.byUid;
    this.totalBytes = other.totalBytes;
    this.validCount = other.validCount;
    this.seenSeq = other.seenSeq;
    other.byUid = new Map();
  }

  private remove(uid: string): void {
    const e = this.byUid.get(uid);
    if (!e) return;
    this.byUid.delete(uid);
    this.totalBytes -= e.bytes ?? 0;
    if (e.exported?.valid) this.validCount--;
  }
}
