// File mode opens at its last persisted checkpoint and reads only the records after it; derived
// files that do not match are rebuilt from the records (which is also the upgrade of a khipu.jsonl
// written before tiles existed); records a checkpoint counted that are gone are damage.
import { expect } from 'chai';
import { cpSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { LOWEST_PRIORITY_MS, until } from '../../helpers/until.js';
import type { Ledger } from '../../../src/ledger/ledger.js';

const frame = (k: number) => ({ track_id: `fs${k}`, source: 'ADS-B', lat: 36.2 + k * 1e-5, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });

interface Fsck {
  state: string;
  checked: number;
  first_bad_index: number | null;
  first_bad_reason: string | null;
}

interface Replay {
  state: string;
  nodes: number;
  first_bad_index: number | null;
  from_checkpoint: number;
}

describe('file mode start-up from the last checkpoint', function () {
  this.timeout(600_000);
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const open = (dir: string, intervalMs: number): Promise<TestApp> => buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: intervalMs }, stream: { maxFramesPerRequest: 64 } });
  const readiness = async (t: TestApp) => (await t.http.get('/api/svc/v1/ledger/readiness')).body as { ready: boolean; replay: Replay; fsck?: Fsck; reason: string; adapter_state: string };

  // a log of 300 nodes under a checkpoint; a restart signs 301 at its first verdict (the one it
  // loaded was signed at an unknown time), then 6 more that no checkpoint covers
  let seed: string;
  let root: string;
  before(async () => {
    seed = mkdtempSync(join(tmpdir(), 'svc-fstart-'));
    dirs.push(seed);
    let t = await open(seed, 10);
    try {
      for (let k = 0; k < 300; k += 60) await t.http.post('/api/svc/v1/edge/3d').send({ frames: Array.from({ length: 60 }, (_, i) => frame(k + i)) }).expect(200);
      await until('a checkpoint of 300 on disk', () => readFileSync(join(seed, 'checkpoint'), 'utf8').split('\n')[1] === '300');
    } finally {
      await t.close();
    }
    t = await open(seed, 3_600_000);
    try {
      for (let k = 0; k < 7; k++) await t.http.post('/api/svc/v1/verdict').send(frame(1000 + k)).expect(200);
      root = (t.provided.ledger.ledger as Ledger).root().toString('hex');
    } finally {
      await t.close();
    }
  });

  const copy = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-fstart-'));
    dirs.push(d);
    cpSync(seed, d, { recursive: true });
    rmSync(join(d, 'LOCK'));
    return d;
  };

  it('opens 301 nodes at the checkpoint, reads only the 6 after it, and serves the same tree', async () => {
    const t = await open(copy(), 3_600_000);
    try {
      const r = await readiness(t);
      expect(r.ready).to.equal(true);
      expect(r.replay).to.deep.include({ state: 'COMPLETE', nodes: 307, from_checkpoint: 301, first_bad_index: null });
      const ledger = t.provided.ledger.ledger as Ledger;
      expect(ledger.root().toString('hex')).to.equal(root);
      expect(ledger.verifyIntegrity(true)).to.deep.include({ verified: true, nodes: 307 });
      // lookups reach nodes on both sides of the checkpoint
      expect(ledger.indexOfPae(ledger.get(10)!.paeSha256.toString('hex'))).to.equal(10);
      expect(ledger.findByDigestPrefix(ledger.get(303)!.nodeDigest.toString('hex').slice(0, 12)).map((n) => n.index)).to.deep.equal([303]);
      expect((await t.http.post('/api/svc/v1/verdict').send(frame(2000)).expect(200)).body.ledger.index).to.equal(307);
    } finally {
      await t.close();
    }
  });

  it('a damaged tile is not trusted: the derived files are rebuilt from the records, the tree is the same', async () => {
    const d = copy();
    const tile = join(d, 'tlog', 'tile', '0');
    const bytes = readFileSync(tile);
    bytes.writeUInt8(bytes[299 * 32]! ^ 0x40, 299 * 32); // the last leaf the checkpoint covers: the recomputed root differs
    writeFileSync(tile, bytes);
    const t = await open(d, 3_600_000);
    try {
      const r = await readiness(t);
      expect(r.replay).to.deep.include({ state: 'COMPLETE', nodes: 307, from_checkpoint: 0 });
      expect((t.provided.ledger.ledger as Ledger).root().toString('hex')).to.equal(root);
      const served = await t.http.get('/api/svc/v1/ledger/tile/0/001.p/44').buffer(true);
      expect(served.status).to.equal(200);
    } finally {
      await t.close();
    }
    expect(readFileSync(tile)[299 * 32]).to.equal(bytes[299 * 32]! ^ 0x40);
  });

  it('upgrade: a khipu.jsonl without derived files (an older version) is converted at start; every receipt keeps its index', async () => {
    const d = copy();
    rmSync(join(d, 'tlog'), { recursive: true });
    const t = await open(d, 3_600_000);
    try {
      const r = await readiness(t);
      expect(r.replay).to.deep.include({ state: 'COMPLETE', nodes: 307, from_checkpoint: 0 });
      expect((t.provided.ledger.ledger as Ledger).root().toString('hex')).to.equal(root);
      const e = (await t.http.get('/api/svc/v1/receipt/export?index=123').expect(200)).body as { verification: { verified: boolean }; ledger?: unknown };
      expect(e.verification.verified).to.equal(true);
    } finally {
      await t.close();
    }
  });

  it('records the checkpoint counted that are gone from the file: damage at the first missing index, appends refused', async () => {
    const d = copy();
    const ends = readFileSync(join(d, 'tlog', 'record-ends'));
    truncateSync(join(d, 'khipu.jsonl'), Number(ends.readBigUInt64BE(99 * 8)));
    const t = await open(d, 3_600_000);
    try {
      const r = await readiness(t);
      expect(r.ready).to.equal(false);
      expect(r.adapter_state).to.equal('CORRUPT');
      expect(r.replay).to.deep.include({ state: 'STOPPED_AT_DAMAGE', first_bad_index: 100 });
      expect(r.reason).to.match(/node 100: missing, the checkpoint signed before names 301 nodes/);
      expect((await t.http.post('/api/svc/v1/verdict').send(frame(3000))).status).to.equal(503);
      // the 100 nodes still there are served, with their proofs
      expect((t.provided.ledger.ledger as Ledger).size).to.equal(100);
      expect((await t.http.get('/api/svc/v1/receipt/export?index=99').expect(200)).body.verification.verified).to.equal(true);
    } finally {
      await t.close();
    }
  });

  it('the background fsck checks the whole log after start: PASSED in readiness, /metrics and /health', async () => {
    const t = await open(copy(), 3_600_000);
    try {
      const r = await until('the background fsck to finish', async () => {
        const doc = await readiness(t);
        return doc.fsck?.state !== 'RUNNING' && doc;
      }, LOWEST_PRIORITY_MS);
      expect(r.fsck).to.deep.include({ state: 'PASSED', checked: 307, first_bad_index: null });
      expect(r.ready).to.equal(true);
      const metrics = (await t.http.get('/metrics')).text;
      expect(metrics).to.match(/^svc_ledger_fsck_state\{state="passed"\} 1$/m);
      expect(metrics).to.match(/^svc_ledger_fsck_checked_nodes 307$/m);
      // 307 nodes fill no chunk of 65,536: every key is in the open chunk, no run to read
      expect(metrics).to.match(/^svc_ledger_key_index_runs\{index="pae"\} 0$/m);
      expect(metrics).to.match(/^svc_ledger_key_index_merge_failing\{index="digest"\} 0$/m);
      const health = (await t.http.get('/api/svc/v1/health')).body as { checks: Record<string, { status: string; observedValue: string }> };
      expect(health.checks['ledger:fsck']).to.include({ status: 'pass', observedValue: 'passed' });
    } finally {
      await t.close();
    }
  });

  it('a flipped byte in a record the checkpoint covers: start-up does not read it, the background fsck finds it and appends stop', async () => {
    const d = copy();
    const ends = readFileSync(join(d, 'tlog', 'record-ends'));
    const path = join(d, 'khipu.jsonl');
    const bytes = readFileSync(path);
    // inside node 150's base64 payload, well before the checkpoint's 301
    const at = Number(ends.readBigUInt64BE(149 * 8)) + 150;
    bytes.writeUInt8(bytes[at] === 0x41 ? 0x42 : 0x41, at);
    writeFileSync(path, bytes);
    const t = await open(d, 3_600_000);
    try {
      const first = await readiness(t);
      expect(first.replay).to.deep.include({ state: 'COMPLETE', from_checkpoint: 301, nodes: 307 });
      const r = await until('the background fsck to finish', async () => {
        const doc = await readiness(t);
        return doc.fsck?.state !== 'RUNNING' && doc;
      }, LOWEST_PRIORITY_MS);
      expect(r.fsck).to.deep.include({ state: 'DAMAGED', first_bad_index: 150 });
      expect(r.ready).to.equal(false);
      expect(r.adapter_state).to.equal('CORRUPT');
      expect(r.reason).to.match(/ledger file damaged at node 150: .*found by the background fsck/);
      expect((await t.http.post('/api/svc/v1/verdict').send(frame(4000))).status).to.equal(503);
    } finally {
      await t.close();
    }
  });
});
