// A file ledger restored from a backup is shorter than what its viewers already hold: a viewer
// resuming with a Last-Event-ID beyond the newest event is told `event: reset` at once (file mode
// has no replication lag to wait for), then gets the new events that reuse those ids. Through the
// whole app, on a real data directory copied back as an operator restores one.
import { expect } from 'chai';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

const API = '/api/svc/v1';
const config = (dataDir: string) => ({ stream: { flight: 'off', heartbeatMs: 1000 }, ledger: { mode: 'file', dataDir } });

async function post(t: TestApp, track_id: string): Promise<{ index: number; node_digest: string }> {
  const res = await t.http.post(`${API}/verdict`).send({ track_id, lat: 36.5, lon: -115.1 });
  expect(res.status).to.equal(200);
  return res.body.ledger as { index: number; node_digest: string };
}

describe('hostile: a viewer ahead of a file ledger restored from a backup', function () {
  this.timeout(180_000);
  let root: string;
  const apps: TestApp[] = [];
  const build = async (dataDir: string): Promise<TestApp> => {
    const t = await buildTestApp(config(dataDir));
    apps.push(t);
    return t;
  };
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'svc-restore-'));
  });
  after(async () => {
    for (const t of apps.splice(0)) await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('gets event: reset naming the newest id before any new verdict, then the new events under the reused ids', async () => {
    const data = join(root, 'data');
    const backup = join(root, 'backup');
    // three verdicts, then a backup of the stopped service's data directory
    let t = await build(data);
    for (const k of [0, 1, 2]) await post(t, `OLD${k}`);
    await t.close();
    apps.splice(0);
    cpSync(data, backup, { recursive: true });
    // three more that viewers see, then the directory is restored from the backup
    t = await build(data);
    const held = [];
    for (const k of [3, 4, 5]) held.push(await post(t, `LOST${k}`));
    expect(held.map((h) => h.index)).to.deep.equal([3, 4, 5]);
    await t.close();
    apps.splice(0);
    rmSync(data, { recursive: true });
    cpSync(backup, data, { recursive: true });

    t = await build(data);
    expect((await t.http.get(`${API}/ledger/readiness`)).body.integrity.nodes).to.equal(3);
    const viewer = await openSse(`${t.baseUrl}${API}/stream/verdicts`, { 'last-event-id': '5' });
    try {
      const [reset] = await viewer.waitFor(1);
      expect(reset!.event).to.equal('reset');
      expect(reset!.id).to.equal(null);
      expect(JSON.parse(reset!.data)).to.deep.include({ newest_id: 2 });
      // at once: a grace of even 2 s would let two one-second heartbeats through first
      expect(viewer.comments.filter((c) => c === ': ping').length).to.be.at.most(1);
      // the restored ledger is unchanged: the reset came without waiting for it to pass id 5
      expect((await t.http.get(`${API}/ledger/readiness`)).body.integrity.nodes).to.equal(3);

      const next = await post(t, 'NEW3');
      expect(next.index).to.equal(3);
      expect(next.node_digest).to.not.equal(held[0]!.node_digest);
      const events = await viewer.waitFor(2);
      expect(events[1]!).to.include({ event: 'verdict', id: '3' });
      expect(JSON.parse(events[1]!.data)).to.deep.include({ track_id: 'NEW3' });
      expect(JSON.parse(events[1]!.data).ledger).to.deep.include({ index: 3, node_digest: next.node_digest });
    } finally {
      viewer.close();
    }
  });
});
