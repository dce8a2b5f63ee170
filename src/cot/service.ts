/**
 * The CoT feature's state and operations: the exported events (registered track sources, then
 * ingested events), ingest (parse → validate → store) and the live counts of the status document.
 * Every count is computed from the real export: each event is serialised, parsed back with the
 * ingest parser and validated, exactly as a consumer would receive it.
 */
import { Errors, fromServiceError, type ValidationIssue } from '../http/errors.js';
import { ServiceError } from '../lib/service-error.js';
import type { CotConfig } from './cot.config.js';
import { randomBytes } from 'node:crypto';
import { ingestedEvent, serialiseEvent, serialiseFragment, trackEvent, UID_PREFIX, XML_DECLARATION, type ExportEntry } from './export.js';
import { prepareCot, type CotPrepareInput, type PreparedCot } from '../lib/cot/prepare.js';
import { type IngestedEvent, type PutResult, type SharedIngestStore } from './shared-store.js';
import { IngestStore, type IngestView, type StoredEvent } from './store.js';
import type { Track, TrackRegistry } from './tracks.js';
import { validateCot, type CotIssue } from '../lib/cot/validate.js';
import { isElement, parseXml, XMLNS_URI, type XmlElement } from '../lib/cot/xml.js';
import { dateTimeMs } from '../lib/cot/xsd-lexical.js';
import { codePointLength } from '../lib/code-points.js';
import { API } from '../isomorphic/api.js';


const REJECTION_TYPE = { malformed: 'xml_invalid', doctype: 'xml_doctype_forbidden', limit: 'xml_limit_exceeded' } as const;

const bodyIssue = (type: string, msg: string, ctx: Record<string, unknown>): ValidationIssue => ({ type, loc: ['body'], msg, input: null, ctx });
const uidIssue = (type: string, msg: string, input: string, ctx?: Record<string, unknown>): ValidationIssue => ({ type, loc: ['body', 'event', '@uid'], msg, input, ...(ctx ? { ctx } : {}) });

/**
 * Characters a uid may not hold: controls (C0, DEL, C1), format characters (bidi overrides and
 * isolates, zero-width characters, the BOM) and line or paragraph separators. Each makes two uids
 * that print alike, or reorders or breaks the text a log or an operator's screen shows.
 */
const UID_FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** `U+202E` for a character, for a message that must not carry the character itself. */
const codePoint = (ch: string): string => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** Who sent an event: the write token's identity as the write guard names it, or null (no token). */
export type Producer = string | null;

function cotIssues(errors: CotIssue[]): ValidationIssue[] {
  return errors.map((e) => ({
    type: 'cot_invalid',
    loc: ['body', ...e.path.split('/').filter(Boolean)],
    msg: e.message,
    input: e.value ?? null,
    ctx: { code: e.code, path: e.path },
  }));
}

const attrMap = (el: XmlElement) => Object.fromEntries(el.attrs.filter((a) => a.uri !== XMLNS_URI).map((a) => [a.name, a.value]));

/** A detail subtree as JSON: `{name, attributes, text?, children?}`. */
function nodeJson(el: XmlElement): Record<string, unknown> {
  const text = el.children
    .filter((c) => !isElement(c))
    .map((c) => (c as { text: string }).text)
    .join('');
  const kids = el.children.filter(isElement);
  return { name: el.name, attributes: attrMap(el), ...(text.trim() ? { text } : {}), ...(kids.length ? { children: kids.map(nodeJson) } : {}) };
}

export class CotService {
  /** What export and status read: the process's own store, or the mirror of the shared one. */
  readonly store: IngestView;
  /** The process's own store (memory and file modes); null when the replicas share one. */
  private readonly local: IngestStore | null;

  /**
   * `prepare` runs the parse, validation and serialisation of an ingested body (prepare.ts): in a
   * kernel thread when the feature wires the pool, in this thread otherwise. `shared`: the store
   * every replica shares in postgres mode (shared-store.ts), which decides each ingest itself.
   */
  constructor(
    private readonly tracks: TrackRegistry,
    private readonly cfg: Readonly<CotConfig>,
    private readonly now: () => number = Date.now,
    private readonly prepare: (input: CotPrepareInput) => Promise<PreparedCot> = async (input) => prepareCot(input),
    private readonly shared: SharedIngestStore | null = null,
  ) {
    this.local = shared ? null : new IngestStore(cfg.maxStoredTracks, cfg.maxStoredBytes);
    this.store = shared?.view ?? this.local!;
  }

  private readonly storedListeners = new Set<(e: StoredEvent) => void>();

  /** Called with each event this process's ingest stored (the TAK relay); returns the unsubscribe. */
  onStored(listener: (e: StoredEvent) => void): () => void {
    this.storedListeners.add(listener);
    return () => this.storedListeners.delete(listener);
  }

  /** Unguessable per process: marks where the export time goes in a cached event. */
  private readonly marker = `svc-stamp-${randomBytes(12).toString('hex')}`;

  private sampleEvent(t: Track, nowMs: number): string {
    return serialiseFragment(trackEvent(t, nowMs, this.cfg.staleS));
  }

  /**
   * The export document in pieces, for a streamed response: sample tracks are serialised per
   * request (a handful), stored events are copied from the form cached at ingest. The store's byte
   * budget bounds the total, and no piece needs more than a copy.
   */
  *exportChunks(nowMs = this.now()): Generator<string> {
    const stamp = new Date(nowMs).toISOString();
    yield `${XML_DECLARATION}<events>`;
    for (const t of this.tracks.all()) yield this.sampleEvent(t, nowMs);
    for (const e of this.store.values()) yield this.storedFragment(e, stamp, nowMs);
    yield '</events>';
  }

  private storedFragment(e: StoredEvent, stamp: string, nowMs: number): string {
    return e.exported ? e.exported.head + stamp + e.exported.tail : serialiseFragment(ingestedEvent(e, nowMs));
  }

  /**
   * One `<event>` document: a sample track by its id or by the uid the export prints for it
   * (`svc-track-<id>`), or an ingested event by its uid. A map lookup, never the whole export.
   */
  exportOne(id: string, nowMs = this.now()): string | null {
    const sampleId = id.startsWith(UID_PREFIX) ? id.slice(UID_PREFIX.length) : id;
    const track = this.tracks.all().find((t) => t.id === sampleId);
    if (track) return XML_DECLARATION + this.sampleEvent(track, nowMs);
    const stored = this.store.get(id);
    return stored ? XML_DECLARATION + this.storedFragment(stored, new Date(nowMs).toISOString(), nowMs) : null;
  }

  /** Built once per request, so the single and multi exports are byte-identical for one clock. */
  entries(nowMs = this.now()): ExportEntry[] {
    const tracks = this.tracks.all().map((t) => ({ trackId: t.id, event: trackEvent(t, nowMs, this.cfg.staleS) }));
    const ingested = this.store.list().map((e) => ({ trackId: e.uid, event: ingestedEvent(e, nowMs) }));
    return [...tracks, ...ingested];
  }

  tracksTotal(): number {
    return this.tracks.all().length + this.store.size;
  }

  /** Sample tracks are checked per call (a handful); stored events were checked once, at ingest. */
  tracksCotValid(): number {
    const nowMs = this.now();
    const samples = this.tracks.all().filter((t) => {
      try {
        return validateCot(parseXml(serialiseEvent(trackEvent(t, nowMs, this.cfg.staleS)), this.cfg.limits), nowMs).valid;
      } catch {
        return false;
      }
    }).length;
    return samples + this.store.valid;
  }

  /** The uid is a name shown and matched as is: refused empty, or with characters that hide what it says. */
  private checkUid(uid: string): void {
    const { maxUidLen } = this.cfg.limits;
    if (codePointLength(uid) > maxUidLen) throw Errors.validation([bodyIssue('xml_limit_exceeded', `uid is longer than ${maxUidLen} characters`, { limit: 'maxUidLen', max: maxUidLen })]);
    if (/^[ \t\n\r]*$/.test(uid)) throw Errors.validation([uidIssue('cot_uid_invalid', 'uid must not be empty or only whitespace', uid)]);
    const bad = UID_FORBIDDEN.exec(uid);
    if (bad) {
      const cp = codePoint(bad[0]);
      throw Errors.validation([
        uidIssue('cot_uid_invalid', `uid must not contain control, format (bidi, zero-width) or separator characters: ${cp} at index ${bad.index}`, uid, { character: cp, index: bad.index }),
      ]);
    }
    if (uid.startsWith(UID_PREFIX)) {
      throw Errors.validation([uidIssue('cot_uid_reserved', `uids starting with '${UID_PREFIX}' name this service's own tracks`, uid)]);
    }
  }

  /**
   * `time` and `start` at most `maxFutureSkewS` ahead of the clock, `stale` at most `maxStaleAheadS`:
   * the store keeps the newest `time` per uid, so one event dated far ahead would refuse every
   * later real update of its uid. A time JavaScript cannot represent is refused too.
   */
  private checkTimes(a: Record<string, string>, nowMs: number): void {
    const issues: ValidationIssue[] = [];
    const bound = (name: string, aheadS: number, key: string) => {
      const raw = a[name]!;
      const ms = dateTimeMs(raw);
      if (ms <= nowMs + aheadS * 1000) return;
      const limitAt = new Date(nowMs + aheadS * 1000).toISOString();
      const msg = Number.isNaN(ms)
        ? `'${name}' is outside the range of dates the service can order`
        : `'${name}' is ${Math.round((ms - nowMs) / 1000)} s ahead of the service's clock: at most ${aheadS} s (cot.${key}) is accepted, so no later than ${limitAt}`;
      issues.push({ type: 'cot_time_out_of_range', loc: ['body', 'event', `@${name}`], msg, input: raw, ctx: { [key === 'maxFutureSkewS' ? 'max_future_skew_s' : 'max_stale_ahead_s']: aheadS, latest: limitAt } });
    };
    bound('time', this.cfg.maxFutureSkewS, 'maxFutureSkewS');
    bound('start', this.cfg.maxFutureSkewS, 'maxFutureSkewS');
    bound('stale', this.cfg.maxStaleAheadS, 'maxStaleAheadS');
    if (issues.length) throw Errors.validation(issues);
  }

  /**
   * The owner rule, then the store's: decided in this process (synchronously, so no other ingest
   * comes between the check and the store), or by the shared store in one database statement.
   */
  private put(ev: IngestedEvent): PutResult | Promise<PutResult> {
    if (this.local) {
      const owner = this.local.get(ev.uid)?.owner ?? null;
      if (owner !== null && owner !== ev.owner) return 'owned';
      return this.local.put(ev);
    }
    return this.shared!.put(ev).catch((err: unknown) => {
      if (err instanceof ServiceError) throw fromServiceError(err);
      throw err;
    });
  }

  /**
   * Parse, validate and store one event; throws AppError (415/422) without storing anything, or
   * 503 when the shared store cannot take it. `producer` is the write token's identity (null
   * without one): a uid first stored with a token is replaced only with that token; one stored
   * without a token may be replaced by anyone, and a token that replaces it takes it over.
   */
  async ingest(body: string, producer: Producer = null): Promise<Record<string, unknown>> {
    const nowMs = this.now();
    const prepared = await this.prepare({ body, limits: this.cfg.limits, nowMs, marker: this.marker });
    if (!prepared.ok) {
      if (prepared.kind === 'encoding') throw Errors.unsupportedMediaType(`XML encoding ${String(prepared.ctx.encoding)}`, ['UTF-8']);
      throw Errors.validation([bodyIssue(REJECTION_TYPE[prepared.kind], prepared.message, prepared.ctx)]);
    }
    const { root, validation, exported } = prepared;
    if (!validation.valid || !exported) throw Errors.validation(cotIssues(validation.errors));
    const a = attrMap(root);
    // `start` after `stale` is a warning like every other staleness observation (README), not a refusal
    const uid = a.uid!;
    this.checkUid(uid);
    this.checkTimes(a, nowMs);

    const bytes = Buffer.byteLength(exported.head) + Buffer.byteLength(exported.tail) + new Date(nowMs).toISOString().length;
    const stored: IngestedEvent = { uid, timeMs: dateTimeMs(a.time!), owner: producer, event: root, storedAt: new Date(nowMs).toISOString(), exported, bytes };
    const result = await this.put(stored);
    if (result === 'owned') {
      throw Errors.validation([uidIssue('cot_uid_owned', `uid '${uid}' was stored with another write token: only that token may replace it`, uid)]);
    }
    if (result.stored) for (const l of this.storedListeners) l(stored);
    const point = root.children.find((c) => isElement(c) && c.local === 'point') as XmlElement;
    const detail = root.children.find((c) => isElement(c) && c.local === 'detail') as XmlElement | undefined;
    const detailKids = detail?.children.filter(isElement) ?? [];
    const contact = detailKids.find((c) => c.local === 'contact');
    const p = attrMap(point);
    return {
      accepted: true,
      stored: result.stored,
      store_result: result.reason,
      evicted_uid: result.evicted,
      track_id: uid,
      export_path: `${API}/cot/export/${encodeURIComponent(uid)}`,
      uid,
      type: a.type,
      how: a.how,
      time: a.time,
      start: a.start,
      stale: a.stale,
      is_stale: dateTimeMs(a.stale!) < nowMs,
      point: Object.fromEntries(['lat', 'lon', 'hae', 'ce', 'le'].map((k) => [k, Number(p[k])])),
      callsign: contact ? (attrMap(contact).callsign ?? null) : null,
      detail_children: detailKids.map((c) => c.name),
      event: { attributes: a, point: p, detail: detail ? nodeJson(detail) : null },
      validation,
    };
  }
}
