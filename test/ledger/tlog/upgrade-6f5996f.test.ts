// A data directory written by the last version without tiles (commit 6f5996f, 12 verdicts, kept
// byte for byte in test/fixtures/ledger-6f5996f) is converted at its first start: the tree is the
// one recomputed from its lines, every receipt keeps the index, digest and DSSE bytes that version
// served and still verifies, nothing in khipu.jsonl is rewritten, and the fsck CLI passes it.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../../src/config/load.js';
import { buildTestApp } from '../../helpers/app.js';
import { until } from '../../helpers/until.js';
import type { Ledger } from '../../../src/ledger/ledger.js';

const FIXTURE = join(projectRoot(), 'test/fixtures/ledger-6f5996f');
const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

interface Line {
  i: number;
  keyid: string;
  payload_type: string;
  payload: string;
  sig: string;
  pae_sha256: string;
  prev: string;
  digest: string;
}

interface Served {
  written_by: string;
  root: string;
  receipts: { node_index: number; node_digest: string; pae_sha256: string; dsse: { payloadType: string; payload: string; signatures: { keyid: string; sig: string }[] } }[];
}

/** RFC 6962 MTH over the node digests: the reference the ledger's root must equal. */
function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 1) return sha(Buffer.from([0]), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

const pae = (type: string, body: Buffer): Buffer => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body]);

function fsckCli(dir: string): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'src/cli/ledger-fsck.ts', dir, '--threads', '1'], { cwd: projectRoot(), encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ status: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('upgrade: a data directory written by 6f5996f (before tiles) is converted at first start', function () {
  this.timeout(120_000);
  let dir: string;
  const original = readFileSync(join(FIXTURE, 'data-dir', 'khipu.jsonl'));
  const lines = original.toString('utf8').trim().split('\n').slice(1).map((l) => JSON.parse(l) as Line);
  const served = JSON.parse(readFileSync(join(FIXTURE, 'served.json'), 'utf8')) as Served;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-upgrade-'));
    cpSync(join(FIXTURE, 'data-dir'), dir, { recursive: true });
    chmodSync(join(dir, 'signing-key.pem'), 0o600);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the fixture is what that version wrote: 12 chained nodes, no tiles, no checkpoint', () => {
    expect(lines.map((l) => l.i)).to.deep.equal([...Array(12).keys()]);
    expect(existsSync(join(dir, 'tlog'))).to.equal(false);
    expect(existsSync(join(dir, 'checkpoint'))).to.equal(false);
    let prev: Buffer = Buffer.alloc(32);
    for (const l of lines) {
      const paeSha = sha(pae(l.payload_type, Buffer.from(l.payload, 'base64')));
      expect(paeSha.toString('hex'), `pae ${l.i}`).to.equal(l.pae_sha256);
      const index = Buffer.alloc(8);
      index.writeBigUInt64BE(BigInt(l.i));
      expect(l.prev).to.equal(prev.toString('hex'));
      prev = sha(Buffer.from('svc.khipu.node.v1\n'), index, prev, paeSha);
      expect(prev.toString('hex'), `digest ${l.i}`).to.equal(l.digest);
    }
    expect(mth(lines.map((l) => Buffer.from(l.digest, 'hex'))).toString('hex')).to.equal(served.root);
  });

  it('starts on it: the root is the recomputed one, every receipt keeps its index, digest and DSSE bytes and verifies; then fsck passes', async () => {
    const publicKey = createPublicKey(readFileSync(join(dir, 'keys', `${lines[0]!.keyid}.pem`)));
    const t = await buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: 3_600_000 } });
    try {
      const r = (await t.http.get('/api/svc/v1/ledger/readiness').expect(200)).body as { replay: { state: string; nodes: number; from_checkpoint: number } };
      expect(r.replay).to.deep.include({ state: 'COMPLETE', nodes: 12, from_checkpoint: 0 });
      const root = mth(lines.map((l) => Buffer.from(l.digest, 'hex'))).toString('hex');
      expect((t.provided.ledger.ledger as Ledger).root().toString('hex')).to.equal(root);
      // the first checkpoint is signed just after start, and its tiles are made durable before it is saved
      await until('the first checkpoint saved', () => existsSync(join(dir, 'checkpoint')));
      expect(existsSync(join(dir, 'tlog', 'tile', '0'))).to.equal(true);
      for (const old of served.receipts) {
        const e = (await t.http.get(`/api/svc/v1/receipt/export?index=${old.node_index}`).expect(200)).body as {
          node_index: number;
          node_digest: string;
          khipu_root: string;
          dsse: Served['receipts'][number]['dsse'];
          verification: { verified: boolean; pae_sha256: string };
        };
        expect(e.node_index).to.equal(old.node_index);
        expect(e.node_digest).to.equal(old.node_digest);
        expect(e.dsse).to.deep.equal(old.dsse);
        expect(e.verification).to.deep.include({ verified: true, pae_sha256: old.pae_sha256 });
        expect(e.khipu_root).to.equal(served.root);
        const body = Buffer.from(e.dsse.payload, 'base64');
        expect(verify('sha256', pae(e.dsse.payloadType, body), publicKey, Buffer.from(e.dsse.signatures[0]!.sig, 'base64')), `signature ${old.node_index}`).to.equal(true);
      }
    } finally {
      await t.close();
    }
    // nothing the old version wrote was rewritten
    expect(readFileSync(join(dir, 'khipu.jsonl')).subarray(0, original.length).equals(original)).to.equal(true);
    const fsck = await fsckCli(dir);
    expect(fsck.status, fsck.stderr).to.equal(0);
    expect(fsck.stdout).to.match(/^ledger:fsck: OK: 12 entries, 12 signatures/);
  });
});
