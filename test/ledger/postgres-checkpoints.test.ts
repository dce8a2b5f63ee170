// Replicas on one database publish one checkpoint sequence: racing to sign a size, both serve the
// one stored first; a stored checkpoint that names another root for a size is never served.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, loadFrame, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';
import type { Ledger } from '../../src/ledger/ledger.js';

describe('postgres mode: one checkpoint sequence shared by the replicas', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let dir: string;
  let url: string;
  let a: TestApp;
  let b: TestApp;
  let config: Record<string, unknown>;
  const sizeOf = (t: TestApp) => (t.provided.ledger.ledger as Ledger).size;
  before(async () => {
    db = await usePostgres();
    url = await createDatabase(db, `cp_${process.pid}`);
    dir = mkdtempSync(join(tmpdir(), 'svc-pg-cp-'));
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    // a long interval: nothing signs by itself, the test decides when both sign
    config = { ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'data'), checkpointIntervalMs: 3_600_000 } };
    [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('two replicas racing to sign the same size serve one byte-identical checkpoint, stored once', async () => {
    for (let k = 0; k < 12; k++) await (k % 2 ? a : b).http.post('/api/svc/v1/verdict').send(loadFrame(k)).expect(200);
    await until('both replicas to hold 12 nodes', () => sizeOf(a) === 12 && sizeOf(b) === 12);
    // two replicas starting together have signed nothing yet: each signs the 12 nodes at once
    const [c1, c2] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
    try {
      const [fromA, fromB] = await Promise.all([c1.http.get('/api/svc/v1/ledger/checkpoint').expect(200), c2.http.get('/api/svc/v1/ledger/checkpoint').expect(200)]);
      expect(fromA.text.split('\n')[1]).to.equal('12');
      // ECDSA signatures are randomised: two independent signings would differ in their ECDSA line
      expect(fromA.text).to.equal(fromB.text);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const rows = (await c.query<{ size: string; note: string }>('SELECT size, note FROM ledger_checkpoint WHERE size = 12')).rows;
        expect(rows.map((r) => [Number(r.size), r.note])).to.deep.equal([[12, fromA.text]]);
        // stored checkpoints are never changed
        const err = await c.query("UPDATE ledger_checkpoint SET note = 'x'").then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message).to.match(/append-only: UPDATE refused/);
      } finally {
        await c.end();
      }
    } finally {
      await Promise.all([c1.close(), c2.close()]);
    }
  });

  it('a checkpoint stored for a size with another root (another history) is never served: 503, nothing signed over it', async () => {
    await a.http.post('/api/svc/v1/verdict').send(loadFrame(100)).expect(200);
    const size = sizeOf(a);
    const origin = (await a.http.get('/api/svc/v1/ledger/checkpoint')).text.split('\n')[0]!;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      // as if a replica with a forked chain had signed this size first
      await c.query('INSERT INTO ledger_checkpoint (origin, size, note, replica_id) VALUES ($1, $2, $3, $4)', [origin, size, `${origin}\n${size}\n${Buffer.alloc(32, 7).toString('base64')}\n\n\u2014 ${origin} AAAAAAAA\n`, 'forger']);
    } finally {
      await c.end();
    }
    // a replica starting now meets the stored one as the newest checkpoint its ledger must extend
    const c3 = await buildTestApp({ ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: join(dir, 'key.pem'), dataDir: join(dir, 'data'), checkpointIntervalMs: 3_600_000 } });
    try {
      expect(sizeOf(c3)).to.equal(size);
      const res = await c3.http.get('/api/svc/v1/ledger/checkpoint');
      expect(res.status).to.equal(503);
      expect(res.body.detail).to.match(new RegExp(`^No checkpoint: the ledger does not extend the checkpoint signed before \\(size ${size}\\)`));
      // and it stays refused, even once the log grows past that size: nothing is signed over another history
      await c3.http.post('/api/svc/v1/verdict').send(loadFrame(101)).expect(200);
      expect((await c3.http.get('/api/svc/v1/ledger/checkpoint')).status).to.equal(503);
    } finally {
      await c3.close();
    }
  });
});
