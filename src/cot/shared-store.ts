/**
 * postgres mode: the CoT ingest store in the database every replica shares (shared-schema.ts),
 * with the same semantics as the in-process IngestStore: newest `time` per uid wins, the owner
 * rule, the count cap and the byte budget, least recently stored evicted first.
 *
 * Ingest: one statement (`cot_put`) decides and stores under the lock on the `cot_store` row, so
 * two replicas racing on a uid are decided one after the other; the answer is given once the
 * statement committed and this replica's mirror holds the outcome.
 *
 * Export and status read the mirror (mirror.ts), kept current from the table: `NOTIFY cot`
 * carries only the new sequence, and every replica catches up on a notification, after a
 * reconnect, and every second as a safety net, as the ledger does.
 *
 * Database down or hung: ingest is refused with IngestUnavailableError (503 + Retry-After) while a
 * probe retries with a capped doubling backoff; export and status keep serving the mirror, and
 * ingest resumes by itself once the probe gets through. Every query has a client-side bound too,
 * so a server that accepts bytes and never answers counts as down.
 */
import { Socket } from 'node:net';
import pg from 'pg';
import type { ExportedForm } from '../lib/cot/prepare.js';
import type { XmlElement } from '../lib/cot/xml.js';
import { IngestMirror, type MirroredEvent } from './mirror.js';
import { COT_CHANNEL, migrateCot } from './shared-schema.js';
import type { StoredEvent, StoreResult } from './store.js';
import { isConnectionError, reconnectDelayMs } from '../lib/pg-reconnect.js';
import { ServiceError } from '../lib/service-error.js';

export interface SharedIngestOptions {
  url: string;
  /** Names this process in the rows it writes. */
  replicaId: string;
  maxStored: number;
  maxBytes: number;
  retryAfterS: number;
  /** statement_timeout and lock_timeout, in ms (server side). */
  statementTimeoutMs: number;
  /** The longest the client waits for any answer, in ms; above statementTimeoutMs. */
  queryTimeoutMs: number;
  /** The longest a new connection may take, and a pooled one may be waited for, in ms. */
  connectTimeoutMs: number;
  /** The safety-net catch-up poll, in ms. */
  pollMs?: number;
  recoveryBaseMs?: number;
  recoveryMaxMs?: number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** What an ingest decided: stored or not (the in-process store's result), or refused: another token owns the uid. */
export type PutResult = StoreResult | 'owned';

/** An event as ingest stores it: its exported form is always there. */
export type IngestedEvent = StoredEvent & { exported: ExportedForm; bytes: number };

/** The database cannot take an ingest now; the client may retry after `retryAfterS`. */
export class IngestUnavailableError extends ServiceError {
  readonly code = 'SVC_INGEST_UNAVAILABLE';

  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

const PAGE = 500;
/**
 * At close, connections still not ended after this are cut: a hung server never acknowledges a
 * goodbye. Short, since nothing is left to flush (every ingest is one statement, answered before
 * its request ended) and the ledger's store closes within the same shutdown margin.
 */
const CLOSE_GRACE_MS = 100;
const COLUMNS = 'uid, time_ms, owner, event, head, tail, valid, bytes, stored_seq, stored_at';
const PUT_SQL = 'SELECT put_result, put_evicted, put_seq FROM cot_put($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)';

interface EventRow {
  uid: string;
  time_ms: string;
  owner: string | null;
  event: string;
  head: string;
  tail: string;
  valid: boolean;
  bytes: number;
  stored_seq: string;
  stored_at: string;
}

interface HeadRow {
  seq: string;
  count: number;
  bytes: string;
  min_seq: string | null;
}

interface PutRow {
  put_result: 'owned' | 'not_newer_than_stored' | 'new' | 'replaced_older';
  put_evicted: string | null;
  put_seq: string;
}

function rowToEvent(r: EventRow): MirroredEvent {
  return {
    uid: r.uid,
    timeMs: Number(r.time_ms),
    owner: r.owner,
    event: JSON.parse(r.event) as XmlElement,
    storedAt: r.stored_at,
    exported: { head: r.head, tail: r.tail, valid: r.valid },
    bytes: r.bytes,
    seq: Number(r.stored_seq),
  };
}

function putResult(r: PutRow): PutResult {
  if (r.put_result === 'owned') return 'owned';
  if (r.put_result === 'not_newer_than_stored') return { stored: false, reason: 'not_newer_than_stored', evicted: null };
  return { stored: true, reason: r.put_result, evicted: r.put_evicted };
}

export class SharedIngestStore {
  /** What export and status read. */
  readonly view = new IngestMirror();
  private readonly pool: pg.Pool;
  private readonly sockets = new Set<Socket>();
  private state: 'READY' | 'UNAVAILABLE' = 'READY';
  private lastError: string | null = null;
  private attempts = 0;
  private retryAt = 0;
  private probing = false;
  private closed = false;
  private catching: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** False once a reload still disagreed with the stored totals (warned once, not reloaded every second). */
  private totalsTrusted = true;
  private listenClient: pg.Client | null = null;
  private listenAttempts = 0;
  private poll: NodeJS.Timeout | null = null;

  private constructor(private readonly opts: SharedIngestOptions) {
    this.pool = new pg.Pool({
      ...this.clientConfig(),
      max: 3,
      statement_timeout: opts.statementTimeoutMs,
      lock_timeout: opts.statementTimeoutMs,
      idle_in_transaction_session_timeout: opts.statementTimeoutMs * 2,
      application_name: `svc-cot ${opts.replicaId}`.slice(0, 63),
    });
    // an idle client whose server went away emits here; without a listener the process dies
    this.pool.on('error', (err) => this.fail(err));
  }

  /** Creates the schema (idempotent), loads the table into the mirror and starts listening. */
  static async open(opts: SharedIngestOptions): Promise<SharedIngestStore> {
    const store = new SharedIngestStore(opts);
    try {
      await store.withClient((c) => migrateCot(c));
      // listening first: nothing committed after the load can go unrung
      await store.listen();
      await store.catchUp();
    } catch (err) {
      await store.close();
      throw new Error(`cot: cannot open the shared ingest store at ${redacted(opts.url)} (SVC_DATABASE_URL): ${(err as Error).message}`, { cause: err });
    }
    store.poll = setInterval(() => {
      if (store.state === 'READY') void store.sync();
    }, opts.pollMs ?? 1000);
    store.poll.unref();
    return store;
  }

  /**
   * Decides and stores one event in the shared table (one statement), then waits until the mirror
   * holds the outcome, so this replica's export agrees with its answer.
   */
  async put(ev: IngestedEvent): Promise<PutResult> {
    if (this.closed || this.state !== 'READY') throw this.refusal();
    const params = [ev.uid, ev.timeMs, ev.owner ?? null, JSON.stringify(ev.event), ev.exported.head, ev.exported.tail, ev.exported.valid, ev.bytes, ev.storedAt, this.opts.replicaId, this.opts.maxStored, this.opts.maxBytes];
    let row: PutRow;
    try {
      row = await this.withClient(async (c) => (await c.query<PutRow>(PUT_SQL, params)).rows[0]!);
    } catch (err) {
      // an answer lost after the statement was sent may hide a stored event: a retry is then acknowledged as not newer
      if (isConnectionError(err)) {
        this.fail(err as Error);
        throw this.refusal();
      }
      this.opts.log?.warn({ err: (err as Error).message, code: (err as { code?: string }).code }, 'CoT ingest refused by the database');
      throw new IngestUnavailableError(`CoT ingest refused by the database: ${(err as Error).message}`, this.opts.retryAfterS);
    }
    await this.mirrorAt(Number(row.put_seq));
    return putResult(row);
  }

  /** The mirror brought up to date; failures are recorded (an outage), never thrown. */
  sync(): Promise<void> {
    return this.catchUp().catch((err: unknown) => {
      if (this.closed) return;
      if (isConnectionError(err)) this.fail(err as Error);
      else this.opts.log?.warn({ err: (err as Error).message }, 'CoT mirror catch-up failed');
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    const listen = this.listenClient;
    this.listenClient = null;
    const ended = Promise.all([listen?.end().catch(() => {}), this.pool.end().catch(() => {})]);
    if (await settledWithin(ended, CLOSE_GRACE_MS)) return;
    // a hung server never acknowledges the goodbye: cut what is left (in-flight queries fail at once)
    for (const socket of this.sockets) socket.destroy();
    await settledWithin(ended, CLOSE_GRACE_MS);
  }

  /** Waits until the mirror reflects the table as of `seq`, unless the database goes away meanwhile. */
  private async mirrorAt(seq: number): Promise<void> {
    for (let tries = 0; tries < 2 && this.view.seq < seq && this.state === 'READY' && !this.closed; tries++) await this.sync();
  }

  /**
   * One catch-up at a time (two would apply rows twice). A caller arriving during a run gets the
   * next one, shared by every such caller: the run in flight may have read before what it waits for.
   */
  private catchUp(): Promise<void> {
    if (!this.catching) {
      this.catching = this.runCatchUp().finally(() => {
        this.catching = null;
      });
      return this.catching;
    }
    this.queued ??= this.catching.then(ignore, ignore).then(() => {
      this.queued = null;
      return this.catchUp();
    });
    return this.queued;
  }

  private async runCatchUp(): Promise<void> {
    if (await this.fill(this.view)) return;
    // the table does not match this copy (recreated, restored, or changed by hand): reload it whole
    const fresh = new IngestMirror();
    const agrees = await this.fill(fresh);
    this.view.adopt(fresh);
    if (!agrees) {
      this.totalsTrusted = false;
      this.opts.log?.warn({ events: fresh.size, bytes: fresh.bytes }, 'cot_store totals disagree with cot_event (changed by hand?): the caps are checked against the stored totals');
    }
  }

  /** Reads the rows after what `into` holds, page by page; false when the result disagrees with the table's totals. */
  private async fill(into: IngestMirror): Promise<boolean> {
    for (;;) {
      const { head, rows } = await this.readPage(into.seq);
      const headSeq = Number(head.seq);
      if (headSeq < into.seq) return false;
      for (const r of rows) into.apply(rowToEvent(r));
      into.evictBelow(head.min_seq === null ? null : Number(head.min_seq));
      if (rows.length === PAGE) continue;
      into.caughtUpTo(headSeq);
      return !this.totalsTrusted || (into.size === head.count && into.bytes === Number(head.bytes));
    }
  }

  /** The totals and one page of rows after `after`, from one snapshot, in one round trip. */
  private readPage(after: number): Promise<{ head: HeadRow; rows: EventRow[] }> {
    if (!Number.isSafeInteger(after) || after < 0) throw new Error(`bad sequence ${after}`);
    const sql =
      'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; ' +
      'SELECT seq, count, bytes, (SELECT min(stored_seq) FROM cot_event) AS min_seq FROM cot_store WHERE id = 0; ' +
      `SELECT ${COLUMNS} FROM cot_event WHERE stored_seq > ${after} ORDER BY stored_seq LIMIT ${PAGE}; COMMIT`;
    return this.withClient(async (c) => {
      const results = (await c.query(sql)) as unknown as pg.QueryResult[];
      return { head: results[1]!.rows[0] as HeadRow, rows: results[2]!.rows as EventRow[] };
    });
  }

  /**
   * Runs `work` on a pooled client. A client that failed is destroyed, never reused (it may be
   * inside a transaction or on a dead socket). The pool listens for errors only on idle clients:
   * one that loses its server while checked out would emit with nobody listening.
   */
  private async withClient<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    const onError = (err: Error): void => this.fail(err);
    client.on('error', onError);
    try {
      const out = await work(client);
      client.removeListener('error', onError);
      client.release();
      return out;
    } catch (err) {
      client.removeListener('error', onError);
      client.on('error', () => {}); // a destroyed client may still report its socket closing
      client.release(err as Error);
      throw err;
    }
  }

  /** What every connection shares: the URL, both client-side bounds, a tracked socket. */
  private clientConfig(): pg.ClientConfig {
    const sockets = this.sockets;
    const openSocket = (): Socket => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    };
    return { connectionString: this.opts.url, connectionTimeoutMillis: this.opts.connectTimeoutMs, query_timeout: this.opts.queryTimeoutMs, stream: openSocket };
  }

  private refusal(): IngestUnavailableError {
    const wait = Math.max(this.opts.retryAfterS, Math.ceil((this.retryAt - Date.now()) / 1000));
    return new IngestUnavailableError(this.closed ? 'CoT ingest store closed' : `CoT ingest store unreachable (${this.lastError ?? 'unknown'})`, wait);
  }

  /** The database is unreachable: refuse ingests and probe with a capped doubling backoff. */
  private fail(err: Error): void {
    this.lastError = err.message;
    if (this.closed) return;
    if (this.state !== 'UNAVAILABLE') {
      this.state = 'UNAVAILABLE';
      this.opts.log?.warn({ err: err.message }, 'CoT ingest store unreachable: ingests refused, export and status serve the last copy');
    }
    this.scheduleProbe();
  }

  private backoff(attempt: number): number {
    return reconnectDelayMs(attempt, this.opts.recoveryBaseMs, this.opts.recoveryMaxMs);
  }

  private scheduleProbe(): void {
    if (this.probing) return;
    this.probing = true;
    const delay = this.backoff(this.attempts);
    this.retryAt = Date.now() + delay;
    setTimeout(() => void this.probe(), delay).unref();
  }

  private async probe(): Promise<void> {
    this.probing = false;
    if (this.closed || this.state !== 'UNAVAILABLE') return;
    this.attempts++;
    try {
      await this.pool.query('SELECT 1');
    } catch (err) {
      this.lastError = (err as Error).message;
      this.scheduleProbe();
      return;
    }
    if (this.closed || this.state !== 'UNAVAILABLE') return;
    this.state = 'READY';
    this.opts.log?.info({ attempts: this.attempts }, 'CoT ingest store reachable again: ingests resume');
    this.attempts = 0;
    void this.sync(); // catch up with whatever other replicas stored meanwhile
    if (!this.listenClient) void this.listen();
  }

  /** A dedicated LISTEN connection outside the pool, re-established with a capped backoff. */
  private async listen(): Promise<void> {
    if (this.closed || this.listenClient) return;
    const client = new pg.Client(this.clientConfig());
    this.listenClient = client;
    let lost = false;
    const onLost = (err?: Error): void => {
      if (lost) return;
      lost = true;
      if (this.listenClient === client) this.listenClient = null;
      void client.end().catch(() => {});
      if (this.closed) return;
      if (err) this.fail(err);
      setTimeout(() => void this.listen(), this.backoff(this.listenAttempts++)).unref();
    };
    client.on('error', (err) => onLost(err));
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel === COT_CHANNEL && Number(msg.payload) > this.view.seq) void this.sync();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${COT_CHANNEL}`);
      this.listenAttempts = 0;
      void this.sync(); // notifications are not replayed: catch up with what was missed
    } catch (err) {
      onLost(err as Error);
    }
  }
}

function ignore(): void {}

/** Whether `p` settles within `ms` (the timer holds nothing open). */
function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref();
    const settled = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    void p.then(settled, settled);
  });
}

/** The URL without its password, for messages. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'an unparseable URL';
  }
}
