/**
 * SIGTERM under load, against the real entry point: keep-alive clients see only complete answers
 * (then a refused connection), and a postgres-mode replica that has just taken a burst of verdicts
 * exits within `server.shutdownTimeoutMs` plus the stated margin, with code 0.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SHUTDOWN_MARGIN_MS } from '../../src/shutdown.js';
import { createDatabase, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { openSse } from '../helpers/sse.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';

const frame = (k: number) => ({ track_id: `t${k % 97}`, source: 'ADS-B', lat: 36.5 + (k % 50) * 1e-4, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 });

interface Outcome {
  status?: number;
  connection?: string;
  code?: string;
}

/** One request on `agent`; a complete answer gives its status, a failure its error code. */
function call(agent: Agent, base: string, method: string, path: string, body?: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(`${base}${path}`, { agent, method, headers: data ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {} }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ code: err.code ?? err.message }));
    req.end(data);
  });
}

async function exitOf(svc: ServiceProcess): Promise<number | null> {
  if (svc.child.exitCode !== null || svc.child.signalCode !== null) return svc.child.exitCode;
  const [code] = (await once(svc.child, 'exit')) as [number | null];
  return code;
}

async function waitFor(what: string, ms: number, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function kill(svc: ServiceProcess | undefined): void {
  if (svc && svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
}

/** Slack for a busy machine between the signal and the parent seeing the exit. */
const EXIT_SLACK_MS = 1500;

describe('hostile: SIGTERM under load', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  let svc: ServiceProcess | undefined;
  afterEach(() => kill(svc));

  it('keep-alive clients looping across SIGTERM see only complete answers, then a refused connection; exit 0 within the timeout', async () => {
    const timeoutMs = 4000;
    svc = await startService({ SVC_SHUTDOWN_TIMEOUT_MS: String(timeoutMs) });
    const base = svc.base;
    // fewer sockets than loops: a socket freed by one answer carries the next request at once
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const outcomes: (Outcome & { afterSignal: boolean; health: boolean })[] = [];
    let signalled = false;
    const loop = async (n: number): Promise<void> => {
      for (let k = n; ; k += 24) {
        const health = k % 2 === 0;
        const o = health ? await call(agent, base, 'GET', '/api/svc/v1/health') : await call(agent, base, 'POST', '/api/svc/v1/verdict', frame(k));
        outcomes.push({ ...o, afterSignal: signalled, health });
        if (o.code) return; // the listener is gone: the one failure allowed
      }
    };
    const loops = Array.from({ length: 24 }, (_, n) => loop(n));
    await waitFor('answers before the signal', 20_000, () => outcomes.length >= 300);
    const t0 = Date.now();
    signalled = true;
    svc.child.kill('SIGTERM');
    await Promise.all(loops);
    const code = await exitOf(svc);
    const ms = Date.now() - t0;
    agent.destroy();
    const failures = outcomes.filter((o) => o.code);
    expect([...new Set(failures.map((o) => o.code))], 'every loop ends on a refused connection, none on a reset').to.deep.equal(['ECONNREFUSED']);
    expect(failures.every((o) => o.afterSignal)).to.equal(true);
    const drained = outcomes.filter((o) => o.afterSignal && o.status);
    expect(drained.length, 'requests on kept-alive connections were answered after the signal').to.be.greaterThan(0);
    expect(drained.some((o) => o.connection === 'close'), 'the ones that arrived after it said Connection: close').to.equal(true);
    // /health may say 503 (fail) on a machine busy enough to stall the loop: still a whole answer
    expect(outcomes.filter((o) => o.status && o.status >= 500 && !(o.health && o.status === 503)).map((o) => o.status), 'no answer is an error').to.deep.equal([]);
    expect(code, svc.stderr().slice(-2000)).to.equal(0);
    expect(ms, `exit took ${ms} ms`).to.be.below(timeoutMs + SHUTDOWN_MARGIN_MS + EXIT_SLACK_MS);
  });

  describe('postgres mode', () => {
    let db: TestDatabase;
    let keyDir: string;
    let keyFile: string;
    before(async () => {
      db = await usePostgres();
      keyDir = mkdtempSync(join(tmpdir(), 'svc-shutdown-key-'));
      keyFile = join(keyDir, 'signing-key.pem');
      writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    });
    after(async () => {
      rmSync(keyDir, { recursive: true, force: true });
      await db?.release();
    });

    it('a replica that has just started and taken 150 concurrent verdicts exits on SIGTERM within shutdownTimeoutMs + margin, code 0, without the last-resort exit', async () => {
      const timeoutMs = 4000;
      const url = await createDatabase(db, `shutdown_${process.pid}`);
      // warm-up on, as deployed: the kernel threads are still warming up when the burst ends
      svc = await startService({ SVC_LEDGER_MODE: 'postgres', SVC_DATABASE_URL: url, SVC_SIGNING_KEY_FILE: keyFile, SVC_SHUTDOWN_TIMEOUT_MS: String(timeoutMs), SVC_KERNEL_DEADLINE_MS: '20000', SVC_POOL_WARMUP: 'true' });
      // a viewer: the flight runs (its leadership connection, LISTEN, the stream hub all open)
      const viewer = await openSse(`${svc.base}/api/svc/v1/stream/verdicts`);
      const agent = new Agent({ keepAlive: true, maxSockets: 150 });
      const answers = await Promise.all(Array.from({ length: 150 }, (_, k) => call(agent, svc!.base, 'POST', '/api/svc/v1/verdict', frame(k))));
      expect(answers.filter((a) => a.status !== 200), 'the burst is answered').to.deep.equal([]);
      const warmedUp = svc.lines.some((l) => l.includes('"msg":"ready"'));
      const t0 = Date.now();
      svc.child.kill('SIGTERM');
      const code = await exitOf(svc);
      const ms = Date.now() - t0;
      agent.destroy();
      viewer.close();
      console.log(`      exit ${ms} ms after SIGTERM (kernel warm-up ${warmedUp ? 'had finished' : 'still running'}): ${svc.lines.find((l) => l.includes('"msg":"stopped"')) ?? 'no stopped line'}`);
      expect(code, svc.stderr().slice(-2000)).to.equal(0);
      expect(svc.lines.filter((l) => l.includes('shutdown deadline')), 'closed in order, not left behind').to.deep.equal([]);
      expect(ms, `exit took ${ms} ms`).to.be.below(timeoutMs + SHUTDOWN_MARGIN_MS + EXIT_SLACK_MS);
    });
  });
});
