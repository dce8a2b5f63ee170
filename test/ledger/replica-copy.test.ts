// A postgres replica's copy of the chain on its own disk: the ledger reads tiles and receipts from
// it (no node cap), a restart opens it at the newest checkpoint it synced and reads only the rows
// after it, and a copy that does not match the database is rebuilt from the rows.
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { fsckDataDir } from '../../src/ledger/fsck.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createDatabase, loadFrame, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { LOWEST_PRIORITY_MS, until } from '../helpers/until.js';

const API = '/api/svc/v1';
const stateOf = (t: TestApp) => t.provided.ledger;

async function post(t: TestApp, from: number, n: number): Promise<void> {
  for (let k = from; k < from + n; k += 25) {
    await Promise.all(Array.from({ length: Math.min(25, from + n - k) }, (_, j) => t.http.post(`${API}/verdict`).send(loadFrame(k + j)).expect(200)));
  }
}

/** The size the newest checkpoint names, once it names `size`. */
async function checkpointAt(t: TestApp, size: number): Promise<string> {
  let note = '';
  await until(`a checkpoint of ${size} nodes`, async () => {
    const res = await t.http.get(`${API}/ledger/checkpoint`);
    note = res.text;
    return res.status === 200 && note.split('\n')[1] === String(size);
  });
  return note;
}

function flipByte(file: string, at: number): void {
  const buf = readFileSync(file);
  buf[at]! ^= 0xff;
  writeFileSync(file, buf);
}

describe('postgres mode: each replica keeps a copy of the chain on its disk', function () {
  this.timeout(600_000);
  let db: TestDatabase;
  let dir: string;
  let config: Record<string, unknown>;
  let url: string;
  const copyDir = (slot: number) => join(dir, 'data', 'replica', String(slot));
  before(async () => {
    db = await usePostgres();
    url = await createDatabase(db, `copy_${process.pid}`);
    dir = mkdtempSync(join(tmpdir(), 'svc-pg-copy-'));
    const keyFile = join(dir, 'key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    // a cap far below the chain: only memory mode has one
    config = { ledger: { mode: 'postgres', databaseUrl: url, signingKeyFile: keyFile, dataDir: join(dir, 'data'), checkpointIntervalMs: 200, maxNodes: 100 } };
  });
  after(async () => {
    await db?.release();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds no node cap, writes every node to its copy and reopens there, reading only the rows after its checkpoint', async () => {
    const a = await buildTestApp(config);
    let root: string;
    try {
      expect(stateOf(a).ledger.maxNodes).to.equal(Infinity);
      await post(a, 0, 300);
      await checkpointAt(a, 300);
      root = (await a.http.get(`${API}/ledger/readiness`)).body.integrity.root as string;
    } finally {
      await a.close();
    }
    // the copy is a file-mode directory: the offline checker accepts it whole
    const lines = readFileSync(join(copyDir(0), 'khipu.jsonl'), 'utf8').trim().split('\n');
    expect(lines.length).to.equal(301);
    expect(readFileSync(join(copyDir(0), 'copy-synced'), 'utf8').trim()).to.equal('300');
    const checked = await fsckDataDir(copyDir(0));
    expect([checked.nodes, checked.firstBad]).to.deep.equal([300, null]);

    // a replica on another machine appends meanwhile: this one's copy does not have those nodes
    const ledger = config.ledger as Record<string, unknown>;
    const other = await buildTestApp({ ledger: { ...ledger, dataDir: join(dir, 'elsewhere') } });
    try {
      await post(other, 300, 40);
    } finally {
      await other.close();
    }
    const b = await buildTestApp(config);
    try {
      const replay = stateOf(b).replay;
      expect([replay.fromCheckpoint, replay.nodes, replay.corruptAt]).to.deep.equal([300, 340, null]);
      expect(stateOf(b).ledger.size).to.equal(340);
      expect(stateOf(b).ledger.root(300).toString('hex')).to.equal(root);
      // receipts before and after the checkpoint read back byte for byte as the database holds them
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        for (const i of [0, 255, 299, 300, 339]) {
          const row = (await c.query<{ payload: Buffer; sig: Buffer; digest: Buffer }>('SELECT payload, sig, digest FROM ledger_node WHERE idx = $1', [i])).rows[0]!;
          const node = stateOf(b).ledger.get(i)!;
          expect([node.payload.equals(row.payload), node.sig.equals(row.sig), node.nodeDigest.equals(row.digest)], `node ${i}`).to.deep.equal([true, true, true]);
        }
      } finally {
        await c.end();
      }
      // what the checkpoint covered was not read at start: the copy is checked again in the background
      await until('the background fsck of the copy', async () => (await b.http.get(`${API}/ledger/readiness`)).body.fsck?.state === 'PASSED', LOWEST_PRIORITY_MS);
      expect((await b.http.get(`${API}/ledger/readiness`)).body.fsck).to.deep.include({ checked: 300, first_bad_index: null });
      // appends go on past the memory-mode cap, each to the copy too
      await post(b, 340, 10);
      await checkpointAt(b, 350);
    } finally {
      await b.close();
    }
    expect(readFileSync(join(copyDir(0), 'khipu.jsonl'), 'utf8').trim().split('\n').length).to.equal(351);
  });

  it('replicas on one data directory lock a slot each', async () => {
    const [a, b] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
    try {
      await post(a, 350, 1);
      await until('both replicas to hold 351 nodes', () => stateOf(a).ledger.size === 351 && stateOf(b).ledger.size === 351);
      await checkpointAt(a, 351);
      await checkpointAt(b, 351);
      expect([existsSync(join(copyDir(0), 'khipu.jsonl')), existsSync(join(copyDir(1), 'khipu.jsonl'))]).to.deep.equal([true, true]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a copy whose tiles do not match the database is rebuilt from the rows, not trusted', async () => {
    // the hash of nodes 0..255 in the copy in slot 0: its root no longer equals any checkpoint's
    flipByte(join(copyDir(0), 'tlog', 'tile', '1'), 5);
    const t = await buildTestApp(config);
    try {
      const replay = stateOf(t).replay;
      expect([replay.fromCheckpoint, replay.nodes, replay.corruptAt]).to.deep.equal([0, 351, null]);
      const note = await checkpointAt(t, 351);
      expect(stateOf(t).ledger.root().toString('base64')).to.equal(note.split('\n')[2]);
    } finally {
      await t.close();
    }
    const checked = await fsckDataDir(copyDir(0));
    expect([checked.nodes, checked.firstBad]).to.deep.equal([351, null]);
  });

  it('damage in a copy found by the background fsck is reported; appends, which go to the database, go on', async () => {
    // a record the checkpoint covers: start-up opens the copy at the checkpoint without reading it
    const file = join(copyDir(0), 'khipu.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const at = lines.slice(0, 41).join('\n').length + 1 + lines[41]!.indexOf('"payload":"') + 12;
    flipByte(file, at);
    const t = await buildTestApp(config);
    try {
      expect(stateOf(t).replay.fromCheckpoint).to.equal(351);
      await until('the background fsck to finish', async () => ['DAMAGED', 'PASSED'].includes((await t.http.get(`${API}/ledger/readiness`)).body.fsck?.state), LOWEST_PRIORITY_MS);
      expect((await t.http.get(`${API}/ledger/readiness`)).body.fsck).to.deep.include({ state: 'DAMAGED', first_bad_index: 40 });
      await t.http.post(`${API}/verdict`).send(loadFrame(351)).expect(200);
    } finally {
      await t.close();
    }
  });
});
