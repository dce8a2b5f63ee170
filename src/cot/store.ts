/**
 * Ingested events, one per uid, bounded. CoT semantics: the latest event for a uid (by `time`)
 * replaces earlier ones; an older or equal one is acknowledged but not stored. Beyond the cap the
 * least recently stored uid is evicted (tracks age out; refusing new ones would freeze the picture).
 */
import type { XmlElement } from '../lib/cot/xml.js';

export interface StoredEvent {
  uid: string;
  /** Epoch ms of `time` (NaN if JavaScript cannot represent it; ingest refuses such a time). */
  timeMs: number;
  /** The write token's identity it was stored with, or null (stored without a token: anyone may replace it). */
  owner?: string | null;
  /** The parsed `<event>` element, kept whole so the export can round-trip it. */
  event: XmlElement;
  storedAt: string;
  /** The exported form, serialised once at ingest around the `_flow-tags_` stamp (export is then a copy). */
  exported?: { head: string; tail: string; valid: boolean };
  /** UTF-8 bytes of the exported form: counted against the store's byte budget. */
  bytes?: number;
}

export type StoreResult = { stored: true; reason: 'new' | 'replaced_older'; evicted: string | null } | { stored: false; reason: 'not_newer_than_stored'; evicted: null };

/** What export and status read: this process's store, or in postgres mode its mirror of the shared table (mirror.ts). */
export interface IngestView {
  readonly size: number;
  readonly bytes: number;
  readonly valid: number;
  values(): IterableIterator<StoredEvent>;
  get(uid: string): StoredEvent | undefined;
  list(): StoredEvent[];
}

export class IngestStore implements IngestView {
  private readonly byUid = new Map<string, StoredEvent>();
  private totalBytes = 0;
  private validCount = 0;

  /** `maxBytes` bounds the stored events' total size: heavy events evict old ones, so export and status stay bounded. */
  constructor(
    readonly max: number,
    readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.byUid.size;
  }

  /** Bytes of the stored events' exported forms. */
  get bytes(): number {
    return this.totalBytes;
  }

  /** Stored events whose exported form is CoT-valid (kept up to date on every put and eviction). */
  get valid(): number {
    return this.validCount;
  }

  private remove(uid: string): void {
    const e = this.byUid.get(uid);
    if (!e) return;
    this.byUid.delete(uid);
    this.totalBytes -= e.bytes ?? 0;
    if (e.exported?.valid) this.validCount--;
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

  put(ev: StoredEvent): StoreResult {
    const prior = this.byUid.get(ev.uid);
    if (prior && !(ev.timeMs > prior.timeMs || (Number.isNaN(prior.timeMs) && !Number.isNaN(ev.timeMs)))) {
      return { stored: false, reason: 'not_newer_than_stored', evicted: null };
    }
    let evicted: string | null = null;
    if (prior) this.remove(ev.uid);
    const bytes = ev.bytes ?? 0;
    while (this.byUid.size > 0 && (this.byUid.size >= this.max || this.totalBytes + bytes > this.maxBytes)) {
      const oldest = this.byUid.keys().next().value!;
      evicted ??= oldest;
      this.remove(oldest);
    }
    this.byUid.set(ev.uid, ev);
    this.totalBytes += bytes;
    if (ev.exported?.valid) this.validCount++;
    return { stored: true, reason: prior ? 'replaced_older' : 'new', evicted };
  }
}
