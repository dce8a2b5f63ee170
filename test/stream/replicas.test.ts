// Replicas on one postgres ledger are interchangeable: whichever one answers, and whenever, a
// verdict's SSE event and the edge scene are the same bytes, built from the shared ledger (the
// detail stored with each node) rather than from what one process saw.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Ledger } from '../../src/ledger/ledger.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, loadFrame, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { openSse, type SseEvent } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
const sizeOf = (t: TestApp) => (t.provided.ledger.ledger as Ledger).size;

/** The verdict events after id 0, as one replica serves them (a resume, replayed from the ledger). */
async function eventsFrom(t: TestApp, n: number): Promise<SseEvent[]> {
  const sse = await openSse(`${t.baseUrl}${API}/stream/verdicts`, { 'last-event-id': '0' });
  try {
    return (await sse.waitFor(n, 20_000)).filter((e) => e.event === 'verdict').slice(0, n);
  } finally {
    sse.close();
  }
}

describe('replicas serve the same verdict bodies and the same edge scene', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let dir: string;
  let config: Record<string, unknown>;
  let a: TestApp;
  let b: TestApp;
  before(async () => {
    db = await usePostgres();
    const url = await createDatabase(db, `replicas_${process.pid}`);
    dir = mkdtempSync(join(tmpdir(), 'svc-replicas-'));
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    config = { ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'data') }, stream: { flight: 'off' } };
    [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await db?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verdicts posted to either replica: SSE events and /edge/3d are byte-identical on both, and after a restart', async () => {
    for (let k = 0; k < 24; k++) await (k % 3 ? a : b).http.post(`${API}/verdict`).send(loadFrame(k)).expect((r) => { if (r.status !== 200) throw new Error(JSON.stringify(r.body)); });
    await until('both replicas to hold 24 nodes', () => sizeOf(a) === 24 && sizeOf(b) === 24);
    const [fromA, fromB] = await Promise.all([eventsFrom(a, 23), eventsFrom(b, 23)]);
    expect(fromA.map((e) => e.id)).to.deep.equal(Array.from({ length: 23 }, (_, i) => String(i + 1)));
    expect(fromB).to.deep.equal(fromA);
    // every event carries the full evaluation, wherever it was decided
    for (const e of fromA) {
      const body = JSON.parse(e.data) as Record<string, unknown>;
      expect(body.axes, `event ${e.id}`).to.be.an('object');
      expect(body.pac_bayes).to.be.an('object');
      expect(body).to.not.have.property('evaluation');
      expect(body.track_id).to.equal(loadFrame(Number(e.id)).track_id);
    }
    const sceneA = (await a.http.get(`${API}/edge/3d`).expect(200)).text;
    expect((await b.http.get(`${API}/edge/3d`).expect(200)).text).to.equal(sceneA);
    expect(JSON.parse(sceneA).verdicts_in_buffer).to.equal(24);

    // a replica started now knows those verdicts only from the ledger: the same bytes again
    const c = await buildTestApp(config);
    try {
      expect((await c.http.get(`${API}/edge/3d`).expect(200)).text).to.equal(sceneA);
      expect(await eventsFrom(c, 23)).to.deep.equal(fromA);
    } finally {
      await c.close();
    }
  });
});
