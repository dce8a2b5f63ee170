/**
 * postgres mode: one chain in one table shared by every replica, so any replica can answer for any
 * node.
 *
 * Append, one transaction per batch: lock the single head row (SELECT … FOR UPDATE); when another
 * replica moved the head past our tip, read the rows we have not seen (returned first); sequence the
 * batch after the real head; one multi-row INSERT; move the head; pg_notify('khipu', new size);
 * COMMIT; only then resolve. Every batch carries a random batch_id, so a commit whose outcome is
 * unknown (connection lost around COMMIT) is resolved after reconnecting by looking it up: found,
 * its rows are returned; missing, the append is refused (503) and nothing was written.
 *
 * Fan-out: NOTIFY carries only the new size; every replica catches up from the table
 * (readFrom), on a notification, after a reconnect, and every second as a safety net.
 *
 * Database down: commits are refused with StoreUnavailableError (503 + Retry-After), status()
 * says UNAVAILABLE and counts reconnect attempts (capped doubling backoff), and appends resume by
 * themselves once a probe gets through.
 *
 * Database hung (a server that accepts bytes and never answers, as a stopped process does): the
 * server-side statement_timeout cannot fire, so every query also has a client-side bound
 * (query_timeout) and every connection attempt one of its own. A query past its bound counts as
 * the database being down. A COMMIT past its bound has an unknown outcome: its batch stays on a
 * list that is looked up, under the head-row lock, before appends are accepted again.
 */
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import pg from 'pg';
import { pae, PAYLOAD_TYPE, sha256 } from '../dsse.js';
import { nodeDigest, ZERO_DIGEST, type AppendInput, type LedgerNode, type LedgerStorage } from '../ledger.js';
import type { FileStore } from './file-store.js';
import { LEAD_LOCK_BASE, migrate } from './postgres-schema.js';
import { durableStatus, sequence, StoreUnavailableError, type AdapterStatus, type CheckpointStore, type LedgerStore, type ReplayOptions, type ReplayReport, type Tip } from './store.js';
import { isConnectionError, reconnectDelayMs } from '../../lib/pg-reconnect.js';
import { ServiceError } from '../../lib/service-error.js';

export interface PostgresStoreOptions {
  url: string;
  retryAfterS: number;
  /** Names this process in the rows it writes (host:pid by default). */
  replicaId: string;
  poolMax?: number;
  /** statement_timeout and lock_timeout, in ms (server side). */
  statementTimeoutMs?: number;
  /** The longest the client waits for any answer, in ms (query_timeout); above statementTimeoutMs. */
  queryTimeoutMs?: number;
  /** The longest a new connection may take, and a pooled one may be waited for, in ms. */
  connectTimeoutMs?: number;
  /**
   * This replica's copy of the chain, opened and locked (replica-copy.ts), closed with the store;
   * without one the ledger is held in process memory.
   */
  copy?: FileStore | null;
  /** The safety-net catch-up poll, in ms. */
  pollMs?: number;
  recoveryBaseMs?: number;
  recoveryMaxMs?: number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

const COLUMNS = 'idx, prev, digest, pae_sha256, payload, sig, keyid, kind, ts_utc, simulated, detail';
const PAGE = 5000;
/** At close, connections still not ended after this are cut: a hung server never acknowledges a goodbye. */
const CLOSE_GRACE_MS = 500;

/** A batch whose COMMIT was sent and never answered: durable or not, nobody knows yet. */
interface Unresolved {
  batchId: string;
  tip: Tip;
  n: number;
}

interface NodeRow {
  idx: string;
  prev: Buffer;
  digest: Buffer;
  pae_sha256: Buffer;
  payload: Buffer;
  sig: Buffer;
  keyid: string;
  kind: string;
  ts_utc: string;
  simulated: boolean;
  detail: string | null;
}

/** Checks one row against the chain so far, like the file mode's parseNodeLine; a string says what is wrong. */
export function rowToNode(r: NodeRow, index: number, head: Buffer): LedgerNode | string {
  if (Number(r.idx) !== index) return `index ${r.idx} where ${index} was expected`;
  const paeSha256 = sha256(pae(PAYLOAD_TYPE, r.payload));
  if (!paeSha256.equals(r.pae_sha256)) return 'pae_sha256 does not recompute from the payload';
  if (!r.prev.equals(index === 0 ? ZERO_DIGEST : head)) return `prev does not match node ${index - 1}`;
  const digest = nodeDigest(index, r.prev, paeSha256);
  if (!digest.equals(r.digest)) return 'node digest does not recompute';
  const node: LedgerNode = { index, kind: r.kind, tsUtc: r.ts_utc, simulated: r.simulated, keyid: r.keyid, payload: r.payload, paeSha256, sig: r.sig, prev: r.prev, nodeDigest: digest };
  if (typeof r.detail === 'string') node.detail = Buffer.from(r.detail, 'utf8');
  return node;
}

export class ChainError extends ServiceError {
  readonly code = 'SVC_CHAIN_BROKEN';
}

export class PostgresStore implements LedgerStore {
  readonly mode = 'postgres' as const;
  readonly scope = 'POSTGRES' as const;
  private readonly pool: pg.Pool;
  private state: AdapterStatus['state'] = 'REPLAYING';
  private reason = 'replaying the ledger from PostgreSQL';
  private attempts = 0;
  private lastError: string | null = null;
  private retryAt = 0;
  private probing = false;
  private closed = false;
  private readonly listeners: ((size: number) => void)[] = [];
  private listenClient: pg.Client | null = null;
  private listenAttempts = 0;
  private poll: NodeJS.Timeout | null = null;
  private readonly leases = new Map<string, pg.Client>();
  /** Every socket to the database, so close() can cut the ones a hung server holds open. */
  private readonly sockets = new Set<Socket>();
  /** Batches whose COMMIT went unanswered; appends stay refused until each is looked up. */
  private readonly unresolved: Unresolved[] = [];
  private readonly queryTimeoutMs: number;
  private checkpointPool: pg.Pool | null = null;
  /** This replica's copy of the chain (tiles and records on local disk), or null (all in memory). */
  private copy: FileStore | null = null;

  private constructor(private readonly opts: PostgresStoreOptions) {
    const timeout = opts.statementTimeoutMs ?? 2000;
    this.queryTimeoutMs = opts.queryTimeoutMs ?? timeout + 1000;
    this.pool = new pg.Pool({
      ...this.clientConfig(),
      max: opts.poolMax ?? 4,
      statement_timeout: timeout,
      lock_timeout: timeout,
      idle_in_transaction_session_timeout: timeout * 2,
      application_name: `svc-khipu ${opts.replicaId}`.slice(0, 63),
    });
    // an idle client whose server went away emits here; without a listener the process dies
    this.pool.on('error', (err) => this.fail(err));
  }

  /** What every connection of this store shares: the URL, both client-side bounds, a tracked socket. */
  private clientConfig(): pg.ClientConfig {
    const sockets = this.sockets;
    const openSocket = (): Socket => {
      const socket = new Socket();
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      return socket;
    };
    return { connectionString: this.opts.url, connectionTimeoutMillis: this.opts.connectTimeoutMs ?? 2000, query_timeout: this.queryTimeoutMs, stream: openSocket };
  }

  /** Connects and creates the schema (idempotent, under an advisory lock). */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const store = new PostgresStore(opts);
    let client: pg.PoolClient | null = null;
    try {
      client = await store.checkout();
      await migrate(client);
    } catch (err) {
      client?.release(true);
      await store.pool.end().catch(() => {});
      await opts.copy?.close();
      throw new Error(`ledger.mode postgres: cannot open the ledger at ${redacted(opts.url)} (SVC_DATABASE_URL): ${(err as Error).message}`, { cause: err });
    }
    client.release();
    store.copy = opts.copy ?? null;
    return store;
  }

  /**
   * Checkpoints in ledger_checkpoint, one per origin and size: a replica about to sign a size
   * another one stored first serves that one, so every replica publishes the same sequence.
   */
  checkpointStore(origin: string): CheckpointStore {
    // a connection of its own: a checkpoint query waiting on a hung database never holds one a commit needs
    const pool = (this.checkpointPool ??= this.sidePool('checkpoints'));
    return {
      newest: async (atMost = Number.MAX_SAFE_INTEGER) =>
        (await pool.query<{ note: string }>('SELECT note FROM ledger_checkpoint WHERE origin = $1 AND size <= $2 ORDER BY size DESC LIMIT 1', [origin, atMost])).rows[0]?.note ?? null,
      save: async (size, note) => {
        await pool.query('INSERT INTO ledger_checkpoint (origin, size, note, replica_id) VALUES ($1, $2, $3, $4) ON CONFLICT (origin, size) DO NOTHING', [origin, size, note, this.opts.replicaId]);
        return (await pool.query<{ note: string }>('SELECT note FROM ledger_checkpoint WHERE origin = $1 AND size = $2', [origin, size])).rows[0]!.note;
      },
    };
  }

  /** A one-connection pool beside the commits' pool, with the same bounds. */
  private sidePool(name: string): pg.Pool {
    const timeout = this.opts.statementTimeoutMs ?? 2000;
    const pool = new pg.Pool({ ...this.clientConfig(), max: 1, statement_timeout: timeout, lock_timeout: timeout, application_name: `svc-khipu ${name} ${this.opts.replicaId}`.slice(0, 63) });
    // an idle client whose server went away emits here; the commits' pool reports the outage
    pool.on('error', () => {});
    return pool;
  }

  /**
   * Opens the chain: this replica's copy up to the newest checkpoint it had synced (O(log n)
   * reads, as file mode opens), then the rows after it, checked link by link and signature by
   * signature page by page. A replica without a copy (or with one that does not match) reads every row.
   */
  async replay(opts: ReplayOptions): Promise<ReplayReport> {
    const started = performance.now();
    const from = this.copy ? await this.openCopy(this.copy, opts) : 0;
    let head: Buffer = from === 0 ? ZERO_DIGEST : opts.head!();
    let corruptAt: ReplayReport['corruptAt'] = null;
    let applied = from;
    const stored = await this.pool.query<{ size: string; head: Buffer }>('SELECT size, head FROM ledger_head WHERE id = 0');
    const storedSize = Number(stored.rows[0]?.size ?? 0);
    for (let at = from; !corruptAt; at += PAGE) {
      const { rows } = await this.pool.query<NodeRow>(`SELECT ${COLUMNS} FROM ledger_node WHERE idx >= $1 ORDER BY idx LIMIT ${PAGE}`, [at]);
      const page: LedgerNode[] = [];
      for (const r of rows) {
        const n = rowToNode(r, at + page.length, head);
        if (typeof n === 'string') {
          corruptAt = { index: at + page.length, reason: `node ${at + page.length}: ${n}` };
          break;
        }
        page.push(n);
        head = n.nodeDigest;
      }
      const badSig = await opts.verifySignatures(page);
      if (badSig && (!corruptAt || badSig.index < corruptAt.index)) corruptAt = badSig;
      for (const n of page) {
        if (corruptAt && n.index >= corruptAt.index) break;
        opts.apply(n);
        applied++;
      }
      if (rows.length < PAGE) break;
    }
    if (!corruptAt && applied < storedSize) corruptAt = { index: applied, reason: `ledger_head says ${storedSize} nodes but only ${applied} are stored` };
    if (corruptAt) {
      this.state = 'CORRUPT';
      this.reason = `ledger in PostgreSQL damaged at node ${corruptAt.index}: ${corruptAt.reason}; appends are refused, nodes 0..${corruptAt.index - 1} are served`;
      this.opts.log?.warn({ index: corruptAt.index, reason: corruptAt.reason }, 'ledger damaged: appends refused');
    } else {
      this.ready();
    }
    await this.startFanout();
    return { nodes: applied, trimmed: null, corruptAt, ms: performance.now() - started, fromCheckpoint: from };
  }

  /**
   * Opens this replica's copy at the newest checkpoint (from the database, signature checked) of
   * at most the nodes the copy synced, cutting what it holds after that: the rows after it are
   * read from the database, the one truth. A copy that cannot be opened there is emptied and
   * rebuilt from the rows. Returns the nodes opened from the copy.
   */
  private async openCopy(copy: FileStore, opts: ReplayOptions): Promise<number> {
    const held = await copy.copyHeld();
    const anchor = held > 0 ? ((await opts.anchorAtMost?.(held)) ?? null) : null;
    await copy.cutCopy(anchor?.size ?? 0);
    const r = await copy.replay({ ...opts, anchor });
    // opened anywhere but at the checkpoint, its nodes would not be the database's
    if (!r.corruptAt && (r.fromCheckpoint ?? 0) === (anchor?.size ?? 0)) return r.nodes;
    this.opts.log?.warn({ reason: r.corruptAt?.reason ?? 'its tiles do not match the checkpoint', checkpoint_size: anchor?.size ?? 0 }, 'ledger copy of this replica does not match the database: rebuilt from the rows');
    await copy.cutCopy(0);
    const again = await copy.replay({ ...opts, anchor: null });
    return again.nodes;
  }

  storage(): LedgerStorage | null {
    return this.copy?.storage() ?? null;
  }

  async syncDerived(): Promise<void> {
    await this.copy?.syncDerived();
  }

  fsckTarget(): { dataDir: string; recordsEnd(): number } | null {
    return this.copy?.fsckTarget() ?? null;
  }

  /**
   * Damage in this replica's copy (found by the background fsck): the database is whole and
   * appends go on, but tiles and receipts read from the copy cannot be trusted until a restart
   * rebuilds it from the rows; readiness and /health say so.
   */
  damaged(bad: { index: number; reason: string }): void {
    this.opts.log?.warn({ index: bad.index, reason: bad.reason }, 'ledger copy of this replica damaged: restart the replica to rebuild it from the database');
  }

  async commit(inputs: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]> {
    if (this.state !== 'READY') throw this.refusal();
    const batchId = randomUUID();
    let client: pg.PoolClient;
    try {
      client = await this.checkout();
    } catch (err) {
      this.fail(err as Error);
      throw this.refusal();
    }
    let commitSent = false;
    try {
      // BEGIN and the head lock in one round trip (simple protocol, two statements)
      const opened = (await client.query('BEGIN; SELECT size, head FROM ledger_head WHERE id = 0 FOR UPDATE')) as unknown as pg.QueryResult<{ size: string; head: Buffer }>[];
      const h = opened[1]!;
      const size = Number(h.rows[0]!.size);
      const head = h.rows[0]!.head;
      if (size < tip.size) throw new ChainError(`the database holds ${size} nodes but this replica has served ${tip.size}: the database lost nodes (restored from an old backup?)`);
      const missing = size > tip.size ? await this.fetchChecked(client, tip, size - tip.size) : [];
      if (missing.length && !missing.at(-1)!.nodeDigest.equals(head)) throw new ChainError(`ledger_head does not name node ${size - 1}`);
      const nodes = sequence(inputs, { size, head: size === 0 ? ZERO_DIGEST : head });
      const params: unknown[] = [];
      const values = nodes.map((n) => {
        const at = params.length;
        params.push(n.index, n.prev, n.nodeDigest, n.paeSha256, n.payload, n.sig, n.keyid, n.kind, n.tsUtc, n.simulated, n.detail?.toString('utf8') ?? null, this.opts.replicaId, batchId);
        return `(${Array.from({ length: 13 }, (_, k) => `$${at + k + 1}`).join(',')})`;
      });
      await client.query(`INSERT INTO ledger_node (${COLUMNS}, replica_id, batch_id) VALUES ${values.join(',')}`, params);
      const newSize = size + nodes.length;
      // the head moves and the doorbell rings in one statement (delivered at COMMIT)
      await client.query("UPDATE ledger_head SET size = $1, head = $2, updated_at = now() WHERE id = 0 RETURNING pg_notify('khipu', $3)", [newSize, nodes.at(-1)!.nodeDigest, String(newSize)]);
      commitSent = true;
      await client.query('COMMIT');
      client.release();
      return [...missing, ...nodes];
    } catch (err) {
      if (!commitSent) {
        const down = isConnectionError(err);
        if (!down) await client.query('ROLLBACK').catch(() => {});
        client.release(down ? (err as Error) : undefined);
        if (err instanceof ChainError) {
          this.corrupt(err.message);
          throw this.refusal();
        }
        if (down) this.fail(err as Error);
        else this.opts.log?.warn({ err: (err as Error).message, code: (err as { code?: string }).code }, 'ledger commit refused by the database');
        throw new StoreUnavailableError(`ledger commit failed: ${(err as Error).message}`, this.opts.retryAfterS);
      }
      // COMMIT was sent and its answer lost: the batch may or may not be durable
      client.release(err as Error);
      this.fail(err as Error);
      return this.resolveAmbiguous(batchId, tip, inputs.length);
    }
  }

  /**
   * After a commit whose answer was lost: the batch's rows if it is durable, a refusal if it is
   * not. Still unknown at the deadline (the database does not answer): a refusal, and the batch
   * stays on the list the recovery probe settles before appends resume.
   */
  private async resolveAmbiguous(batchId: string, tip: Tip, n: number): Promise<LedgerNode[]> {
    const pending: Unresolved = { batchId, tip, n };
    this.unresolved.push(pending);
    // one more query timeout at most: appends queued behind this one wait for it
    const deadline = Date.now() + this.queryTimeoutMs;
    for (let wait = 100; Date.now() < deadline && !this.closed; wait = Math.min(wait * 2, 1000)) {
      await new Promise((r) => setTimeout(r, wait));
      let nodes: LedgerNode[] | null;
      try {
        nodes = await this.settle(pending);
      } catch (err) {
        if (err instanceof ChainError) {
          this.corrupt(err.message);
          throw this.refusal();
        }
        continue; // still unreachable: try again until the deadline
      }
      if (!nodes) throw new StoreUnavailableError('ledger commit outcome unknown (connection lost around COMMIT) and not found after reconnecting; nothing was appended', this.opts.retryAfterS);
      return nodes;
    }
    throw new StoreUnavailableError('ledger commit outcome unknown (the database stopped answering around COMMIT); the batch is looked up before appends resume and, if durable, joins the chain then', this.opts.retryAfterS);
  }

  /**
   * Looks an unanswered batch up for good and takes it off the list: its nodes from its tip on
   * (others' first) if durable, null if not. The head-row lock waits for the lost transaction to
   * end either way, so "not found" cannot be followed by a late COMMIT.
   */
  private async settle(p: Unresolved): Promise<LedgerNode[] | null> {
    const client = await this.checkout();
    let broken = true;
    let nodes: LedgerNode[] | null = null;
    try {
      await client.query('BEGIN; SELECT 1 FROM ledger_head WHERE id = 0 FOR UPDATE');
      const found = await client.query<{ last: string | null }>('SELECT max(idx) AS last FROM ledger_node WHERE batch_id = $1', [p.batchId]);
      const last = found.rows[0]?.last;
      if (last !== null && last !== undefined) nodes = await this.fetchChecked(client, p.tip, Number(last) + 1 - p.tip.size);
      await client.query('ROLLBACK');
      broken = false;
    } finally {
      client.release(broken);
    }
    const at = this.unresolved.indexOf(p);
    if (at >= 0) this.unresolved.splice(at, 1);
    if (nodes && nodes.length < p.n) throw new ChainError('a committed batch came back incomplete');
    this.opts.log?.info({ batch_id: p.batchId, durable: nodes !== null }, nodes ? 'ledger commit outcome was unknown: found durable after reconnecting' : 'ledger commit outcome was unknown: not committed, nothing was appended');
    return nodes;
  }

  /**
   * A pooled client for a transaction. The pool listens for errors only on idle clients: one that
   * loses its server while checked out would emit 'error' with nobody listening and end the process.
   * The failing query rejects anyway, so the listener only records the outage.
   */
  private async checkout(): Promise<pg.PoolClient> {
    const client = await this.pool.connect();
    const onError = (err: Error): void => this.fail(err);
    client.on('error', onError);
    const release = client.release.bind(client);
    // named, then assigned (the no-restricted-syntax rule in eslint.config.js)
    const released = (err?: Error | boolean): void => {
      client.removeListener('error', onError);
      if (err) client.on('error', () => {}); // a destroyed client may still report its socket closing
      release(err);
    };
    client.release = released;
    return client;
  }

  /** `count` nodes from tip.size on, checked link by link from the tip. */
  private async fetchChecked(client: pg.ClientBase, tip: Tip, count: number): Promise<LedgerNode[]> {
    const { rows } = await client.query<NodeRow>(`SELECT ${COLUMNS} FROM ledger_node WHERE idx >= $1 ORDER BY idx LIMIT $2`, [tip.size, count]);
    const out: LedgerNode[] = [];
    let head = tip.head;
    for (const r of rows) {
      const n = rowToNode(r, tip.size + out.length, head);
      if (typeof n === 'string') throw new ChainError(`node ${tip.size + out.length}: ${n}`);
      out.push(n);
      head = n.nodeDigest;
    }
    if (out.length !== count) throw new ChainError(`expected ${count} nodes from ${tip.size}, the database returned ${out.length}`);
    return out;
  }

  async readFrom(from: number, limit: number): Promise<LedgerNode[]> {
    // unreachable: the probe catches up once it gets through, and a hung server would hold every
    // caller of this (serialised with commits) for a query timeout each
    if (this.state === 'CORRUPT' || this.state === 'UNAVAILABLE' || this.closed) return [];
    let rows: NodeRow[];
    try {
      rows = (await this.pool.query<NodeRow>(`SELECT ${COLUMNS} FROM ledger_node WHERE idx >= $1 ORDER BY idx LIMIT $2`, [from, limit])).rows;
    } catch (err) {
      if (isConnectionError(err)) this.fail(err as Error);
      throw err;
    }
    if (!rows.length) return [];
    // the link to the mirror's head is checked by Ledger.applyNode; here each row must be self-consistent
    const out: LedgerNode[] = [];
    let head = from === 0 ? ZERO_DIGEST : rows[0]!.prev;
    for (const r of rows) {
      const n = rowToNode(r, from + out.length, head);
      if (typeof n === 'string') throw new Error(`node ${from + out.length}: ${n}`);
      out.push(n);
      head = n.nodeDigest;
    }
    return out;
  }

  onRemoteAppend(listener: (size: number) => void): void {
    this.listeners.push(listener);
  }

  async loadKeys(): Promise<string[]> {
    const { rows } = await this.pool.query<{ keyid: string; spki_pem: string; added_at: Date }>('SELECT keyid, spki_pem, added_at FROM ledger_key ORDER BY keyid');
    // the copy keeps the keyring too, so it can be checked on its own (npm run ledger:fsck)
    for (const r of rows) await this.copy?.recordKey(r.keyid, r.spki_pem, new Date(r.added_at).toISOString());
    return rows.map((r) => r.spki_pem);
  }

  /** Publishes a key (first wins, across replicas) and returns when the shared ledger first recorded it: ledger_key.added_at. */
  async recordKey(keyid: string, spkiPem: string, createdAt: string = new Date().toISOString()): Promise<string> {
    await this.pool.query('INSERT INTO ledger_key (keyid, spki_pem, added_at) VALUES ($1, $2, $3) ON CONFLICT (keyid) DO NOTHING', [keyid, spkiPem, createdAt]);
    // a statement of its own: it sees the row another replica may have inserted first
    const { rows } = await this.pool.query<{ added_at: Date }>('SELECT added_at FROM ledger_key WHERE keyid = $1', [keyid]);
    const recorded = new Date(rows[0]!.added_at).toISOString();
    await this.copy?.recordKey(keyid, spkiPem, recorded);
    return recorded;
  }

  /**
   * Session-level leadership among replicas: a pg_try_advisory_lock held on a dedicated connection
   * (never a pooled one). Lost with the connection or the process; `onLost` is told.
   */
  async tryLead(name: string, onLost: () => void): Promise<boolean> {
    if (this.leases.has(name)) return true;
    const client = new pg.Client(this.clientConfig());
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [leaseKey(name)]);
      if (!rows[0]?.ok) {
        await client.end().catch(() => {});
        return false;
      }
    } catch {
      await client.end().catch(() => {});
      return false;
    }
    this.leases.set(name, client);
    client.once('end', () => {
      if (this.leases.get(name) === client) {
        this.leases.delete(name);
        onLost();
      }
    });
    return true;
  }

  async resign(name: string): Promise<void> {
    const client = this.leases.get(name);
    if (!client) return;
    this.leases.delete(name);
    await client.end().catch(() => {}); // ending the session releases its advisory lock
  }

  status(): AdapterStatus {
    return durableStatus(this.state, this.reason, this.attempts, this.retryAt, this.lastError);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    if (this.state === 'READY') this.state = 'UNAVAILABLE';
    this.reason = 'closed';
    const listen = this.listenClient;
    this.listenClient = null;
    await this.copy?.close();
    const ended = Promise.all([listen?.end().catch(() => {}), ...[...this.leases.keys()].map((k) => this.resign(k)), this.pool.end().catch(() => {}), this.checkpointPool?.end().catch(() => {})]);
    if (await settledWithin(ended, CLOSE_GRACE_MS)) return;
    // a hung server never acknowledges the goodbye: cut what is left (in-flight queries fail at once)
    this.opts.log?.warn({ sockets: this.sockets.size }, 'ledger database did not acknowledge the close: connections cut');
    for (const socket of this.sockets) socket.destroy();
    await settledWithin(ended, CLOSE_GRACE_MS);
  }

  private ready(): void {
    this.state = 'READY';
    this.reason = 'appending to PostgreSQL: one transaction per batch under the head-row lock, committed before every acknowledgement';
  }

  private corrupt(why: string): void {
    this.state = 'CORRUPT';
    this.reason = `${why}; appends are refused`;
    this.opts.log?.warn({ reason: why }, 'ledger chain in PostgreSQL does not extend this replica: appends refused');
  }

  private refusal(): StoreUnavailableError {
    const wait = this.state === 'UNAVAILABLE' ? Math.max(this.opts.retryAfterS, Math.ceil((this.retryAt - Date.now()) / 1000)) : this.opts.retryAfterS;
    return new StoreUnavailableError(this.reason, wait);
  }

  /** The database is unreachable: refuse appends and probe with a capped doubling backoff. */
  private fail(err: Error): void {
    this.lastError = err.message;
    if (this.closed || this.state === 'CORRUPT' || this.state === 'REPLAYING') return;
    if (this.state !== 'UNAVAILABLE') {
      this.state = 'UNAVAILABLE';
      this.reason = `PostgreSQL unreachable (${err.message}); appends are refused until it answers again`;
      this.opts.log?.warn({ err: err.message }, 'ledger database unreachable: appends refused');
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
      // nothing is acknowledged after a batch whose outcome is unknown until that outcome is known
      for (const p of [...this.unresolved]) await this.settle(p);
    } catch (err) {
      if (err instanceof ChainError) {
        this.corrupt(err.message);
        return;
      }
      this.lastError = (err as Error).message;
      this.scheduleProbe();
      return;
    }
    if (this.closed || this.state !== 'UNAVAILABLE') return;
    this.ready();
    this.opts.log?.info({ attempts: this.attempts }, 'ledger database reachable again: appends resume');
    this.notify(-1); // catch up with whatever other replicas appended meanwhile
    if (!this.listenClient) void this.listen();
  }

  private notify(size: number): void {
    for (const l of this.listeners) l(size);
  }

  /** Listens before start-up completes, so no append after READY can go unrung. */
  private async startFanout(): Promise<void> {
    if (this.closed) return;
    await this.listen();
    this.poll = setInterval(() => this.notify(-1), this.opts.pollMs ?? 1000);
    this.poll.unref();
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
      const delay = this.backoff(this.listenAttempts++);
      setTimeout(() => void this.listen(), delay).unref();
    };
    client.on('error', (err) => onLost(err));
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel === 'khipu') this.notify(Number(msg.payload));
    });
    try {
      await client.connect();
      await client.query('LISTEN khipu');
      this.listenAttempts = 0;
      this.notify(-1); // notifications are not replayed: catch up with what was missed
    } catch (err) {
      onLost(err as Error);
    }
  }
}

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

function leaseKey(name: string): string {
  let h = 0;
  for (const c of name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return (LEAD_LOCK_BASE + BigInt(h & 0xff)).toString();
}
