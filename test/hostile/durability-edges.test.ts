// The edges of durability in file mode, each through the whole app: a last node that lost only its
// newline is kept (its index is never handed out again); a first start on a full disk leaves no
// empty key file and degrades as a running instance does (kernels and reads up, writes 503 with
// Retry-After) until the disk has room; a damaged ledger fails readiness but not /health; and no
// answer names the absolute data directory. The full disk is a fault injected into this process's
// fs calls for paths under the test's directory (as the unit tests inject failing writes), since a
// small filesystem cannot be mounted here.
import { expect } from 'chai';
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import fs, { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveSigningKey, saveSigningKey } from '../../src/ledger/keys.js';
import { acquireLock, LockHeldError } from '../../src/ledger/store/file-store.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { auditLedgerFile, type FileNode } from '../helpers/ledger-audit.js';

const API = '/api/svc/v1';
const frame = { track_id: 'ed9e51', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };
const fileMode = (dir: string) => ({ ledger: { mode: 'file', dataDir: dir } });
const keyidOfPem = (pem: string): string => createHash('sha256').update(createPublicKey(createPrivateKey(pem)).export({ type: 'spki', format: 'der' })).digest('hex');

const ENOSPC = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });

/**
 * A full disk under `dir`: every call that needs a new data block there (a write, a new directory)
 * fails with ENOSPC, as on a filesystem with no free block; an empty file can still be created, as
 * there. Calls elsewhere (the logger's stdout) go through. `free()` gives the room back.
 */
async function fullDisk(dir: string): Promise<{ free(): void }> {
  const roots = [dir, realpathSync(dir)];
  const inside = (p: string): boolean => roots.some((r) => p === r || p.startsWith(`${r}/`));
  const fdInside = (fd: number): boolean => {
    try {
      return inside(readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      return false;
    }
  };
  const probe = await fsp.open(new URL(import.meta.url), 'r');
  const handleProto = Object.getPrototypeOf(probe) as { write: (...args: unknown[]) => Promise<unknown>; fd: number };
  await probe.close();
  const real = { writeSync: fs.writeSync, mkdirSync: fs.mkdirSync, mkdir: fsp.mkdir, handleWrite: handleProto.write };
  fs.writeSync = ((fd: number, ...rest: unknown[]) => {
    if (fdInside(fd)) throw ENOSPC();
    return Reflect.apply(real.writeSync, fs, [fd, ...rest]) as number;
  }) as typeof fs.writeSync;
  fs.mkdirSync = ((p: fs.PathLike, ...rest: unknown[]) => {
    if (inside(String(p)) && !existsSync(p)) throw Object.assign(new Error(`ENOSPC: no space left on device, mkdir '${String(p)}'`), { code: 'ENOSPC', syscall: 'mkdir' });
    return Reflect.apply(real.mkdirSync, fs, [p, ...rest]) as string | undefined;
  }) as typeof fs.mkdirSync;
  handleProto.write = function (this: { fd: number }, ...args: unknown[]) {
    if (fdInside(this.fd)) return Promise.reject(ENOSPC());
    return Reflect.apply(real.handleWrite, this, args) as Promise<unknown>;
  };
  syncBuiltinESMExports();
  let freed = false;
  return {
    free() {
      if (freed) return;
      freed = true;
      fs.writeSync = real.writeSync;
      fs.mkdirSync = real.mkdirSync;
      handleProto.write = real.handleWrite;
      syncBuiltinESMExports();
    },
  };
}

/** Polls `check` until it holds (each poll one event-loop turn apart, a few ms), or fails after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** No answer names the data directory by its absolute path (nor by the path it resolves to). */
function expectNoPath(text: string, dir: string, where: string): void {
  for (const p of new Set([dir, realpathSync(dir)])) expect(text.includes(p), `${where} names ${p}`).to.equal(false);
}

describe('hostile: durability edges of the file ledger', function () {
  const dirs: string[] = [];
  const apps: TestApp[] = [];
  const undo: (() => void)[] = [];
  const dir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-edges-'));
    dirs.push(d);
    return d;
  };
  const build = async (d: string): Promise<TestApp> => {
    const t = await buildTestApp(fileMode(d));
    apps.push(t);
    return t;
  };
  afterEach(async () => {
    undo.splice(0).forEach((u) => u());
    for (const t of apps.splice(0)) await t.close();
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('an acknowledged last node that lost only its newline is kept: same digest at its index, the next verdict takes the next index', async () => {
    const d = dir();
    const t = await build(d);
    const acked = [];
    for (let i = 0; i < 3; i++) acked.push((await t.http.post(`${API}/verdict`).send({ ...frame, track_id: `ed9e5${i}` })).body as { ledger: { index: number; node_digest: string } });
    expect(acked.map((a) => a.ledger.index)).to.deep.equal([0, 1, 2]);
    await t.close();
    apps.splice(0);
    const path = join(d, 'khipu.jsonl');
    const whole = readFileSync(path);
    expect(whole[whole.length - 1]).to.equal(0x0a);
    writeFileSync(path, whole.subarray(0, whole.length - 1)); // only the newline is lost

    const again = await build(d);
    const ready = await again.http.get(`${API}/ledger/readiness`);
    expect(ready.status).to.equal(200);
    expect(ready.body.replay).to.include({ state: 'COMPLETE', nodes: 3 });
    expect(ready.body.recovery).to.not.have.property('trimmed_bytes');
    expect(readFileSync(path).equals(whole)).to.equal(true); // the newline is back, nothing else changed
    const two = await again.http.get(`${API}/receipt/export?index=2`);
    expect([two.status, two.body.node_digest, two.body.verification.verified]).to.deep.equal([200, acked[2]!.ledger.node_digest, true]);
    const next = await again.http.post(`${API}/verdict`).send(frame);
    expect(next.status).to.equal(200);
    expect(next.body.ledger.index).to.equal(3);
    expect(next.body.ledger.prev).to.equal(acked[2]!.ledger.node_digest);
    expect(auditLedgerFile(d).size).to.equal(4);
  });

  it('a torn partial last line is still trimmed, and its index is taken by the next verdict', async () => {
    const d = dir();
    const t = await build(d);
    for (let i = 0; i < 2; i++) expect((await t.http.post(`${API}/verdict`).send(frame)).status).to.equal(200);
    await t.close();
    apps.splice(0);
    const path = join(d, 'khipu.jsonl');
    const good = readFileSync(path);
    const torn = good.toString('utf8').split('\n')[2]!.slice(0, 57); // a prefix of a node line
    writeFileSync(path, Buffer.concat([good, Buffer.from(torn)]));
    const again = await build(d);
    const ready = (await again.http.get(`${API}/ledger/readiness`)).body;
    expect([ready.replay.nodes, ready.recovery.trimmed_bytes]).to.deep.equal([2, torn.length]);
    expect((await again.http.post(`${API}/verdict`).send(frame)).body.ledger.index).to.equal(2);
  });

  it('a first start on a full disk: no key file left empty, kernels and reads up, writes 503 with Retry-After; with room again it resumes by itself, and the key it saved is the one that signs', async () => {
    const d = dir();
    const disk = await fullDisk(d);
    undo.push(() => disk.free());
    const t = await build(d);
    // nothing half-written: no key file at all rather than an empty one, no temporary file left
    expect(existsSync(join(d, 'signing-key.pem')), 'signing-key.pem').to.equal(false);
    expect(readdirSync(d).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    // the lock is held even though its holder's name could not be written
    expect(() => acquireLock(d)).to.throw(LockHeldError, 'it has not written its name yet');

    const health = await t.http.get(`${API}/health`);
    expect(health.status).to.equal(200);
    expect(health.body.checks['ledger:store']).to.include({ status: 'warn', observedValue: 'DEGRADED' });
    expectNoPath(health.text, d, '/health');
    expect((await t.http.get(`${API}/ssm/scan?seq_len=50&state_dim=3&seed=7`)).status).to.equal(200);
    const exported = await t.http.get(`${API}/receipt/export`);
    expect([exported.status, exported.body.export_state]).to.deep.equal([200, 'EMPTY_LEDGER']);
    const refused = await t.http.post(`${API}/verdict`).send(frame);
    expect(refused.status).to.equal(503);
    expect(refused.headers['retry-after']).to.match(/^[1-9]\d*$/);
    const readiness = await t.http.get(`${API}/ledger/readiness`);
    expect(readiness.status).to.equal(503);
    expect(readiness.body).to.include({ adapter_state: 'UNAVAILABLE', durability_state: 'DEGRADED', ready: false });
    expect(readiness.body.reason).to.match(/ENOSPC/);
    expectNoPath(readiness.text, d, '/ledger/readiness');

    disk.free();
    await until('the store to recover', async () => (await t.http.get(`${API}/ledger/readiness`)).status === 200);
    const first = await t.http.post(`${API}/verdict`).send(frame);
    expect(first.status).to.equal(200);
    expect(first.body.ledger.index).to.equal(0);
    const pem = readFileSync(join(d, 'signing-key.pem'), 'utf8');
    expect(statSync(join(d, 'signing-key.pem')).mode & 0o777).to.equal(0o600);
    expect(keyidOfPem(pem)).to.equal(first.body.receipt.keyid);
    expect(existsSync(join(d, 'keys', `${first.body.receipt.keyid as string}.pem`))).to.equal(true);
    await t.close();
    apps.splice(0);

    // the next start uses the saved key, and the receipt verifies offline from the file alone
    const again = await build(d);
    expect((await again.http.get(`${API}/edge/pubkey`)).body.keyid).to.equal(first.body.receipt.keyid);
    expect(auditLedgerFile(d).size).to.equal(1);
  });

  it('the signing key on a full disk: no file rather than an empty one; saved whole once there is room; an empty file left by older versions is replaced', async () => {
    const d = dir();
    const file = join(d, 'signing-key.pem');
    const disk = await fullDisk(d);
    undo.push(() => disk.free());
    const key = resolveSigningKey({ mode: 'file', dataDir: d, signingKeyFile: null });
    expect([existsSync(file), key.ephemeral, key.unsaved?.error.message]).to.deep.equal([false, false, 'ENOSPC: no space left on device, write']);
    expect(readdirSync(d)).to.deep.equal([]);
    expect(() => saveSigningKey(key)).to.throw('ENOSPC');
    expect(readdirSync(d)).to.deep.equal([]);
    disk.free();
    saveSigningKey(key);
    expect([keyidOfPem(readFileSync(file, 'utf8')), key.unsaved]).to.deep.equal([key.keyid, undefined]);
    expect(resolveSigningKey({ mode: 'file', dataDir: d, signingKeyFile: null }).keyid).to.equal(key.keyid);
    writeFileSync(file, '');
    const fresh = resolveSigningKey({ mode: 'file', dataDir: d, signingKeyFile: null });
    expect(keyidOfPem(readFileSync(file, 'utf8'))).to.equal(fresh.keyid);
  });

  it('a restart on a full disk with a last node that lost its newline: the node is served, appends wait (503) until its newline can be written, then take the next index', async () => {
    const d = dir();
    const t = await build(d);
    const acked = (await t.http.post(`${API}/verdict`).send(frame)).body as { ledger: { index: number; node_digest: string } };
    await t.close();
    apps.splice(0);
    const path = join(d, 'khipu.jsonl');
    const whole = readFileSync(path);
    writeFileSync(path, whole.subarray(0, whole.length - 1));
    const disk = await fullDisk(d);
    undo.push(() => disk.free());
    const again = await build(d);
    expect((await again.http.get(`${API}/receipt/export?index=0`)).body.node_digest).to.equal(acked.ledger.node_digest);
    const refused = await again.http.post(`${API}/verdict`).send(frame);
    expect(refused.status).to.equal(503);
    expect(refused.headers['retry-after']).to.match(/^[1-9]\d*$/);
    expect((await again.http.get(`${API}/health`)).status).to.equal(200);
    const readiness = await again.http.get(`${API}/ledger/readiness`);
    expect([readiness.status, readiness.body.adapter_state, readiness.body.replay.nodes]).to.deep.equal([503, 'UNAVAILABLE', 1]);
    // "at start" until the first retry, which a slow machine may already have made
    expect(readiness.body.reason).to.match(/^STORE_UNAVAILABLE: the newline of the last line could not be written (at start )?\(ENOSPC/);
    disk.free();
    await until('the store to recover', async () => (await again.http.get(`${API}/ledger/readiness`)).status === 200);
    const next = await again.http.post(`${API}/verdict`).send(frame);
    expect([next.status, next.body.ledger.index, next.body.ledger.prev]).to.deep.equal([200, 1, acked.ledger.node_digest]);
    expect(auditLedgerFile(d).size).to.equal(2);
  });

  it('a damaged ledger fails readiness (503, CORRUPT) but not /health, which warns; neither names the data directory', async () => {
    const d = dir();
    const t = await build(d);
    for (let i = 0; i < 3; i++) expect((await t.http.post(`${API}/verdict`).send(frame)).status).to.equal(200);
    await t.close();
    apps.splice(0);
    const path = join(d, 'khipu.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    const n1 = JSON.parse(lines[2]!) as FileNode;
    lines[2] = lines[2]!.replace(n1.pae_sha256, n1.pae_sha256.replace(/^./, (c) => (c === '0' ? '1' : '0')));
    writeFileSync(path, lines.join('\n'));

    const again = await build(d);
    const readiness = await again.http.get(`${API}/ledger/readiness`);
    expect(readiness.status).to.equal(503);
    expect(readiness.body).to.include({ adapter_state: 'CORRUPT', durability_state: 'CORRUPT', ready: false });
    expect(readiness.body.replay).to.include({ first_bad_index: 1, nodes: 1 });
    expectNoPath(readiness.text, d, '/ledger/readiness');
    const health = await again.http.get(`${API}/health`);
    expect(health.status).to.equal(200);
    expect(health.body.status).to.equal('warn');
    expect(health.body.checks['ledger:store']).to.include({ status: 'warn', observedValue: 'CORRUPT' });
    expect(health.body.checks['ledger:integrity'].status).to.equal('pass'); // the served prefix verifies
    expectNoPath(health.text, d, '/health');
    expect((await again.http.get(`${API}/receipt/export?index=0`)).body.verification.verified).to.equal(true);
  });

  it('no answer that describes the store names the absolute data directory: /health, readiness, the evidence readiness, exports', async () => {
    const d = dir();
    const t = await build(d);
    expect((await t.http.post(`${API}/verdict`).send(frame)).status).to.equal(200);
    for (const route of ['/health', '/ledger/readiness', '/readiness', '/readiness/ledger/live', '/receipt/export', '/evidence/research/ledger-durability/live', '/doctrine']) {
      const res = await t.http.get(`${API}${route}`);
      expect(res.status, route).to.be.oneOf([200, 503]);
      expectNoPath(res.text, d, route);
    }
    const health = (await t.http.get(`${API}/health`)).body;
    expect(health.checks['ledger:store'].output).to.equal('file mode (LOCAL_FILE): appending to khipu.jsonl in the data directory with O_DSYNC writes (durable before every acknowledgement)');
  });
});
