// The ledger served as a C2SP transparency log: hash tiles and entry bundles recomputed here from
// the ledger's digests, their caching, the tlog-proof of a receipt verified against its signed
// checkpoint, and the verdict answer's checkpoint coverage.
import { expect } from 'chai';
import { createPublicKey, verify } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Response } from 'superagent';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';
import { leafHash, rootFromLeafHashes, verifyInclusion } from '../../src/lib/merkle.js';
import type { Ledger } from '../../src/ledger/ledger.js';

const frame = (k: number) => ({ track_id: `tl${k}`, source: 'ADS-B', lat: 36.2 + k * 1e-5, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });
const binary = (res: Response, cb: (err: Error | null, body: Buffer) => void): void => {
  const parts: Buffer[] = [];
  res.on('data', (c: Buffer) => parts.push(c));
  res.on('end', () => cb(null, Buffer.concat(parts)));
};
const get = (t: TestApp, path: string) => t.http.get(`/api/svc/v1/ledger/tile/${path}`).buffer(true).parse(binary);

async function fill(t: TestApp, n: number): Promise<void> {
  for (let k = 0; k < n; k += 64) {
    const frames = Array.from({ length: Math.min(64, n - k) }, (_, i) => frame(k + i));
    await t.http.post('/api/svc/v1/edge/3d').send({ frames }).expect(200);
  }
}

/** The ed25519 vkey `name+hash+base64(0x01‖key)` as a KeyObject. */
function ed25519Of(vkey: string) {
  const raw = Buffer.from(vkey.split('+').slice(2).join('+'), 'base64').subarray(1);
  return createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
}

describe('the ledger as a C2SP transparency log (tiles and tlog-proof)', function () {
  this.timeout(120_000);
  let t: TestApp;
  let ledger: Ledger;
  let leaves: Buffer[];
  before(async () => {
    t = await buildTestApp({ ledger: { checkpointIntervalMs: 10 }, stream: { maxFramesPerRequest: 64 } });
    await fill(t, 300);
    ledger = t.provided.ledger.ledger as Ledger;
    leaves = Array.from({ length: ledger.size }, (_, i) => leafHash(ledger.get(i)!.nodeDigest));
  });
  after(() => t.close());

  it('a full level-0 tile is the 256 leaf hashes of its nodes; the partial one has the width reached; level 1 the root of the full tile', async () => {
    const size = ledger.size;
    expect(size).to.be.at.least(300);
    const full = await get(t, '0/000').expect(200);
    expect(full.headers['content-type']).to.equal('application/octet-stream');
    expect((full.body as Buffer).equals(Buffer.concat(leaves.slice(0, 256)))).to.equal(true);
    const w = size - 256;
    const partial = await get(t, `0/001.p/${w}`).expect(200);
    expect((partial.body as Buffer).equals(Buffer.concat(leaves.slice(256, size)))).to.equal(true);
    // a narrower partial tile is a prefix of the wider one: every width a checkpoint named stays served
    expect((await get(t, '0/001.p/3').expect(200)).body).to.deep.equal(Buffer.concat(leaves.slice(256, 259)));
    const l1 = await get(t, '1/000.p/1').expect(200);
    expect((l1.body as Buffer).equals(rootFromLeafHashes(leaves, 0, 256))).to.equal(true);
    for (const missing of [`0/001.p/${w + 1}`, '0/001', '0/002.p/1', '1/000', '2/000.p/1', 'entries/001', '0/1', '0/x000/000', 'entries/000.p/256', 'zero/000']) {
      expect((await get(t, missing)).status, missing).to.equal(404);
    }
  });

  it('entry bundles hold each node digest behind a 2-byte length 32', async () => {
    const bundle = (await get(t, 'entries/000').expect(200)).body as Buffer;
    expect(bundle.length).to.equal(256 * 34);
    for (const i of [0, 1, 255]) {
      expect(bundle.readUInt16BE(i * 34)).to.equal(32);
      expect(bundle.subarray(i * 34 + 2, i * 34 + 34).equals(ledger.get(i)!.nodeDigest)).to.equal(true);
    }
  });

  it('tiles carry an ETag (304 on If-None-Match); in memory mode they are revalidated, not cached for good', async () => {
    const first = await get(t, '0/000').expect(200);
    expect(first.headers['cache-control']).to.equal('no-cache');
    const again = await t.http.get('/api/svc/v1/ledger/tile/0/000').set('If-None-Match', first.headers.etag!);
    expect(again.status).to.equal(304);
  });

  it('GET /receipt/proof: a C2SP tlog-proof whose audit path verifies against its own signed checkpoint', async () => {
    const pub = (await t.http.get('/api/svc/v1/edge/pubkey').expect(200)).body as { checkpoint: { origin: string; vkeys: { ed25519: string } } };
    for (const index of [0, 5, 256, ledger.size - 1]) {
      const res = await t.http.get(`/api/svc/v1/receipt/proof?index=${index}`).expect(200);
      expect(res.headers['content-type']).to.equal('text/plain; charset=utf-8');
      const [head, note] = [res.text.slice(0, res.text.indexOf('\n\n') + 1), res.text.slice(res.text.indexOf('\n\n') + 2)];
      const lines = head.trimEnd().split('\n');
      expect(lines[0]).to.equal('c2sp.org/tlog-proof@v1');
      expect(lines[1]).to.equal(`extra ${ledger.get(index)!.nodeDigest.toString('base64')}`);
      expect(lines[2]).to.equal(`index ${index}`);
      const path = lines.slice(3).map((l) => Buffer.from(l, 'base64'));
      const [origin, sizeText, rootB64] = note.split('\n');
      const text = `${origin}\n${sizeText}\n${rootB64}\n`;
      expect(origin).to.equal(pub.checkpoint.origin);
      const size = Number(sizeText);
      expect(size).to.be.above(index);
      expect(verifyInclusion(leafHash(ledger.get(index)!.nodeDigest), index, size, path, Buffer.from(rootB64!, 'base64'))).to.equal(true);
      // the checkpoint's Ed25519 line verifies with the published vkey (the key id is its first 4 bytes)
      const edLine = note.split('\n').find((l) => l.startsWith(`\u2014 ${origin} `) && Buffer.from(l.split(' ')[2]!, 'base64').length === 68)!;
      const sig = Buffer.from(edLine.split(' ')[2]!, 'base64').subarray(4);
      expect(verify(null, Buffer.from(text), ed25519Of(pub.checkpoint.vkeys.ed25519), sig)).to.equal(true);
    }
    expect((await t.http.get(`/api/svc/v1/receipt/proof?index=${ledger.size + 5}`)).status).to.equal(404);
    expect((await t.http.get('/api/svc/v1/receipt/proof')).status).to.equal(422);
  });

  it("docs/ledger.md's offline recipe, run verbatim: the proof says included, and not once a path hash is altered", async () => {
    const doc = readFileSync('docs/ledger.md', 'utf8');
    const script = /node -e '\n([\s\S]*?)'\n# then the checkpoint/.exec(doc)?.[1];
    expect(script, 'the recipe in docs/ledger.md').to.be.a('string');
    const dir = mkdtempSync(join(tmpdir(), 'svc-proof-recipe-'));
    try {
      const proof = (await t.http.get('/api/svc/v1/receipt/proof?index=5').expect(200)).text;
      const run = (text: string): string => {
        writeFileSync(join(dir, 'r.tlog-proof'), text);
        return execFileSync(process.execPath, ['-e', script!], { cwd: dir, encoding: 'utf8' }).trim();
      };
      expect(run(proof)).to.equal('included');
      const lines = proof.split('\n');
      lines[4] = Buffer.alloc(32, 1).toString('base64');
      expect(run(lines.join('\n'))).to.equal('NOT included');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a verdict answer says which checkpoint covers it, and its proof_url answers once one does', async () => {
    const v = (await t.http.post('/api/svc/v1/verdict').send(frame(9999)).expect(200)).body as { ledger: { index: number; checkpoint: { covers: boolean; covered_within_ms: number; proof_url: string; newest_size: number | null } } };
    const cp = v.ledger.checkpoint;
    expect(cp.proof_url).to.equal(`/api/svc/v1/receipt/proof?index=${v.ledger.index}`);
    // just appended: the newest checkpoint predates it, and the next one is due within the interval
    expect([cp.covers, cp.covered_within_ms]).to.deep.equal([false, 10]);
    expect(cp.newest_size).to.be.at.most(v.ledger.index);
    const proof = await t.http.get(cp.proof_url).expect(200);
    expect(proof.text).to.match(new RegExp(`^c2sp\\.org/tlog-proof@v1\\nextra [^\\n]+\\nindex ${v.ledger.index}\\n`));
  });

  it('file mode: full tiles are immutable for a year; the verdict coverage turns true once a checkpoint is signed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-tiles-http-'));
    const f = await buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: 10 }, stream: { maxFramesPerRequest: 64 } });
    try {
      await fill(f, 256);
      expect((await get(f, '0/000').expect(200)).headers['cache-control']).to.equal('public, max-age=31536000, immutable');
      const index = (f.provided.ledger.ledger as Ledger).size - 1;
      const core = f.provided.ledger as { checkpoints: { coverage(i: number): { covers: boolean } } };
      await until('a checkpoint covering the last node', () => core.checkpoints.coverage(index).covers);
    } finally {
      await f.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
