/**
 * Ingested events, one per uid, bounded. CoT semantics: the latest event for a uid (by `time`)
 * replaces earlier ones; an older or equal one is acknowledged but not stored. Beyond the cap the
 * least recently stored uid is evicted (tracks age out; refusing new ones would freeze the picture).
 */
import type { XmlElement } from './xml.js';

export interface StoredEvent {
  uid: string;
  /** Epoch ms of `time` (NaN if JavaScript cannot represent it). */
  timeMs: number;
  /** The parsed `<event>` element, kept whole so the export can round-trip it. */
  event: XmlElement;
  storedAt: string;
}

export type StoreResult = { stored: true; reason: 'new' | 'replaced_older'; evicted: string | null } | { stored: false; reason: 'not_newer_than_stored'; evicted: null };

export class IngestStore {
  private readonly byUid = new Map<string, StoredEvent>();

  constructor(readonly max: number) {}

  get size(): number {
    return this.byUid.size;
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
    if (prior) this.byUid.delete(ev.uid);
    else if (this.byUid.size >= this.max) {
      evicted = this.byUid.keys().next().value ?? null;
      if (evicted !== null) this.byUid.delete(evicted);
    }
    this.byUid.set(ev.uid, ev);
    return { stored: true, reason: prior ? 'replaced_older' : 'new', evicted };
  }
}
