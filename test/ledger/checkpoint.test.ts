/**
 * Signed checkpoints, checked the way an outside verifier would: the note parsed from its text,
 * the root recomputed here (RFC 6962 over the node digests), the Ed25519 signature checked with the
 * key taken from the published vkey, the ECDSA one with openssl.
 */
import { expect } from 'chai';
import { until } from '../helpers/until.js';
import { createPublicKey, verify } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { sh, withTempDir, write } from '../helpers/shell.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { mth, sha } from '../helpers/rfc6962.js';

const frame = (k: number) => ({ track_id: `cp${k}`, source: 'ADS-B', lat: 36.2 + k * 1e-4, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });


interface Note {
  text: string;
  origin: string;
  size: number;
  root: Buffer;
  sigs: { name: string; keyId: Buffer; sig: Buffer }[];
}

function parseNote(note: string): Note {
  const split = note.indexOf('\n\n');
  expect(split).to.be.above(0);
  const text = note.slice(0, split + 1);
  const [origin, size, root, extra] = text.split('\n');
  expect(extra).to.equal('');
  const sigs = note
    .slice(split + 2)
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
      expect(m, line).to.not.equal(null);
      const blob = Buffer.from(m![2]!, 'base64');
      return { name: m![1]!, keyId: blob.subarray(0, 4), sig: blob.subarray(4) };
    });
  return { text, origin: origin!, size: Number(size), root: Buffer.from(root!, 'base64'), sigs };
}

/** name, key id and key material of a vkey (`name+hex+base64`; the base64 may hold `+`). */
function parseVkey(vkey: string): { name: string; keyId: Buffer; type: number; key: Buffer } {
  const [name, hash, ...rest] = vkey.split('+');
  const raw = Buffer.from(rest.join('+'), 'base64');
  return { name: name!, keyId: Buffer.from(hash!, 'hex'), type: raw[0]!, key: raw.subarray(1) };
}

const leavesOf = (ledger: Ledger, size: number): Buffer[] => Array.from({ length: size }, (_, i) => ledger.get(i)!.nodeDigest);

async function postVerdicts(t: TestApp, from: number, n: number): Promise<void> {
  for (let k = from; k < from + n; k++) await t.http.post('/api/svc/v1/verdict').send(frame(k)).expect(200);
}

describe('signed checkpoints: GET /api/svc/v1/ledger/checkpoint', function () {
  this.timeout(60_000);

  describe('memory mode', () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ ledger: { checkpointIntervalMs: 60_000 } });
      await postVerdicts(t, 0, 7);
    });
    after(() => t.close());

    it('is a C2SP checkpoint of the ledger: origin, size and the RFC 6962 root, recomputed here', async () => {
      const res = await t.http.get('/api/svc/v1/ledger/checkpoint').expect(200);
      expect(res.headers['content-type']).to.equal('text/plain; charset=utf-8');
      expect(res.headers['cache-control']).to.equal('public, max-age=2');
      const note = parseNote(res.text);
      const pub = (await t.http.get('/api/svc/v1/edge/pubkey').expect(200)).body as { keyid: string; checkpoint: { origin: string; vkeys: { ed25519: string; ecdsa: string } } };
      expect(note.origin).to.equal(pub.checkpoint.origin);
      expect(note.origin).to.equal(`drone-intel-svc/khipu/${pub.keyid.slice(0, 16)}`);
      const ledger = t.provided.ledger.ledger as Ledger;
      // the first checkpoint was signed as soon as the log grew; the interval (60 s) has not passed since
      expect(note.size).to.be.within(1, ledger.size);
      expect(note.root.equals(mth(leavesOf(ledger, note.size)))).to.equal(true);
      expect(note.sigs.map((s) => s.name)).to.deep.equal([note.origin, note.origin]);
    });

    it('its Ed25519 signature verifies with the published vkey, whose key id is SHA-256(name, 0x0A, 0x01, key)[:4]', async () => {
      const note = parseNote((await t.http.get('/api/svc/v1/ledger/checkpoint')).text);
      const vkey = parseVkey(((await t.http.get('/api/svc/v1/edge/pubkey')).body as { checkpoint: { vkeys: { ed25519: string } } }).checkpoint.vkeys.ed25519);
      expect(vkey.name).to.equal(note.origin);
      expect(vkey.type).to.equal(0x01);
      expect(vkey.keyId.equals(sha(Buffer.from(`${vkey.name}\n`), Uint8Array.of(1), vkey.key).subarray(0, 4))).to.equal(true);
      const sig = note.sigs.find((s) => s.keyId.equals(vkey.keyId))!;
      const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), vkey.key]), format: 'der', type: 'spki' });
      expect(verify(null, Buffer.from(note.text), key, sig.sig)).to.equal(true);
      expect(verify(null, Buffer.from(note.text.replace(/\n\d+\n/, '\n999\n')), key, sig.sig)).to.equal(false);
    });

    it('its ECDSA signature verifies with openssl and the vkey SPKI, which is the ledger key; key id SHA-256(SPKI)[:4]', async () => {
      const note = parseNote((await t.http.get('/api/svc/v1/ledger/checkpoint')).text);
      const pub = (await t.http.get('/api/svc/v1/edge/pubkey')).body as { public_key_pem: string; checkpoint: { vkeys: { ecdsa: string } } };
      const vkey = parseVkey(pub.checkpoint.vkeys.ecdsa);
      expect(vkey.type).to.equal(0x02);
      expect(createPublicKey(pub.public_key_pem).export({ format: 'der', type: 'spki' }).equals(vkey.key)).to.equal(true);
      expect(vkey.keyId.equals(sha(vkey.key).subarray(0, 4))).to.equal(true);
      const sig = note.sigs.find((s) => s.keyId.equals(vkey.keyId))!;
      await withTempDir(async (dir) => {
        await write(dir, 'pub.der', vkey.key);
        await write(dir, 'sig.der', sig.sig);
        await write(dir, 'text', note.text);
        const r = await sh(dir, 'openssl pkey -pubin -inform DER -in pub.der -out pub.pem && openssl dgst -sha256 -verify pub.pem -signature sig.der text');
        expect(r.out.trim()).to.equal('Verified OK');
      });
    });

    it('is not re-signed within the interval; one covering the grown log follows by itself', async () => {
      const first = (await t.http.get('/api/svc/v1/ledger/checkpoint')).text;
      await postVerdicts(t, 100, 3);
      expect((await t.http.get('/api/svc/v1/ledger/checkpoint')).text).to.equal(first);
      const quick = await buildTestApp({ ledger: { checkpointIntervalMs: 10 } });
      const signedSize = async (n: number) => {
        const note = parseNote((await quick.http.get('/api/svc/v1/ledger/checkpoint')).text);
        return note.size === n && note;
      };
      try {
        await postVerdicts(quick, 0, 2);
        const a = await until('a checkpoint of 2 nodes', () => signedSize(2));
        await postVerdicts(quick, 2, 3);
        // the growth alone gets it signed within the interval
        const b = await until('a checkpoint of 5 nodes', () => signedSize(5));
        expect([a.size, b.size]).to.deep.equal([2, 5]);
        const ledger = quick.provided.ledger.ledger as Ledger;
        // the earlier tree is a prefix of the later one: RFC 6962 consistency, here by recomputation
        expect(a.root.equals(mth(leavesOf(ledger, 2)))).to.equal(true);
      } finally {
        await quick.close();
      }
    });
  });

  describe('file mode', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-checkpoint-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));
    const fileApp = () => buildTestApp({ ledger: { mode: 'file', dataDir: dir, checkpointIntervalMs: 10 } });

    it('writes each checkpoint to <dataDir>/checkpoint before serving it, and a restart keeps signing the same log', async () => {
      let t = await fileApp();
      let served: string;
      try {
        await postVerdicts(t, 0, 3);
        // signed by itself once the interval passed, and on disk before anyone reads it
        const onDisk = await until('a checkpoint of 3 nodes on disk', () => existsSync(join(dir, 'checkpoint')) && parseNote(readFileSync(join(dir, 'checkpoint'), 'utf8')).size === 3);
        expect(onDisk).to.equal(true);
        served = (await t.http.get('/api/svc/v1/ledger/checkpoint').expect(200)).text;
        expect(readFileSync(join(dir, 'checkpoint'), 'utf8')).to.equal(served);
      } finally {
        await t.close();
      }
      t = await fileApp();
      try {
        expect((await t.http.get('/api/svc/v1/ledger/checkpoint').expect(200)).text).to.equal(served);
        await postVerdicts(t, 3, 2);
        await until('a checkpoint of 5 nodes', async () => parseNote((await t.http.get('/api/svc/v1/ledger/checkpoint')).text).size === 5);
      } finally {
        await t.close();
      }
    });

    it('signs nothing for a ledger that does not extend the checkpoint written before (503)', async () => {
      let t = await fileApp();
      let origin: string;
      try {
        await postVerdicts(t, 0, 3);
        origin = parseNote((await t.http.get('/api/svc/v1/ledger/checkpoint')).text).origin;
      } finally {
        await t.close();
      }
      // as if the ledger file were restored from a backup older than a signed checkpoint
      writeFileSync(join(dir, 'checkpoint'), `${origin}\n9\n${sha().toString('base64')}\n\n\u2014 x AAAA\n`);
      t = await fileApp();
      try {
        const res = await t.http.get('/api/svc/v1/ledger/checkpoint').expect(503);
        expect(res.body.detail).to.match(/^No checkpoint: the ledger does not extend the checkpoint signed before \(size 9\)/);
        expect(res.headers['retry-after']).to.equal('60');
      } finally {
        await t.close();
      }
    });
  });
});
