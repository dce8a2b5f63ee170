/**
 * One ADS-B refresh for all replicas on one PostgreSQL (the only backing service a deployment has,
 * so no Redis for the lock). Without it N replicas make N upstream calls per refresh and each earns
 * its own rate-limit ban.
 *
 *   - `adsb_cache` is an UNLOGGED table: not WAL-logged and emptied after a database crash, which is
 *     right for a cache. Row `state` is small (when the last refresh ended, whether it succeeded, its
 *     attempts, every provider's ban); row `snapshot` holds the aircraft and is read only when newer
 *     than the replica's own copy.
 *   - The fetch runs inside a short transaction holding `pg_try_advisory_xact_lock`: one replica
 *     fetches, the others see "busy" and wait for the `state` row to move. The lock dies with the
 *     transaction, so a replica that crashes mid-fetch cannot hold it.
 *
 * This is an efficiency lock, not a correctness lock (Kleppmann, "How to do distributed locking",
 * 2016): a rare double fetch wastes one upstream call and breaks nothing. Aircraft only ever come
 * from an upstream payload that some replica fetched; nothing here can create one.
 */
import pg from 'pg';
import type { AdsbAttempt as AttemptRecord } from '../isomorphic/wire/adsb.js';
import type { Snapshot } from './feed.js';

/** What every replica sees of the last refresh made by any of them. */
export interface SharedState {
  /** Epoch ms when the last refresh (by any replica) ended; null before the first. */
  refreshedAtMs: number | null;
  refreshOk: boolean | null;
  attempts: AttemptRecord[];
  /** Provider name → epoch ms until which no replica may call it (429 / Retry-After, 403, breaker). */
  bans: Record<string, number>;
  /** fetchedAtMs of the newest snapshot (its aircraft are in `snapshot`, read on demand). */
  snapshotAtMs: number | null;
  snapshot: Snapshot | null;
}

export const EMPTY_STATE: SharedState = { refreshedAtMs: null, refreshOk: null, attempts: [], bans: {}, snapshotAtMs: null, snapshot: null };

export interface SharedRefresh {
  readonly kind: 'POSTGRES';
  /**
   * The shared state; `snapshot` is filled only when the shared one is newer than `haveAtMs` (the
   * caller's own copy), so a replica that is up to date reads one small row.
   */
  read(haveAtMs: number | null): Promise<SharedState>;
  /**
   * Runs `fetch` while no other replica is fetching and publishes what it returns (null: nothing to
   * publish). `fetch` receives the state as it is under the lock. 'busy': another replica is fetching.
   */
  tryRefresh(haveAtMs: number | null, fetch: (state: SharedState) => Promise<SharedState | null>): Promise<'done' | 'busy'>;
  close(): Promise<void>;
}

/** pg_advisory_xact_lock key of the refresh ('adsb' in ASCII); the ledger's keys spell 'khipu'. */
export const ADSB_REFRESH_LOCK = 0x61647362n;
/** Serialises the CREATE TABLE of replicas starting together ('adsbm'). */
const ADSB_MIGRATION_LOCK = 0x616473626dn;

const SCHEMA_SQL = `CREATE UNLOGGED TABLE IF NOT EXISTS adsb_cache (
  key text PRIMARY KEY CHECK (key IN ('state', 'snapshot')),
  body jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`;

interface StateRow {
  refreshedAtMs: number | null;
  refreshOk: boolean | null;
  attempts: AttemptRecord[];
  bans: Record<string, number>;
  snapshotAtMs: number | null;
}

export interface PostgresRefreshOptions {
  url: string;
  /** The longest one refresh may take (every provider's timeout): the lock's transaction lives this long. */
  fetchBudgetMs: number;
  replicaId: string;
}

export class PostgresSharedRefresh implements SharedRefresh {
  readonly kind = 'POSTGRES' as const;
  private readonly pool: pg.Pool;
  private schema: Promise<void> | null = null;

  constructor(opts: PostgresRefreshOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.url,
      // one connection holds the lock during a fetch, one serves readers meanwhile
      max: 2,
      connectionTimeoutMillis: 2000,
      statement_timeout: 5000,
      // a stopped server never fires its own statement_timeout: the client stops waiting too
      query_timeout: 7000,
      // the lock's transaction is idle while the upstream answers: let it live that long, no longer
      idle_in_transaction_session_timeout: opts.fetchBudgetMs + 5000,
      application_name: `svc-adsb ${opts.replicaId}`.slice(0, 63),
    });
    // an idle client whose server went away emits here; without a listener the process dies
    this.pool.on('error', () => {});
  }

  private ensureSchema(): Promise<void> {
    this.schema ??= (async () => {
      const c = await this.pool.connect();
      try {
        await c.query('SELECT pg_advisory_lock($1)', [ADSB_MIGRATION_LOCK.toString()]);
        try {
          await c.query(SCHEMA_SQL);
        } finally {
          await c.query('SELECT pg_advisory_unlock($1)', [ADSB_MIGRATION_LOCK.toString()]);
        }
      } finally {
        c.release();
      }
    })().catch((err: unknown) => {
      this.schema = null; // try again on the next refresh
      throw err;
    });
    return this.schema;
  }

  async read(haveAtMs: number | null): Promise<SharedState> {
    await this.ensureSchema();
    return readState(this.pool, haveAtMs);
  }

  async tryRefresh(haveAtMs: number | null, fetch: (state: SharedState) => Promise<SharedState | null>): Promise<'done' | 'busy'> {
    await this.ensureSchema();
    const c = await this.pool.connect();
    let broken = false;
    try {
      await c.query('BEGIN');
      const { rows } = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [ADSB_REFRESH_LOCK.toString()]);
      if (!rows[0]?.ok) {
        await c.query('ROLLBACK');
        return 'busy';
      }
      // another replica may have finished between our read and the lock: fetch() decides with this
      const inside = await readState(c, haveAtMs);
      const next = await fetch(inside);
      if (next) await writeState(c, next, inside.snapshotAtMs);
      await c.query('COMMIT');
      return 'done';
    } catch (err) {
      broken = true;
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release(broken);
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

async function readState(q: pg.Pool | pg.PoolClient, haveAtMs: number | null): Promise<SharedState> {
  const { rows } = await q.query<{ body: StateRow }>(`SELECT body FROM adsb_cache WHERE key = 'state'`);
  const row = rows[0]?.body;
  if (!row) return { ...EMPTY_STATE, bans: {} };
  let snapshot: Snapshot | null = null;
  if (row.snapshotAtMs !== null && (haveAtMs === null || row.snapshotAtMs > haveAtMs)) {
    const snap = await q.query<{ body: Snapshot }>(`SELECT body FROM adsb_cache WHERE key = 'snapshot'`);
    snapshot = snap.rows[0]?.body ?? null;
  }
  return { ...row, snapshot };
}

async function writeState(c: pg.PoolClient, s: SharedState, storedAtMs: number | null): Promise<void> {
  const row: StateRow = { refreshedAtMs: s.refreshedAtMs, refreshOk: s.refreshOk, attempts: s.attempts, bans: s.bans, snapshotAtMs: s.snapshotAtMs };
  const upsert = `INSERT INTO adsb_cache (key, body, updated_at) VALUES ($1, $2, now()) ON CONFLICT (key) DO UPDATE SET body = EXCLUDED.body, updated_at = now()`;
  // the aircraft travel only when this refresh produced a snapshot newer than the stored one
  if (s.snapshot && s.snapshotAtMs !== null && (storedAtMs === null || s.snapshotAtMs > storedAtMs)) await c.query(upsert, ['snapshot', JSON.stringify(s.snapshot)]);
  else row.snapshotAtMs = storedAtMs;
  await c.query(upsert, ['state', JSON.stringify(row)]);
}
