// The port opens before the ledger is opened: while the store is still being reached, every request
// is answered 503 `starting` with Retry-After, /health with a health document that says so.
import { expect } from 'chai';
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killService, startService } from '../helpers/service-process.js';
import { until } from '../helpers/until.js';
import { buildTestApp } from '../helpers/app.js';

describe('start-up: the port opens at once', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);

  it('answers 503 starting (with Retry-After) while a hung database keeps the ledger from opening', async () => {
    // a database that accepts connections and never answers, as a stopped process does
    const sockets: Socket[] = [];
    const hung = createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    const port = (hung.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'svc-startup-'));
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const svc = await startService(
      { SVC_LEDGER_MODE: 'postgres', SVC_DATABASE_URL: `postgres://svc@127.0.0.1:${port}/svc`, SVC_SIGNING_KEY_FILE: keyFile, SVC_PG_CONNECT_TIMEOUT_MS: '30000' },
      'listening',
    );
    try {
      const health = await fetch(`${svc.base}/api/svc/v1/health`);
      expect(health.status).to.equal(503);
      expect(health.headers.get('retry-after')).to.equal('1');
      expect(await health.json()).to.deep.include({ status: 'fail', serviceId: 'svc', output: 'starting: opening the ledger and starting the worker threads' });
      const other = await fetch(`${svc.base}/api/svc/v1/receipt/export`);
      expect([other.status, await other.json()]).to.deep.equal([503, { detail: 'Service starting: the ledger is being opened and the worker threads started; retry shortly' }]);
      expect(sockets.length, 'the service is still trying to reach the database').to.be.at.least(1);
    } finally {
      await killService(svc);
      for (const s of sockets) s.destroy();
      hung.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a normal start: serving follows listening, and the app answers from then on', async () => {
    const svc = await startService({ SVC_LEDGER_MODE: 'memory' }, 'listening');
    try {
      await until('the serving line', () => svc.lines.some((l) => l.includes('"msg":"serving"')));
      expect((await fetch(`${svc.base}/api/svc/v1/receipt/export`)).status).to.equal(200);
    } finally {
      await killService(svc);
    }
  });
});

describe('start-up: the ledger check never waits for the kernel warm-up', function () {
  this.timeout(300_000);

  it('a restart with records to check is ready while the kernel threads are still warming up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-startup-lane-'));
    const frame = (k: number) => ({ track_id: `sl${k}`, lat: 36.2 + k * 1e-5, lon: -115.16 });
    try {
      // one checkpoint, of the first node (signed at once; then none within the long interval): the
      // restart checks the 39 records after it
      const first = await buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: 3_600_000 } });
      try {
        for (let k = 0; k < 40; k++) await first.http.post('/api/svc/v1/verdict').send(frame(k)).expect(200);
      } finally {
        await first.close();
      }
      const again = await buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: 3_600_000 }, pool: { warmup: true, warmupPasses: 30 } });
      try {
        // the signing lane has booted by now (it checked the records), so a pool not yet started is the kernel lane warming up
        const kernelsWarm = again.services.pool.started;
        const r = (await again.http.get('/api/svc/v1/ledger/readiness')).body as { ready: boolean; replay: { nodes: number; from_checkpoint: number } };
        expect(r.replay).to.deep.include({ nodes: 40, from_checkpoint: 1 });
        expect(kernelsWarm, 'the kernel lane was still warming up when the ledger had been checked').to.equal(false);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
