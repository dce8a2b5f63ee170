import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startService, type ServiceProcess } from '../helpers/service-process.js';
import { auditLedgerFile } from '../helpers/ledger-audit.js';
import { rootFromLeafHashes } from '../../src/lib/merkle.js';
import { tilePath } from '../../src/lib/tlog-tiles.js';
import { projectRoot } from '../../src/config/load.js';

const frame = { track_id: 'c4a5e0', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };

interface Acked {
  index: number;
  digest: string;
  payload: string;
}

/** `clients` loops posting verdicts until `stop` resolves; every 200 answer is recorded. */
async function load(base: string, clients: number, stop: Promise<void>, acked: Acked[]): Promise<{ acked: Acked[]; failed: number }> {
  let failed = 0;
  let stopped = false;
  void stop.then(() => (stopped = true));
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; !stopped; i++) {
        try {
          const res = await fetch(`${base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...frame, track_id: `c${c}${i % 50}` }) });
          const body = (await res.json()) as { ledger: { index: number; node_digest: string }; receipt: { payload_b64: string } };
          if (res.status === 200) acked.push({ index: body.ledger.index, digest: body.ledger.node_digest, payload: body.receipt.payload_b64 });
        } catch {
          failed++; // the connection died with the process: never acknowledged
          return;
        }
      }
    }),
  );
  return { acked, failed };
}

async function exportAt(base: string, index: number): Promise<{ node_digest: string; payload_b64: string; verification: { verified: boolean } }> {
  const res = await fetch(`${base}/api/svc/v1/receipt/export?index=${index}`);
  expect(res.status, `index ${index}`).to.equal(200);
  return (await res.json()) as { node_digest: string; payload_b64: string; verification: { verified: boolean } };
}

describe('crash safety (file mode): SIGKILL under load loses nothing acknowledged', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-crash-'));
  let svc: ServiceProcess | null = null;
  after(() => {
    svc?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('every verdict answered 200 before the kill is at its index with the same bytes; chain and signatures verify; appends continue', async () => {
    const env = { SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir };
    svc = await startService(env);
    const first = svc;
    const exited = new Promise((r) => first.child.once('exit', r)); // before the kill: exit may come first
    // the kill comes at a random moment once the load is flowing (at least 20 verdicts answered)
    const acked: Acked[] = [];
    const delayMs = Math.floor(Math.random() * 600);
    const killed = (async () => {
      while (acked.length < 20) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, delayMs));
      first.child.kill('SIGKILL');
    })();
    await load(first.base, 16, killed, acked);
    await exited;
    expect(acked.length, `verdicts acknowledged before SIGKILL (${delayMs} ms after the 20th)`).to.be.greaterThan(20);

    svc = await startService(env);
    const { size } = auditLedgerFile(dir);
    expect(size).to.be.at.least(acked.length);
    for (const a of acked) {
      const e = await exportAt(svc.base, a.index);
      expect(e.node_digest, `node ${a.index}`).to.equal(a.digest);
      expect(e.payload_b64, `node ${a.index}`).to.equal(a.payload);
      expect(e.verification.verified).to.equal(true);
    }
    const ready = (await (await fetch(`${svc.base}/api/svc/v1/ledger/readiness`)).json()) as { ready: boolean; replay: { nodes: number } };
    expect(ready).to.include({ ready: true });
    expect(ready.replay.nodes).to.equal(size);
    const next = await fetch(`${svc.base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(frame) });
    expect(next.status).to.equal(200);
    expect(((await next.json()) as { ledger: { index: number } }).ledger.index).to.equal(size);
    const stopped = new Promise((r) => svc!.child.once('exit', r));
    svc.child.kill('SIGTERM');
    await stopped;
    svc = null;
    expect(auditLedgerFile(dir).size).to.equal(size + 1);
  });
});

describe('crash safety (file mode): checkpoints across a SIGKILL', function () {
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-crash-cp-'));
  let svc: ServiceProcess | null = null;
  after(() => {
    svc?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('killed while signing checkpoints under load: every checkpoint served before was persisted first, and the restarted log extends each one', async () => {
    // a checkpoint every 10 ms under load: the kill lands between persisting and publishing sooner or later
    const env = { SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir, SVC_CHECKPOINT_INTERVAL_MS: '10' };
    svc = await startService(env);
    const first = svc;
    const exited = new Promise((r) => first.child.once('exit', r));
    const seen = new Map<number, string>();
    const acked: Acked[] = [];
    // waits for two checkpoints as well: on a busy machine 40 verdicts can land before the watcher's first read
    const killed = (async () => {
      while (acked.length < 40 || seen.size < 2) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      first.child.kill('SIGKILL');
    })();
    let stopped = false;
    void killed.then(() => (stopped = true));
    const watcher = (async () => {
      while (!stopped) {
        try {
          const note = await (await fetch(`${first.base}/api/svc/v1/ledger/checkpoint`)).text();
          const [, size, root] = note.split('\n');
          if (size) seen.set(Number(size), root!);
        } catch {
          return; // the process is gone
        }
      }
    })();
    await Promise.all([load(first.base, 8, killed, acked), watcher]);
    await exited;
    expect(seen.size, 'checkpoints observed before the kill').to.be.greaterThan(1);
    // persisted before published: nothing served names more nodes than the checkpoint the kill left on disk
    const onDisk = Number(readFileSync(join(dir, 'checkpoint'), 'utf8').split('\n')[1]);
    expect(Math.max(...seen.keys())).to.be.at.most(onDisk);
    svc = await startService(env);
    // never two inconsistent checkpoints: the restarted log's root at each size, hashed here from its tiles, is the one served
    const roots = await Promise.all([...seen.keys()].map(async (size) => [size, await rootAt(svc!.base, size)] as const));
    for (const [size, root] of roots) expect(root, `root at size ${size}`).to.equal(seen.get(size));
  });
});

/** The root of the first `size` nodes, from the tiles the service serves (hashed here). */
async function rootAt(base: string, size: number): Promise<string> {
  const leaves: Buffer[] = [];
  for (let n = 0; n * 256 < size; n++) {
    const w = Math.min(256, size - n * 256);
    const res = await fetch(`${base}/api/svc/v1/ledger/tile/${tilePath({ level: 0, index: n, width: w })}`);
    expect(res.status, `tile 0/${n}`).to.equal(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    for (let i = 0; i < w; i++) leaves.push(bytes.subarray(i * 32, i * 32 + 32));
  }
  return rootFromLeafHashes(leaves).toString('base64');
}

describe('crash safety (file mode): killed between persisting a checkpoint and publishing it', function () {
  this.timeout(300_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-crash-cp-'));
  let svc: ServiceProcess | null = null;
  after(() => {
    svc?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the restarted service serves the checkpoint the crash left on disk, or one extending it, and never an earlier size', async () => {
    const env = { SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir, SVC_CHECKPOINT_INTERVAL_MS: '200' };
    // the preload kills the process once its third checkpoint is durable, before it is published
    const preload = pathToFileURL(join(projectRoot(), 'test/fixtures/crash-after-checkpoint-save.mjs')).href;
    const first = await startService({ ...env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`, TEST_CRASH_AFTER_CHECKPOINT_SAVES: '3' });
    svc = first;
    const signal = new Promise<NodeJS.Signals | null>((r) => first.child.once('exit', (_code, sig) => r(sig)));
    const seen = new Map<number, string>();
    let gone = false;
    void signal.then(() => (gone = true));
    const watcher = (async () => {
      while (!gone) {
        try {
          const res = await fetch(`${first.base}/api/svc/v1/ledger/checkpoint`);
          const [, size, root] = (await res.text()).split('\n');
          if (res.status === 200) seen.set(Number(size), root!);
        } catch {
          return; // the process is gone
        }
      }
    })();
    await Promise.all([load(first.base, 4, signal.then(() => undefined), []), watcher]);
    expect(await signal, 'killed by the preload, not ended otherwise').to.equal('SIGKILL');
    const saved = readFileSync(join(dir, 'checkpoint'), 'utf8');
    const [, savedSizeText, savedRoot] = saved.split('\n');
    const savedSize = Number(savedSizeText);
    expect(seen.size, 'checkpoints published before the crash').to.be.at.least(1);
    // the one on disk was persisted and never published: the crash landed in the window
    expect(Math.max(...seen.keys())).to.be.below(savedSize);

    svc = await startService(env);
    const restarted = svc;
    const sizes: number[] = [];
    for (let k = 0; k < 5; k++) {
      const note = await (await fetch(`${restarted.base}/api/svc/v1/ledger/checkpoint`)).text();
      const size = Number(note.split('\n')[1]);
      sizes.push(size);
      if (size === savedSize) expect(note, 'the saved checkpoint, byte for byte').to.equal(saved);
      await fetch(`${restarted.base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...frame, track_id: `r${k}` }) });
    }
    for (const size of sizes) expect(size, `served after the restart: ${sizes.join(', ')}`).to.be.at.least(savedSize);
    // whatever it serves extends the saved checkpoint and every published one: the same root at their sizes, hashed here from the tiles
    expect(await rootAt(restarted.base, savedSize), `root at the saved size ${savedSize}`).to.equal(savedRoot);
    for (const [size, root] of seen) expect(await rootAt(restarted.base, size), `root at size ${size}`).to.equal(root);
  });
});
