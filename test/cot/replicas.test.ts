/**
 * postgres mode: the CoT ingest store is shared by the replicas (src/cot/shared-store.ts). Two
 * in-process replicas on one database (embedded PostgreSQL): what one ingests the other exports,
 * byte for byte; newest `time` per uid wins across replicas, racing ones included; the owner rule,
 * the count cap and the byte budget hold across replicas with least-recently-stored eviction; a
 * database outage refuses ingest with 503 + Retry-After while export keeps serving, and ingest
 * resumes without a restart.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
const iso = (ms: number) => new Date(ms).toISOString();

function event(uid: string, timeMs: number, remarks = ''): string {
  const t = iso(timeMs);
  return (
    `<event version="2.0" uid="${uid}" type="a-u-A-M-F-Q" how="m-g" time="${t}" start="${t}" stale="${iso(timeMs + 600_000)}">` +
    `<point lat="36.2" lon="-115.2" hae="100" ce="10" le="5"/><detail><contact callsign="REPL"/>${remarks ? `<remarks>${remarks}</remarks>` : ''}</detail></event>`
  );
}

function ingest(t: TestApp, xml: string, token?: string) {
  const req = t.http.post(`${API}/cot/ingest`).set('content-type', 'application/xml');
  return (token ? req.set('authorization', `Bearer ${token}`) : req).send(xml);
}

const storeOf = (t: TestApp) => t.provided.cot.service.store;
const uidsOf = (t: TestApp) => [...storeOf(t).values()].map((e) => e.uid);
const timeIn = (t: TestApp, uid: string) => storeOf(t).get(uid)?.timeMs;
/** The whole export for one clock: byte-identical on two replicas holding the same events. */
const exportAt = (t: TestApp, ms: number) => [...t.provided.cot.service.exportChunks(ms)].join('');

describe('postgres mode: the CoT ingest store is shared by the replicas', function () {
  let db: TestDatabase;
  let dir: string;
  let keyFile: string;
  const ledger = (url: string, data: string) => ({ mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, data) });

  before(async () => {
    db = await usePostgres();
    dir = mkdtempSync(join(tmpdir(), 'svc-cot-pg-'));
    keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  });
  after(async () => {
    await db?.release();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('the count cap and the byte budget, least recently stored evicted first', () => {
    let c: TestApp;
    let d: TestApp;
    let url: string;
    before(async () => {
      url = await createDatabase(db, `cot_limits_${process.pid}`);
      const config = { ledger: ledger(url, 'limits'), cot: { maxStoredTracks: 4, maxStoredBytes: 65_536, limits: { maxTextChars: 60_000 } } };
      [c, d] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
    });
    after(() => Promise.all([c?.close(), d?.close()]));

    it('keeps at most maxStoredTracks events among both replicas, evicting by when each was stored on either', async () => {
      const now = Date.now() - 20_000;
      for (const [k, t] of [c, d, c, d].entries()) expect((await ingest(t, event(`s${k + 1}`, now + k))).body).to.include({ stored: true, store_result: 'new', evicted_uid: null });
      // s1 stored again through the other replica: now the most recent, so s2 is the oldest
      expect((await ingest(d, event('s1', now + 10))).body).to.include({ store_result: 'replaced_older', evicted_uid: null });
      expect((await ingest(c, event('s5', now + 11))).body).to.include({ store_result: 'new', evicted_uid: 's2' });
      for (const t of [c, d]) await until('both replicas to hold s3, s4, s1, s5 in storage order', () => uidsOf(t).join() === 's3,s4,s1,s5');
      expect(exportAt(c, now)).to.equal(exportAt(d, now));
    });

    it('keeps the stored bytes within maxStoredBytes among both replicas, evicting as many as it takes', async () => {
      const now = Date.now() - 10_000;
      const big = (uid: string, k: number) => event(uid, now + k, 'x'.repeat(24_000));
      expect((await ingest(d, big('b1', 1))).body).to.include({ store_result: 'new', evicted_uid: 's3' });
      expect((await ingest(c, big('b2', 2))).body).to.include({ store_result: 'new', evicted_uid: 's4' });
      // three big events do not fit in 64 KiB: s1 and s5 go, then b1 (stored through the other replica)
      expect((await ingest(d, big('b3', 3))).body).to.include({ store_result: 'new', evicted_uid: 's1' });
      for (const t of [c, d]) await until('both replicas to hold b2 and b3 only', () => uidsOf(t).join() === 'b2,b3');
      expect(storeOf(c).bytes).to.equal(storeOf(d).bytes).and.to.be.within(48_000, 65_536);
      const q = new pg.Client({ connectionString: url });
      await q.connect();
      try {
        const totals = (await q.query<{ count: number; bytes: string }>('SELECT count, bytes FROM cot_store')).rows[0]!;
        expect([totals.count, Number(totals.bytes)]).to.deep.equal([2, storeOf(c).bytes]);
      } finally {
        await q.end();
      }
      expect(exportAt(c, now)).to.equal(exportAt(d, now));
    });
  });

  describe('one store, whichever replica answers', () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      // shed answers are not held: the outage test retries at once
      const config = { ledger: ledger(db.url, 'shared'), guard: { writeTokens: 'alpha-token,beta-token', shedHoldMaxMs: 0 } };
      [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
    });
    after(() => Promise.all([a?.close(), b?.close()]));
    const now = Date.now() - 30_000;

    it('an event ingested on A is in the database before the answer and is exported by B, byte for byte', async () => {
      const res = await ingest(a, event('shared-1', now), 'alpha-token');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ stored: true, store_result: 'new' });
      const q = new pg.Client({ connectionString: db.url });
      await q.connect();
      try {
        expect((await q.query('SELECT uid FROM cot_event')).rows).to.deep.equal([{ uid: 'shared-1' }]);
      } finally {
        await q.end();
      }
      // the answering replica's own export has it at once
      expect((await a.http.get(`${API}/cot/export/shared-1`)).status).to.equal(200);
      await until('B to hold shared-1', () => timeIn(b, 'shared-1') === now);
      const one = await b.http.get(`${API}/cot/export/shared-1`);
      expect(one.status).to.equal(200);
      expect(one.text).to.include(`time="${iso(now)}"`);
      expect(exportAt(a, now)).to.equal(exportAt(b, now)).and.to.include('uid="shared-1"');
      const [sa, sb] = await Promise.all([a.http.get(`${API}/cot/status`), b.http.get(`${API}/cot/status`)]);
      expect(sa.body.live).to.deep.equal(sb.body.live);
    });

    it('a newer event on B replaces it on both; an older one is refused on both with the same answer', async () => {
      expect((await ingest(b, event('shared-1', now + 2000), 'alpha-token')).body).to.include({ stored: true, store_result: 'replaced_older' });
      await until('A to hold the newer event', () => timeIn(a, 'shared-1') === now + 2000);
      const [onA, onB] = await Promise.all([ingest(a, event('shared-1', now + 1000), 'alpha-token'), ingest(b, event('shared-1', now + 1000), 'alpha-token')]);
      expect(onA.body).to.include({ stored: false, store_result: 'not_newer_than_stored' });
      expect(onA.body).to.deep.equal(onB.body);
      expect((await ingest(a, event('shared-1', now + 2000), 'alpha-token')).body, 'an equal time').to.include({ stored: false });
      expect(exportAt(a, now)).to.equal(exportAt(b, now)).and.to.include(`time="${iso(now + 2000)}"`);
    });

    it('a uid stored with one token is replaced only with that token, on either replica', async () => {
      const owned = await ingest(b, event('shared-1', now + 3000), 'beta-token');
      expect(owned.status).to.equal(422);
      expect(owned.body.detail[0]).to.include({ type: 'cot_uid_owned', input: 'shared-1' });
      // older from another token: refused as owned, not acknowledged as "not newer"
      expect((await ingest(a, event('shared-1', now - 1000), 'beta-token')).body.detail[0].type).to.equal('cot_uid_owned');
      expect((await ingest(a, event('shared-1', now + 3000), 'alpha-token')).body).to.include({ store_result: 'replaced_older' });
      expect((await ingest(b, event('beta-1', now), 'beta-token')).body).to.include({ store_result: 'new' });
      await until('A to hold beta-1', () => storeOf(a).get('beta-1')?.owner);
      expect((await ingest(a, event('beta-1', now + 1000), 'alpha-token')).status).to.equal(422);
      expect(storeOf(a).get('shared-1')!.owner).to.equal(storeOf(b).get('shared-1')!.owner).and.to.match(/^token:[0-9a-f]{64}$/);
    });

    it('two replicas racing on one uid keep the newest: one stores it, the other is replaced or refused', async () => {
      const n = 24;
      // uid k: A sends now+k*10 and B now+k*10±5 (B newer for even k), or both the same time (k % 3 == 0)
      const timeB = (k: number) => (k % 3 === 0 ? now + k * 10 : now + k * 10 + (k % 2 === 0 ? 5 : -5));
      const answers = await Promise.all(
        Array.from({ length: n }, (_, k) => Promise.all([ingest(a, event(`race-${k}`, now + k * 10), 'alpha-token'), ingest(b, event(`race-${k}`, timeB(k)), 'alpha-token')])),
      );
      for (const [k, [ra, rb]] of answers.entries()) {
        const results = [ra.body.store_result, rb.body.store_result] as string[];
        expect(results.filter((r) => r === 'new'), `race-${k}: ${results.join()}`).to.have.length(1);
        const newest = Math.max(now + k * 10, timeB(k));
        // the second to be decided was newer (it replaced) or not (refused): never both stored as new
        const other = results.find((r) => r !== 'new') ?? results[1];
        expect(other, `race-${k}`).to.be.oneOf(['replaced_older', 'not_newer_than_stored']);
        for (const t of [a, b]) await until(`race-${k} at its newest time`, () => timeIn(t, `race-${k}`) === newest);
      }
      expect(exportAt(a, now)).to.equal(exportAt(b, now));
    });

    it('database down: ingest answers 503 + Retry-After, export keeps serving, and ingest resumes without a restart', async () => {
      const before = exportAt(a, now);
      await db.stopServer();
      let restarted = false;
      try {
        const refused = await until('ingest refused with 503', async () => {
          const r = await ingest(a, event('outage-1', Date.now() - 1000), 'alpha-token');
          return r.status === 503 ? r : null;
        });
        expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
        expect(refused.body.detail).to.match(/CoT ingest store \(PostgreSQL\) unavailable/);
        const onB = await ingest(b, event('outage-1', Date.now() - 1000), 'alpha-token');
        expect([onB.status, Number(onB.headers['retry-after']) >= 1]).to.deep.equal([503, true]);
        for (const t of [a, b]) {
          const all = await t.http.get(`${API}/cot/export`);
          expect(all.status).to.equal(200);
          expect(all.text).to.include('uid="shared-1"').and.to.include('uid="race-0"');
          expect((await t.http.get(`${API}/cot/status`)).status).to.equal(200);
        }
        expect(exportAt(a, now)).to.equal(before);
        await db.startServer();
        restarted = true;
        const at = Date.now() - 1000;
        await until(
          'ingest on B to be stored again',
          async () => {
            const r = await ingest(b, event('outage-1', at), 'alpha-token');
            return r.status === 200 && r.body.store_result === 'new';
          },
          30_000,
        );
        await until('A to hold the event B stored after the outage', () => timeIn(a, 'outage-1') === at);
        expect(exportAt(a, now)).to.equal(exportAt(b, now));
      } finally {
        if (!restarted) await db.startServer();
      }
    });
  });
});
