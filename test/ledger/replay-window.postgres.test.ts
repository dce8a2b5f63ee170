/** GET /ledger/verdicts in postgres mode: two replicas appending to one chain serve the same window. */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
const MIN = 60_000;

describe('GET /api/svc/v1/ledger/verdicts in postgres mode', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let dir: string;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    db = await usePostgres();
    const url = await createDatabase(db, `window_${process.pid}`);
    dir = mkdtempSync(join(tmpdir(), 'svc-pg-window-'));
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const config = { stream: { flight: 'off' }, ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'data') } };
    [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('both replicas answer the same items, from either replica\u2019s appends, the old node left out', async () => {
    const now = Date.now();
    const frame = (k: number) => ({ track_id: `PG${k}`, source: 'OpenDroneID' as const, lat: 36.5, lon: -115.1 });
    // an old node, then six recent ones written alternately by the two replicas
    await a.provided.verdicts.verdicts.decide(frame(0), { nowMs: now - 20 * MIN });
    for (let k = 1; k <= 6; k++) await (k % 2 ? b : a).provided.verdicts.verdicts.decide(frame(k), { nowMs: now - (7 - k) * 1000 });
    await until('both replicas to hold 7 nodes', () => a.provided.ledger.ledger.size === 7 && b.provided.ledger.ledger.size === 7);
    const [fromA, fromB] = await Promise.all([a.http.get(`${API}/ledger/verdicts`).expect(200), b.http.get(`${API}/ledger/verdicts`).expect(200)]);
    expect(fromA.body.items.map((i: { track_id: string }) => i.track_id)).to.deep.equal(['PG1', 'PG2', 'PG3', 'PG4', 'PG5', 'PG6']);
    expect(fromA.body).to.deep.include({ count: 6, first_index: 1, last_index: 6, truncated: false });
    expect(fromB.body.items).to.deep.equal(fromA.body.items);
  });
});
