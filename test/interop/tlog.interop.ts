/**
 * Interop: the khipu ledger as a C2SP transparency log, audited by an independent verifier in Go
 * (test/interop/tlogverify) built on Go's reference implementation, golang.org/x/mod/sumdb/note and
 * sumdb/tlog from Debian's golang-go and golang-golang-x-mod-dev. The real service runs in file
 * mode; the verifier checks the signed checkpoint, its consistency with an earlier one, inclusion of
 * sampled entries from the served tiles and entry bundles, and the per-receipt tlog-proof bundles.
 * Run by `npm run test:interop` (not by `npm test`: it needs Go).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { generateKeyPairSync, createPublicKey } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointEd25519Key } from '../../src/ledger/checkpoint.js';
import { loadSigningKey } from '../../src/ledger/keys.js';
import { checkpointText, ed25519KeyId, ed25519NoteSignature, ed25519Raw, signedNote, verifierKey, ED25519_TYPE } from '../../src/lib/signed-note.js';
import { postVerdict } from '../helpers/postgres.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';

const GOPATH = '/usr/share/gocode'; // where Debian's golang-golang-x-mod-dev installs x/mod
const INSTALL = 'apt-get install -y golang-go golang-golang-x-mod-dev';
const API = '/api/svc/v1';

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out, err }));
  });
}

/** Builds the verifier in GOPATH mode (Debian's x/mod is a GOPATH tree, and no module proxy is needed). */
async function buildVerifier(dir: string): Promise<string> {
  const bin = join(dir, 'tlogverify');
  const env = { GO111MODULE: 'off', GOPATH, GOCACHE: join(dir, 'go-cache'), GOFLAGS: '' };
  let r: Run;
  try {
    r = await run('go', ['build', '-o', bin, './test/interop/tlogverify'], env);
  } catch (err) {
    throw new Error(`the interop suite needs Go ("go" could not be run: ${(err as Error).message}); install it: ${INSTALL}`);
  }
  if (r.code !== 0) throw new Error(`building the Go verifier failed (is golang.org/x/mod under ${GOPATH}? ${INSTALL}):\n${r.err}`);
  return bin;
}

interface Checkpoint {
  note: string;
  origin: string;
  size: number;
  root: string;
}

async function checkpoint(base: string): Promise<Checkpoint> {
  const res = await fetch(`${base}${API}/ledger/checkpoint`);
  const note = await res.text();
  expect(res.status, note).to.equal(200);
  const [origin, size, root] = note.split('\n');
  return { note, origin: origin!, size: Number(size), root: root! };
}

/** Polls until the signed checkpoint covers `size` entries (the service re-signs every 50 ms). */
async function checkpointOfSize(base: string, size: number, timeoutMs = 10_000): Promise<Checkpoint> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const cp = await checkpoint(base);
    if (cp.size === size) return cp;
    if (Date.now() > deadline) throw new Error(`the checkpoint stayed at size ${cp.size}, not ${size}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Posts verdicts `from`..`from+n-1`, 16 in flight, each one required to be appended. */
async function postVerdicts(base: string, from: number, n: number): Promise<void> {
  for (let k = from; k < from + n; k += 16) {
    const answers = await Promise.all(Array.from({ length: Math.min(16, from + n - k) }, (_, j) => postVerdict(base, k + j)));
    for (const a of answers) expect(a.status, `verdict ${a.index}`).to.equal(200);
  }
}

/** A proxy to the service that passes the bodies of the paths `paths` selects through `alter`. */
async function tamperingProxy(target: string, paths: RegExp, alter: (body: Buffer) => Buffer): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    void (async () => {
      const upstream = await fetch(`${target}${req.url}`); // fetch undoes any content encoding
      const body = Buffer.from(await upstream.arrayBuffer());
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
      res.end(upstream.status === 200 && paths.test(req.url!) ? alter(body) : body);
    })().catch((err: Error) => res.writeHead(502).end(err.message));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, base: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe('interop: the ledger verified as a C2SP transparency log by Go x/mod sumdb/note + sumdb/tlog', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-interop-'));
  const dataDir = join(dir, 'data');
  const OLD = 40;
  const SIZE = 640; // two full level-0 tiles and a partial one of 128
  let bin: string;
  let svc: ServiceProcess | undefined;
  let vkey: string;
  let old: Checkpoint;
  let cur: Checkpoint;
  const verify = (args: string[]): Promise<Run> => run(bin, args);

  before(async () => {
    bin = await buildVerifier(dir);
    svc = await startService({
      SVC_LEDGER_MODE: 'file',
      SVC_DATA_DIR: dataDir,
      SVC_CHECKPOINT_INTERVAL_MS: '50',
      SVC_WRITE_RATE_PER_S: '100000',
      SVC_WRITE_BURST: '100000',
      SVC_ADDRESS_WRITE_RATE_PER_S: '100000',
      SVC_ADDRESS_WRITE_BURST: '100000',
    });
    const pub = (await (await fetch(`${svc.base}${API}/edge/pubkey`)).json()) as { checkpoint: { origin: string; vkeys: { ed25519: string } } };
    vkey = pub.checkpoint.vkeys.ed25519;
    await postVerdicts(svc.base, 0, OLD);
    old = await checkpointOfSize(svc.base, OLD);
    writeFileSync(join(dir, 'old.note'), old.note);
    await postVerdicts(svc.base, OLD, SIZE - OLD);
    cur = await checkpointOfSize(svc.base, SIZE);
    expect(cur.origin).to.equal(pub.checkpoint.origin);
  });

  after(async () => {
    if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
      svc.child.kill('SIGTERM');
      await once(svc.child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies the checkpoint, its consistency with an earlier one, and inclusion of sampled entries and their tlog-proofs', async () => {
    const r = await verify(['-base', `${svc!.base}${API}`, '-vkey', vkey, '-old', join(dir, 'old.note'), '-sample', '16']);
    expect(r.code, `${r.out}${r.err}`).to.equal(0);
    const lines = r.out.trimEnd().split('\n');
    expect(lines[0]).to.equal(`checkpoint: origin ${cur.origin} size ${SIZE} root ${cur.root} (Ed25519 signature verified)`);
    expect(lines[1]).to.match(new RegExp(`^consistency: size ${OLD} -> ${SIZE} verified \\(\\d+ proof hashes\\)$`));
    const indexes = /^inclusion: 16 records verified: ([\d ]+)$/.exec(lines[2]!)?.[1]?.split(' ').map(Number);
    expect(indexes, lines[2]).to.have.length(16);
    expect([indexes![0], indexes![15]]).to.deep.equal([0, SIZE - 1]);
    expect(lines[3]).to.equal('tlog-proof: 16 bundles verified');
    // every level-0 tile (two full, one partial) and entry bundle, the partial level-1 tile of width 2
    expect(lines[4]).to.equal('tiles fetched: level 0: 3, level 1: 1, level 2: 0, entries: 3');
    expect(lines[5]).to.equal('OK');
    expect(r.err).to.equal('');
    console.log(`      ${r.out.trimEnd().replaceAll('\n', '\n      ')}`);
  });

  it('rejects a checkpoint under another key of the same name', async () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const raw = ed25519Raw(publicKey);
    const other = verifierKey(cur.origin, ed25519KeyId(cur.origin, raw), ED25519_TYPE, raw);
    const r = await verify(['-base', `${svc!.base}${API}`, '-vkey', other, '-sample', '2']);
    expect(r.code).to.equal(1);
    expect(r.err).to.equal('FAIL: checkpoint signature: note has no verifiable signatures\n');
  });

  it('rejects an earlier checkpoint whose root was altered after signing', async () => {
    const root = Buffer.from(old.root, 'base64');
    root[0]! ^= 0x01;
    const file = join(dir, 'altered.note');
    writeFileSync(file, old.note.replace(`\n${old.root}\n`, `\n${root.toString('base64')}\n`));
    const r = await verify(['-base', `${svc!.base}${API}`, '-vkey', vkey, '-old', file, '-sample', '2']);
    expect(r.code).to.equal(1);
    expect(r.err).to.match(/^FAIL: -old .*altered\.note: checkpoint signature: invalid signature for key /);
  });

  it("rejects an earlier checkpoint signed with the log's own key that the current tree does not extend (a fork)", async () => {
    // the log's Ed25519 key, derived from the ledger key in the data directory as the service derives it
    const key = checkpointEd25519Key(loadSigningKey(join(dataDir, 'signing-key.pem')));
    expect(verifierKey(cur.origin, ed25519KeyId(cur.origin, ed25519Raw(createPublicKey(key))), ED25519_TYPE, ed25519Raw(createPublicKey(key)))).to.equal(vkey);
    const root = Buffer.from(old.root, 'base64');
    root[31]! ^= 0x80;
    const text = checkpointText(cur.origin, OLD, root);
    const file = join(dir, 'fork.note');
    writeFileSync(file, signedNote(text, [ed25519NoteSignature(cur.origin, key, text)]));
    const r = await verify(['-base', `${svc!.base}${API}`, '-vkey', vkey, '-old', file, '-sample', '2']);
    expect(r.code).to.equal(1);
    expect(r.err).to.equal(`FAIL: consistency ${OLD} -> ${SIZE}: invalid transparency proof\n`);
  });

  const flip = (offset: number) => (body: Buffer) => {
    body[offset]! ^= 0x01;
    return body;
  };
  /** The first hash of the audit path in a tlog-proof, one bit flipped. */
  const flipProofHash = (body: Buffer) => {
    const lines = body.toString('utf8').split('\n');
    const at = lines.findIndex((l) => l.startsWith('index ')) + 1;
    lines[at] = flip(0)(Buffer.from(lines[at]!, 'base64')).toString('base64');
    return Buffer.from(lines.join('\n'));
  };
  for (const [what, paths, alter, failure] of [
    // the last record's entry (a 2-byte length and 32 bytes each) in the partial bundle of 512..639
    ['an entry in an entry bundle', /\/ledger\/tile\/entries\/002\.p\/128$/, flip(127 * 34 + 2 + 5), /^FAIL: inclusion of 639: invalid transparency proof\n$/],
    ['a hash in a level-0 tile', /\/ledger\/tile\/0\/001$/, flip(32 * 7 + 3), /^FAIL: (consistency 40 -> 640|inclusion of \d+): (invalid transparency proof|downloaded inconsistent tile)\n$/],
    ['the audit path of a tlog-proof', /\/receipt\/proof\?index=639$/, flipProofHash, /^FAIL: tlog-proof 639: inclusion in its checkpoint \(size 640\): invalid transparency proof\n$/],
  ] as const) {
    it(`rejects ${what} altered in transit`, async () => {
      const proxy = await tamperingProxy(svc!.base, paths, alter);
      try {
        const r = await verify(['-base', `${proxy.base}${API}`, '-vkey', vkey, '-old', join(dir, 'old.note'), '-sample', '16']);
        expect(r.code, r.out).to.equal(1);
        expect(r.err).to.match(failure);
      } finally {
        proxy.server.closeAllConnections();
        proxy.server.close();
      }
    });
  }
});
