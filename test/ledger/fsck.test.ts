/**
 * fsck on a real file-mode log written by the service: a clean copy verifies, and each kind of
 * damage (a record, a derived file, a tile hash, a signature, the checkpoint) is named at the
 * smallest node it touches, by the function and by the CLI's exit status.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import { fsckDataDir, fsckPostgres, NotALedgerError, type FsckProgress } from '../../src/ledger/fsck.js';
import { ZERO_DIGEST, type AppendInput } from '../../src/ledger/ledger.js';
import { PostgresStore } from '../../src/ledger/store/postgres-store.js';
import { buildTestApp } from '../helpers/app.js';
import { usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { until } from '../helpers/until.js';

/** Enough nodes for a level-1 tile hash (256) and a partial tile after it. */
const NODES = 300;

const frame = (k: number) => ({ track_id: `fsck${k}`, source: 'ADS-B', lat: 36.2 + k * 1e-4, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });

const checkpointSize = (dir: string): number => {
  const file = join(dir, 'checkpoint');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[1]) : -1;
};

/** The JSON line of node `i` in khipu.jsonl and the lines around it. */
function editLine(dir: string, i: number, edit: (line: Record<string, unknown>) => void): void {
  const file = join(dir, 'khipu.jsonl');
  const lines = readFileSync(file, 'utf8').split('\n');
  const line = JSON.parse(lines[i + 1]!) as Record<string, unknown>;
  edit(line);
  lines[i + 1] = JSON.stringify(line);
  writeFileSync(file, lines.join('\n'));
}

function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset]! ^= 0x01;
  writeFileSync(file, bytes);
}

function runCli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/ledger-fsck.ts', ...args], { encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('ledger fsck: a whole file-mode log checked offline', function () {
  this.timeout(120_000);
  let root: string;
  let clean: string;
  let copies = 0;
  /** A fresh copy of the clean log, to damage. */
  const copy = (): string => {
    const dir = join(root, `copy-${copies++}`);
    cpSync(clean, dir, { recursive: true });
    return dir;
  };

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-fsck-'));
    clean = join(root, 'clean');
    const t = await buildTestApp({ ledger: { mode: 'file', dataDir: clean, checkpointIntervalMs: 10 } });
    try {
      // a few at a time: the batches make the log's group commits of more than one node
      for (let k = 0; k < NODES; k += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => t.http.post('/api/svc/v1/verdict').send(frame(k + j)).expect(200)));
      await until(`a checkpoint of ${NODES} nodes on disk`, () => checkpointSize(clean) === NODES);
    } finally {
      await t.close();
    }
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('verifies a clean log: every record, signature, tile hash and the checkpoint, with progress', async () => {
    const seen: FsckProgress[] = [];
    const r = await fsckDataDir(clean, { onProgress: (p) => seen.push(p) });
    expect(r.firstBad).to.equal(null);
    expect(r).to.deep.include({ ok: true, nodes: NODES, signatures: NODES, checkpoint: { size: NODES, verified: true, reason: null } });
    // level 0: a hash per node; level 1: the one full tile of 256
    expect(r.tiles).to.deep.equal({ levels: 2, hashes: NODES + 1, interiors: 1 });
    expect(r.entriesPerSecond).to.be.above(0);
    expect(seen.at(-1)).to.deep.include({ phase: 'checkpoint', done: NODES, total: NODES });
  });

  it('names the node whose payload was altered (its PAE digest no longer recomputes)', async () => {
    const dir = copy();
    editLine(dir, 100, (l) => {
      const p = l.payload as string;
      l.payload = `${p.slice(0, 10)}${p[10] === 'A' ? 'B' : 'A'}${p.slice(11)}`;
    });
    const r = await fsckDataDir(dir);
    expect(r.ok).to.equal(false);
    expect(r.firstBad!.index).to.equal(100);
    expect(r.firstBad!.reason).to.match(/pae_sha256 does not recompute/);
    // nothing past a broken chain is counted
    expect(r.nodes).to.equal(100);
  });

  it('names the node whose digest in tlog/tile/entries was changed', async () => {
    const dir = copy();
    flipByte(join(dir, 'tlog/tile/entries'), 120 * 34 + 2 + 5);
    const r = await fsckDataDir(dir);
    expect(r.firstBad).to.deep.equal({ index: 120, reason: 'tlog/tile/entries record 120 is not the node\'s digest' });
    expect(r.ok).to.equal(false);
  });

  it('maps a damaged tile hash to the first node it covers (level 0: its node; level 1: the first of 256)', async () => {
    const level0 = copy();
    flipByte(join(level0, 'tlog/tile/0'), 130 * 32 + 7);
    const r0 = await fsckDataDir(level0);
    expect(r0.firstBad!.index).to.equal(130);
    expect(r0.firstBad!.reason).to.match(/^tlog\/tile\/0 hash 130 \(tile 0\)/);
    const level1 = copy();
    flipByte(join(level1, 'tlog/tile/1'), 3);
    const r1 = await fsckDataDir(level1);
    expect(r1.firstBad!.index).to.equal(0);
    expect(r1.firstBad!.reason).to.match(/^tlog\/tile\/1 hash 0 .*nodes 0\.\.255/);
    // the records and the checkpoint are untouched: only the derived tile is named
    expect(r1.checkpoint!.verified).to.equal(true);
  });

  it('names the first node under a damaged tile interior (a proof crossing it would be wrong)', async () => {
    const dir = copy();
    // tile 0's interior: row 1 (128 hashes) then row 2; the 5th hash of row 2 covers nodes 16..19
    flipByte(join(dir, 'tlog/interior/0'), (128 + 4) * 32 + 9);
    const r = await fsckDataDir(dir);
    expect(r.firstBad).to.deep.equal({ index: 0, reason: 'tlog/interior/0 of tile 0 is not the interior of tlog/tile/0 tile 0' });
    expect(r.checkpoint!.verified).to.equal(true);
    const whole = await fsckDataDir(copy());
    expect(whole.ok).to.equal(true);
  });

  it('names the node that carries another node\'s valid signature', async () => {
    const dir = copy();
    const lines = readFileSync(join(dir, 'khipu.jsonl'), 'utf8').split('\n');
    const sigOf = (i: number): string => (JSON.parse(lines[i + 1]!) as { sig: string }).sig;
    // a donor of the same encoded length leaves every line end where it was
    const donor = [151, 152, 153, 154, 155].find((j) => sigOf(j).length === sigOf(150).length)!;
    editLine(dir, 150, (l) => (l.sig = sigOf(donor)));
    const r = await fsckDataDir(dir);
    expect(r.firstBad!.index).to.equal(150);
    expect(r.firstBad!.reason).to.match(/signature does not verify/);
    expect(r.nodes).to.equal(NODES);
  });

  it('reports a checkpoint whose root was altered', async () => {
    const dir = copy();
    const file = join(dir, 'checkpoint');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = createHash('sha256').update('not the root').digest('base64');
    writeFileSync(file, lines.join('\n'));
    const r = await fsckDataDir(dir);
    expect(r.ok).to.equal(false);
    expect(r.firstBad).to.equal(null);
    expect(r.checkpoint).to.deep.equal({ size: NODES, verified: false, reason: `its root is not the root of the first ${NODES} nodes` });
  });

  it('refuses a directory that holds no log, and stops when aborted', async () => {
    let err: unknown = null;
    await fsckDataDir(root).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(NotALedgerError);
    err = null;
    await fsckDataDir(clean, { signal: AbortSignal.abort() }).catch((e: unknown) => (err = e));
    expect((err as Error).name).to.equal('AbortError');
  });

  describe('the CLI (npm run ledger:fsck)', () => {
    it('exits 0 with a summary for a clean log, 1 naming the first bad node, 2 without an argument', async () => {
      const ok = await runCli([clean, '--threads', '1']);
      expect(ok.status, ok.stderr).to.equal(0);
      expect(ok.stdout).to.match(new RegExp(`^ledger:fsck: OK: ${NODES} entries, ${NODES} signatures, 2 tile levels .*checkpoint ${NODES} verified; [\\d,]+ entries/s`));
      // not a terminal here: progress as lines, the last at 100 %
      expect(ok.stderr).to.match(/100\.0 %/);

      const dir = copy();
      flipByte(join(dir, 'tlog/tile/0'), 42 * 32);
      const bad = await runCli([dir, '--threads', '1']);
      expect(bad.status).to.equal(1);
      expect(bad.stdout).to.match(/^ledger:fsck: DAMAGED: first bad node 42: tlog\/tile\/0 hash 42/);

      const none = await runCli([]);
      expect(none.status).to.equal(2);
      expect(none.stderr).to.match(/usage: npm run ledger:fsck/);
      const notLedger = await runCli([root]);
      expect(notLedger.status).to.equal(2);
      expect(notLedger.stderr).to.match(/not a file-mode ledger directory/);
    });
  });
});

describe('ledger fsck: a postgres-mode log', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => (db = await usePostgres()));
  after(() => db?.release());

  it('verifies the rows of ledger_node and names the first whose signature does not verify', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const spki = publicKey.export({ type: 'spki', format: 'der' });
    const keyid = createHash('sha256').update(spki).digest('hex');
    const input = (k: number, signed = Buffer.from(`{"n":${k}}`)): AppendInput => {
      const payload = Buffer.from(`{"n":${k}}`);
      return { kind: 'test', tsUtc: new Date(1_700_000_000_000 + k).toISOString(), payload, paeSha256: sha256(pae(PAYLOAD_TYPE, payload)), sig: sign('sha256', pae(PAYLOAD_TYPE, signed), privateKey), keyid };
    };
    const store = await PostgresStore.open({ url: db.url, retryAfterS: 1, replicaId: 'fsck', pollMs: 60_000 });
    try {
      await store.replay({ apply: () => {}, verifySignatures: () => Promise.resolve(null) });
      await store.recordKey(keyid, publicKey.export({ type: 'spki', format: 'pem' }).toString());
      const nodes = await store.commit(Array.from({ length: 12 }, (_, k) => input(k)), { size: 0, head: ZERO_DIGEST });
      const clean = await fsckPostgres(db.url);
      expect(clean).to.deep.include({ ok: true, nodes: 12, signatures: 12, firstBad: null, checkpoint: null });
      // a row the schema accepts (its digest chains) whose signature covers another payload
      await store.commit([input(12, Buffer.from('{"n":"other"}')), input(13)], { size: 12, head: nodes.at(-1)!.nodeDigest });
      const bad = await fsckPostgres(db.url);
      expect(bad.ok).to.equal(false);
      expect(bad.nodes).to.equal(14);
      expect(bad.firstBad!.index).to.equal(12);
      expect(bad.firstBad!.reason).to.match(/signature does not verify/);
      const cli = await runCli([db.url, '--threads', '1']);
      expect(cli.status, cli.stderr).to.equal(1);
      expect(cli.stdout).to.match(/^ledger:fsck: DAMAGED: first bad node 12: signature does not verify/);
    } finally {
      await store.close();
    }
  });
});
