import { expect } from 'chai';
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { runServiceToEnd } from '../helpers/service-process.js';
import { sh, withTempDir, write } from '../helpers/shell.js';
import { acquireLock, LockHeldError } from '../../src/ledger/store/file-store.js';
import { auditLedgerFile, type FileNode } from '../helpers/ledger-audit.js';

const frame = { track_id: 'f11e01', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-ledger-'));
}

const fileMode = (dir: string, extra: Record<string, unknown> = {}) => ({ ledger: { mode: 'file', dataDir: dir, ...extra } });

describe('ledger file mode', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const dir = (): string => {
    const d = freshDir();
    dirs.push(d);
    return d;
  };

  it('persists verdicts and the key across a restart: same nodes, same root, same keyid, and appends continue', async () => {
    const d = dir();
    let t: TestApp = await buildTestApp(fileMode(d));
    const first = await Promise.all(Array.from({ length: 30 }, (_, i) => t.http.post('/api/svc/v1/verdict').send({ ...frame, track_id: `f11e${i.toString(16).padStart(2, '0')}` })));
    expect(first.map((r) => r.status)).to.deep.equal(Array(30).fill(200));
    const before = (await t.http.get('/api/svc/v1/receipt/export')).body;
    const keyid = (await t.http.get('/api/svc/v1/edge/pubkey')).body.keyid as string;
    const ready = await t.http.get('/api/svc/v1/ledger/readiness');
    expect(ready.status).to.equal(200);
    expect(ready.body).to.include({ durability_state: 'DURABLE', requested_mode: 'FILE', persistence_scope: 'LOCAL_FILE', adapter_configured: true, adapter_state: 'READY', production_ready: true });
    expect(before.limits.map((l: { code: string }) => l.code)).to.not.include('EPHEMERAL_LEDGER');
    // the doctrine, the evidence claim and the posture baseline follow the mode
    const doctrine = (await t.http.get('/api/svc/v1/doctrine')).body;
    expect(doctrine.limits.map((l: { code: string }) => l.code)).to.not.include('EPHEMERAL_LEDGER');
    expect(doctrine.honesty_rules.find((r: { id: string }) => r.id === 'H4').text).to.match(/append-only file .* written durably \(O_DSYNC, as write \+ fdatasync\) before its answer/);
    const claim = (await t.http.get('/api/svc/v1/evidence/research/ledger-durability/live')).body;
    expect(claim.status).to.equal('verified');
    expect(claim.observations).to.include({ mode: 'file', durability_state: 'DURABLE', persistence_scope: 'LOCAL_FILE', limit_present: false });
    const drift = (await t.http.get('/api/svc/v1/posture/drift')).body;
    expect(drift.checks.find((c: { id: string }) => c.id === 'ledger-mode')).to.include({ actual: 'DURABLE', status: 'pass' });
    await t.close();

    // the key file is private and the log audits with nothing but the file itself
    expect(statSync(join(d, 'signing-key.pem')).mode & 0o777).to.equal(0o600);
    expect(auditLedgerFile(d)).to.deep.equal({ size: 30, root: before.khipu_root });

    t = await buildTestApp(fileMode(d));
    try {
      const after = (await t.http.get('/api/svc/v1/receipt/export')).body;
      expect([after.ledger_size, after.khipu_root, after.keyid]).to.deep.equal([30, before.khipu_root, keyid]);
      expect(after.verification.verified).to.equal(true);
      // every receipt answered before the restart is at its index with the same bytes
      for (const r of first) {
        const e = (await t.http.get(`/api/svc/v1/receipt/export?index=${r.body.ledger.index}`)).body;
        expect(e.node_digest).to.equal(r.body.ledger.node_digest);
        expect(e.payload_b64).to.equal(r.body.receipt.payload_b64);
      }
      const readiness = (await t.http.get('/api/svc/v1/ledger/readiness')).body;
      expect(readiness.replay).to.include({ state: 'COMPLETE', nodes: 30 });
      const next = await t.http.post('/api/svc/v1/verdict').send(frame);
      expect(next.status).to.equal(200);
      expect(next.body.ledger.index).to.equal(30);
      expect(next.body.ledger.prev).to.equal(before.node_digest);
    } finally {
      await t.close();
    }
    expect(auditLedgerFile(d).size).to.equal(31);
  });

  it('a torn last line is trimmed, recorded in recovery, and the service goes on', async () => {
    const d = dir();
    let t = await buildTestApp(fileMode(d));
    for (let i = 0; i < 3; i++) expect((await t.http.post('/api/svc/v1/verdict').send(frame)).status).to.equal(200);
    const root = (await t.http.get('/api/svc/v1/receipt/export')).body.khipu_root;
    await t.close();
    const path = join(d, 'khipu.jsonl');
    const good = readFileSync(path);
    writeFileSync(path, Buffer.concat([good, Buffer.from('{"i":3,"kind":"counter_uas_dec')]));
    t = await buildTestApp(fileMode(d));
    try {
      const r = await t.http.get('/api/svc/v1/ledger/readiness');
      expect(r.status).to.equal(200);
      expect(r.body.recovery.trimmed_bytes).to.equal(30);
      expect(r.body.replay).to.include({ state: 'COMPLETE', nodes: 3 });
      expect(r.body.integrity.root).to.equal(root);
      expect(readFileSync(path).equals(good)).to.equal(true);
      expect((await t.http.post('/api/svc/v1/verdict').send(frame)).body.ledger.index).to.equal(3);
    } finally {
      await t.close();
    }
  });

  it('a flipped byte mid-file is refused with its index named; the verified prefix is still served', async () => {
    const d = dir();
    let t = await buildTestApp(fileMode(d));
    for (let i = 0; i < 5; i++) expect((await t.http.post('/api/svc/v1/verdict').send(frame)).status).to.equal(200);
    await t.close();
    const path = join(d, 'khipu.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    // node 2 is line 4: change one character of its payload (base64 'A' <-> 'B')
    const node2 = JSON.parse(lines[3]!) as FileNode;
    const at = 10;
    const flipped = node2.payload.slice(0, at) + (node2.payload[at] === 'A' ? 'B' : 'A') + node2.payload.slice(at + 1);
    lines[3] = lines[3]!.replace(node2.payload, flipped);
    writeFileSync(path, lines.join('\n'));
    const bytesBefore = readFileSync(path);
    t = await buildTestApp(fileMode(d));
    try {
      const r = await t.http.get('/api/svc/v1/ledger/readiness');
      expect(r.status).to.equal(503);
      expect(r.body).to.include({ adapter_state: 'CORRUPT', durability_state: 'CORRUPT', ready: false });
      expect(r.body.replay).to.include({ first_bad_index: 2, nodes: 2 });
      expect(r.body.reason).to.match(/damaged at node 2/);
      const e = await t.http.get('/api/svc/v1/receipt/export?index=1');
      expect(e.status).to.equal(200);
      expect(e.body.verification.verified).to.equal(true);
      expect((await t.http.get('/api/svc/v1/receipt/export?index=2')).status).to.equal(404);
      const v = await t.http.post('/api/svc/v1/verdict').send(frame);
      expect(v.status).to.equal(503);
      expect(v.headers['retry-after']).to.match(/^\d+$/);
      expect(v.body.detail).to.match(/damaged at node 2/);
    } finally {
      await t.close();
    }
    // nothing was rewritten: the damaged file is left for the operator exactly as found
    expect(readFileSync(path).equals(bytesBefore)).to.equal(true);
  });

  it('a signature swapped for another valid one is found by the start-up sweep', async () => {
    const d = dir();
    let t = await buildTestApp(fileMode(d));
    for (let i = 0; i < 4; i++) expect((await t.http.post('/api/svc/v1/verdict').send({ ...frame, track_id: `5e${i}` })).status).to.equal(200);
    await t.close();
    const path = join(d, 'khipu.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    const n1 = JSON.parse(lines[2]!) as FileNode;
    const n3 = JSON.parse(lines[4]!) as FileNode;
    lines[4] = lines[4]!.replace(n3.sig, n1.sig); // a real signature, but over another receipt
    writeFileSync(path, lines.join('\n'));
    t = await buildTestApp(fileMode(d));
    try {
      const r = await t.http.get('/api/svc/v1/ledger/readiness');
      expect(r.status).to.equal(503);
      expect(r.body.replay.first_bad_index).to.equal(3);
      expect(r.body.reason).to.match(/node 3: signature does not verify/);
    } finally {
      await t.close();
    }
  });

  it('the lock: a second writer on the same directory is refused, naming the holder; a dead holder is taken over', () => {
    const d = dir();
    const release = acquireLock(d);
    expect(() => acquireLock(d)).to.throw(LockHeldError, new RegExp(`locked by pid ${process.pid} on `));
    release();
    expect(readFileSync(join(d, 'LOCK'), 'utf8')).to.equal(''); // kept, naming nobody
    // a lock left by a process that no longer runs (SIGKILL) does not block a restart
    writeFileSync(join(d, 'LOCK'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), started_at: 'then' }));
    const again = acquireLock(d);
    expect(JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')).pid).to.equal(process.pid);
    again();
  });

  it('a service process on a data directory another service holds refuses to start and names the holder', async () => {
    const d = dir();
    // the holder is an app in this process (a service process would cost a second start, ~2.5 s)
    const a = await buildTestApp(fileMode(d));
    try {
      const b = await runServiceToEnd({ SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: d });
      expect(b.code).to.equal(2);
      expect(b.stderr).to.match(new RegExp(`locked by pid ${process.pid} on `));
    } finally {
      await a.close();
    }
  });

  it('key rotation: receipts signed before it still verify, by keyid, online and with openssl', async () => {
    const d = dir();
    let t = await buildTestApp(fileMode(d));
    const old = (await t.http.post('/api/svc/v1/verdict').send(frame)).body;
    const oldKeyid = old.receipt.keyid as string;
    await t.close();
    // the operator retires the key: the next start creates a new one; the old public key stays
    renameSync(join(d, 'signing-key.pem'), join(d, 'signing-key.retired.pem'));
    t = await buildTestApp(fileMode(d));
    try {
      const fresh = (await t.http.post('/api/svc/v1/verdict').send(frame)).body;
      expect(fresh.receipt.keyid).to.not.equal(oldKeyid);
      const pub = (await t.http.get('/api/svc/v1/edge/pubkey')).body;
      expect(pub.keyid).to.equal(fresh.receipt.keyid);
      expect(pub.keys.map((k: { keyid: string; status: string }) => [k.keyid, k.status])).to.deep.equal([
        [fresh.receipt.keyid, 'current'],
        [oldKeyid, 'retired'],
      ]);
      const exported = (await t.http.get('/api/svc/v1/receipt/export?index=0')).body;
      expect(exported.keyid).to.equal(oldKeyid);
      expect(exported.verification.verified).to.equal(true);
      expect(exported.public_key_url).to.match(new RegExp(`pubkey\\.pem\\?keyid=${oldKeyid}$`));
      // the export's offline recipe, verbatim, fetches the retired key and openssl says Verified OK
      const res = await t.http.get('/api/svc/v1/receipt/export?index=0');
      await withTempDir(async (tmp) => {
        await write(tmp, 'receipt.json', res.text);
        const out = await sh(tmp, (res.body.verify_offline as string[]).join('\n'));
        expect(out.out).to.include('Verified OK');
        expect(out.status).to.equal(0);
      });
      const pem = await t.http.get(`/api/svc/v1/edge/pubkey.pem?keyid=${oldKeyid}`);
      expect(pem.text).to.equal(readFileSync(join(d, 'keys', `${oldKeyid}.pem`), 'utf8'));
      for (const receipt of [old, fresh]) {
        const v = (await t.http.post('/khipu/verify').send(receipt.receipt.dsse)).body;
        expect(v, receipt.receipt.keyid).to.include({ verified: true });
        expect(v.key.keyid).to.equal(receipt.receipt.keyid);
      }
      expect(auditLedgerFile(d).size).to.equal(2);
    } finally {
      await t.close();
    }
  });
});
