/**
 * The verdict stream client: one EventSource per page, the named `verdict` event, ids are ledger
 * indices (duplicates dropped, gaps counted). The browser reconnects by itself after a dropped
 * socket; a non-200 answer (the 503 of the viewer cap) closes the EventSource for good, so then
 * this client re-creates it with exponential backoff and `?last_event_id=`. A hidden page
 * disconnects (the server runs the simulated flight only while somebody watches) and resumes from
 * the last id when visible again.
 */

export type SseState = 'connecting' | 'live' | 'reconnecting' | 'backoff' | 'paused' | 'stopped';

export interface StreamStatus {
  state: SseState;
  /** Connections opened so far (first one included). */
  opens: number;
  /** Consecutive failed attempts (reset by a successful open). */
  attempts: number;
  nextRetryMs: number | null;
  lastId: number | null;
  lastEventAt: number | null;
  gaps: number;
  duplicates: number;
  resets: number;
}

export interface VerdictStreamOptions {
  url: string;
  onEvents(batch: unknown[]): void;
  onStatus(s: StreamStatus): void;
  baseDelayMs?: number;
  maxDelayMs?: number;
}

export class VerdictStream {
  private es: EventSource | null = null;
  private timer: number | null = null;
  private wanted = false;
  readonly status: StreamStatus = { state: 'stopped', opens: 0, attempts: 0, nextRetryMs: null, lastId: null, lastEventAt: null, gaps: 0, duplicates: 0, resets: 0 };

  constructor(private readonly opts: VerdictStreamOptions) {
    document.addEventListener('visibilitychange', () => {
      if (!this.wanted) return;
      if (document.hidden) this.pause();
      else this.open();
    });
    window.addEventListener('pagehide', () => this.close());
  }

  private set(state: SseState, patch: Partial<StreamStatus> = {}): void {
    Object.assign(this.status, { state }, patch);
    this.opts.onStatus(this.status);
  }

  /** Follow the stream (now, or when the page becomes visible). */
  start(): void {
    this.wanted = true;
    this.open();
  }

  private open(): void {
    if (this.es || this.timer !== null || document.hidden) return;
    const url = this.status.lastId === null ? this.opts.url : `${this.opts.url}?last_event_id=${this.status.lastId}`;
    const es = new EventSource(url);
    this.es = es;
    this.status.opens++;
    this.set('connecting');
    es.onopen = () => this.set('live', { attempts: 0, nextRetryMs: null });
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) this.backoff();
      else this.set('reconnecting');
    };
    es.addEventListener('verdict', (e) => {
      const id = Number((e as MessageEvent).lastEventId);
      const last = this.status.lastId;
      if (Number.isInteger(id) && last !== null && id <= last) {
        this.status.duplicates++;
        return;
      }
      if (Number.isInteger(id) && last !== null && id > last + 1) this.status.gaps++;
      if (Number.isInteger(id)) this.status.lastId = id;
      this.status.lastEventAt = Date.now();
      try {
        this.opts.onEvents([JSON.parse((e as MessageEvent).data as string)]);
      } catch {
        // a malformed event is skipped; the next one carries the full state again
      }
    });
    es.addEventListener('reset', () => {
      this.status.resets++;
    });
  }

  private backoff(): void {
    this.es?.close();
    this.es = null;
    const base = this.opts.baseDelayMs ?? 1000;
    const delay = Math.min(this.opts.maxDelayMs ?? 30_000, base * 2 ** this.status.attempts) * (0.75 + Math.random() * 0.5);
    this.set('backoff', { attempts: this.status.attempts + 1, nextRetryMs: Math.round(delay) });
    this.timer = window.setTimeout(() => {
      this.timer = null;
      this.open();
    }, delay);
  }

  pause(): void {
    this.close();
    this.set('paused');
  }

  stop(): void {
    this.wanted = false;
    this.close();
    this.set('stopped');
  }

  private close(): void {
    this.es?.close();
    this.es = null;
    if (this.timer !== null) window.clearTimeout(this.timer);
    this.timer = null;
  }
}
