/**
 * fsck's whole report, field by field, on copies of one file-mode log written by the service: the
 * tiles and signatures counted, progress, derived files missing or short, a damaged item of each
 * derived file, which finding wins at one index, keys and checkpoints of every kind (signed here
 * with a key of the test's own under keys/), a range that ends early, the first and last lines.
 */
import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import { fsckDataDir, NotALedgerError, signatureCheck, type FsckProgress, type FsckReport } from '../../src/ledger/fsck.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { FileStore } from '../../src/ledger/store/file-store.js';
import { leafHash, rootFromLeafHashes } from '../../src/lib/merkle.js';
import { buildTestApp } from '../helpers/app.js';
import { until } from '../helpers/until.js';

const NODES = 300;
const frame = (k: number) => ({ track_id: `fr${k}`, source: 'ADS-B', lat: 36.2 + k * 1e-4, lon: -115.16, alt_m: 80, speed_mps: 10, rssi_dbm: -50, id_authenticated: true, n_observations: 500 });

/** The report without its timing, which is checked on its own. */
const fields = (r: FsckReport) => ({ ok: r.ok, nodes: r.nodes, firstBad: r.firstBad, tiles: r.tiles, checkpoint: r.checkpoint, signatures: r.signatures });

function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset]! ^= 0x01;
  writeFileSync(file, bytes);
}

describe('ledger fsck: the whole report', function () {
  this.timeout(120_000);
  let root: string;
  let clean: string;
  let copies = 0;
  let lines: string[];
  let digests: Buffer[];
  /** Where each node's line ends in khipu.jsonl (past its newline). */
  let ends: number[];
  const copy = (): string => {
    const dir = join(root, `copy-${copies++}`);
    cpSync(clean, dir, { recursive: true });
    return dir;
  };
  /** A key of the test's own, published under keys/ as the service publishes its own. */
  let own: { privateKey: KeyObject; der: Buffer; keyid: string };
  const withOwnKey = (dir: string): string => {
    writeFileSync(join(dir, 'keys', `${own.keyid}.pem`), createPublicKeyPem(own.der));
    return dir;
  };
  const createPublicKeyPem = (der: Buffer): string => `-----BEGIN PUBLIC KEY-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END PUBLIC KEY-----\n`;
  /** A checkpoint note over `text`, its ECDSA line signed by the test's key (or another key id / signature). */
  const note = (text: string, over: { keyId?: Buffer; sig?: Buffer } = {}): string => {
    const keyId = over.keyId ?? createHash('sha256').update(own.der).digest().subarray(0, 4);
    const sig = over.sig ?? sign('sha256', Buffer.from(text), own.privateKey);
    return `${text}\n\u2014 test.example/log ${Buffer.concat([keyId, sig]).toString('base64')}\n`;
  };
  const rootOf = (size: number): string => rootFromLeafHashes(digests.slice(0, size).map((d) => leafHash(d))).toString('base64');

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-fsck-report-'));
    clean = join(root, 'clean');
    const t = await buildTestApp({ ledger: { mode: 'file', dataDir: clean, checkpointIntervalMs: 10 } });
    try {
      for (let k = 0; k < NODES; k += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => t.http.post('/api/svc/v1/verdict').send(frame(k + j)).expect(200)));
      await until(`a checkpoint of ${NODES} nodes on disk`, () => readFileSync(join(clean, 'checkpoint'), 'utf8').split('\n')[1] === String(NODES));
    } finally {
      await t.close();
    }
    const text = readFileSync(join(clean, 'khipu.jsonl'), 'utf8');
    lines = text.split('\n');
    digests = lines.slice(1, NODES + 1).map((l) => Buffer.from((JSON.parse(l) as { digest: string }).digest, 'hex'));
    ends = [];
    let at = Buffer.byteLength(lines[0]!) + 1;
    for (let i = 1; i <= NODES; i++) ends.push((at += Buffer.byteLength(lines[i]!) + 1));
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const der = publicKey.export({ type: 'spki', format: 'der' });
    own = { privateKey, der, keyid: createHash('sha256').update(der).digest('hex') };
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a clean log: every field; the rate from the time taken; progress from the signatures to the checkpoint with an exact total', async () => {
    const seen: FsckProgress[] = [];
    const r = await fsckDataDir(clean, { onProgress: (p) => seen.push(p) });
    expect(fields(r)).to.deep.equal({ ok: true, nodes: NODES, firstBad: null, tiles: { levels: 2, hashes: NODES + 1, interiors: 1 }, checkpoint: { size: NODES, verified: true, reason: null }, signatures: NODES });
    expect(r.ms).to.be.above(0);
    expect(r.entriesPerSecond).to.equal(Math.round((NODES * 1000) / r.ms));
    const size = statSync(join(clean, 'khipu.jsonl')).size;
    expect(seen[0]).to.deep.equal({ phase: 'signatures', done: 0, total: NODES, bytes: size });
    expect(seen.at(-1)).to.deep.equal({ phase: 'checkpoint', done: NODES, total: NODES, bytes: size });
    for (const p of seen.slice(1, -1)) expect(p).to.deep.equal({ phase: 'signatures', done: NODES, total: NODES, bytes: size });
  });

  it('leaves no descriptor open', async () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    await fsckDataDir(clean);
    expect(open()).to.equal(before);
  });

  it('derived files missing or short are not damage (they are rebuilt at the next start): what is there is compared', async () => {
    const missing = copy();
    for (const f of ['tlog/tile/entries', 'tlog/pae', 'tlog/record-ends', 'tlog/interior/0']) rmSync(join(missing, f));
    const seen: FsckProgress[] = [];
    const r = await fsckDataDir(missing, { onProgress: (p) => seen.push(p) });
    expect(fields(r)).to.deep.equal({ ok: true, nodes: NODES, firstBad: null, tiles: { levels: 2, hashes: NODES + 1, interiors: 0 }, checkpoint: { size: NODES, verified: true, reason: null }, signatures: NODES });
    // without the line ends the total is estimated from the bytes read: all of them by then
    expect(seen[0]).to.deep.include({ phase: 'signatures', total: NODES });
    const short = copy();
    truncateSync(join(short, 'tlog/pae'), 100 * 32 + 5);
    truncateSync(join(short, 'tlog/record-ends'), 50 * 8);
    truncateSync(join(short, 'tlog/tile/entries'), 10 * 34);
    truncateSync(join(short, 'tlog/tile/0'), 200 * 32);
    expect(fields(await fsckDataDir(short))).to.deep.equal({ ok: true, nodes: NODES, firstBad: null, tiles: { levels: 2, hashes: 201, interiors: 1 }, checkpoint: { size: NODES, verified: true, reason: null }, signatures: NODES });
  });

  it('a damaged item of each derived file is named at its node', async () => {
    const pae = copy();
    flipByte(join(pae, 'tlog/pae'), 77 * 32 + 31);
    expect((await fsckDataDir(pae)).firstBad).to.deep.equal({ index: 77, reason: "tlog/pae item 77 is not the node's pae_sha256" });
    const endsDir = copy();
    flipByte(join(endsDir, 'tlog/record-ends'), 88 * 8 + 7);
    expect((await fsckDataDir(endsDir)).firstBad).to.deep.equal({ index: 88, reason: `tlog/record-ends item 88 is not where the node's line ends (${ends[88]})` });
    const entries = copy();
    const bytes = readFileSync(join(entries, 'tlog/tile/entries'));
    bytes.writeUInt16BE(31, 99 * 34);
    writeFileSync(join(entries, 'tlog/tile/entries'), bytes);
    expect((await fsckDataDir(entries)).firstBad).to.deep.equal({ index: 99, reason: "tlog/tile/entries record 99 is not the node's digest" });
    const level1 = copy();
    flipByte(join(level1, 'tlog/tile/0'), 299 * 32);
    const r = await fsckDataDir(level1);
    expect(r.firstBad).to.deep.equal({ index: 299, reason: 'tlog/tile/0 hash 299 (tile 1) is not the leaf hash of node 299' });
    expect(r.ok).to.equal(false);
  });

  it('at one index a record or signature is named before a derived file; a lower index wins whatever it is', async () => {
    const both = copy();
    const sigOf = (i: number): string => (JSON.parse(lines[i + 1]!) as { sig: string }).sig;
    const donor = [151, 152, 153, 154, 155].find((j) => sigOf(j).length === sigOf(150).length)!;
    const edited = [...lines];
    const l150 = JSON.parse(edited[151]!) as { sig: string };
    l150.sig = sigOf(donor);
    edited[151] = JSON.stringify(l150);
    writeFileSync(join(both, 'khipu.jsonl'), edited.join('\n'));
    flipByte(join(both, 'tlog/pae'), 150 * 32);
    const r = await fsckDataDir(both);
    expect(r.firstBad!.index).to.equal(150);
    expect(r.firstBad!.reason).to.match(/^signature does not verify over its PAE with key [0-9a-f]{16}$/);
    flipByte(join(both, 'tlog/record-ends'), 140 * 8 + 7);
    expect((await fsckDataDir(both)).firstBad).to.deep.equal({ index: 140, reason: `tlog/record-ends item 140 is not where the node's line ends (${ends[140]})` });
  });

  it('a broken line before the checkpoint size: the line is named, not the missing nodes the checkpoint counted', async () => {
    const dir = copy();
    const edited = [...lines];
    const l = JSON.parse(edited[201]!) as { digest: string };
    l.digest = '0'.repeat(64);
    edited[201] = JSON.stringify(l);
    writeFileSync(join(dir, 'khipu.jsonl'), edited.join('\n'));
    const r = await fsckDataDir(dir);
    expect(fields(r)).to.deep.equal({
      ok: false,
      nodes: 200,
      firstBad: { index: 200, reason: 'line 202 of khipu.jsonl: node digest does not recompute' },
      tiles: { levels: 1, hashes: 200, interiors: 0 },
      checkpoint: { size: NODES, verified: false, reason: `it signs ${NODES} nodes, 200 verify in the records` },
      signatures: 200,
    });
  });

  it('keys: without keys/ (or with a damaged key file) every signature is by an unknown key; keys/ that is no directory is an error', async () => {
    const keyid = (JSON.parse(lines[1]!) as { keyid: string }).keyid;
    const unknown = { index: 0, reason: `signed by key ${keyid}, which is not among the log's public keys` };
    const noKeys = copy();
    rmSync(join(noKeys, 'keys'), { recursive: true });
    const r = await fsckDataDir(noKeys);
    expect([r.firstBad, r.checkpoint]).to.deep.equal([unknown, { size: NODES, verified: false, reason: 'its ECDSA signature does not verify with any key under keys/' }]);
    const damaged = copy();
    for (const f of readdirSync(join(damaged, 'keys')).filter((n) => n.endsWith('.pem'))) writeFileSync(join(damaged, 'keys', f), 'not a key\n');
    expect((await fsckDataDir(damaged)).firstBad).to.deep.equal(unknown);
    const file = copy();
    rmSync(join(file, 'keys'), { recursive: true });
    writeFileSync(join(file, 'keys'), 'x');
    const err = await fsckDataDir(file).then(
      () => null,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).to.equal('ENOTDIR');
  });

  it('checkpoints: none, unreadable in each way, of size 0 or of a smaller size signed by a key under keys/, badly signed', async () => {
    const none = copy();
    rmSync(join(none, 'checkpoint'));
    const r = await fsckDataDir(none);
    expect([r.ok, r.checkpoint, r.firstBad]).to.deep.equal([true, null, null]);
    const unreadable = { size: null, verified: false, reason: 'the checkpoint file is not a signed checkpoint note' };
    const o = 'test.example/log';
    for (const bad of [`${o}\n3\n${rootOf(3)}\n`, note(`${o}\n3\n${rootOf(3)}\nextra\n`), note(`${o}\n1e2\n${rootOf(3)}\n`), note(`${o}\n9007199254740993\n${rootOf(3)}\n`), note(`${o}\n3\nAAAA\n`)]) {
      const dir = withOwnKey(copy());
      writeFileSync(join(dir, 'checkpoint'), bad);
      const got = await fsckDataDir(dir);
      expect([got.ok, got.firstBad, got.checkpoint], JSON.stringify(bad)).to.deep.equal([false, null, unreadable]);
    }
    const verified = async (text: string, over?: { keyId?: Buffer; sig?: Buffer }) => {
      const dir = withOwnKey(copy());
      writeFileSync(join(dir, 'checkpoint'), note(text, over));
      return (await fsckDataDir(dir)).checkpoint;
    };
    expect(await verified(`${o}\n0\n${createHash('sha256').digest('base64')}\n`)).to.deep.equal({ size: 0, verified: true, reason: null });
    expect(await verified(`${o}\n100\n${rootOf(100)}\n`)).to.deep.equal({ size: 100, verified: true, reason: null });
    expect(await verified(`${o}\n100\n${rootOf(101)}\n`)).to.deep.equal({ size: 100, verified: false, reason: 'its root is not the root of the first 100 nodes' });
    const bad = { size: 100, verified: false, reason: 'its ECDSA signature does not verify with any key under keys/' };
    expect(await verified(`${o}\n100\n${rootOf(100)}\n`, { keyId: Buffer.from('abcd') })).to.deep.equal(bad);
    expect(await verified(`${o}\n100\n${rootOf(100)}\n`, { sig: sign('sha256', Buffer.from('other'), own.privateKey) })).to.deep.equal(bad);
    expect(await verified(`${o}\n100\n${rootOf(100)}\n`, { sig: Buffer.from('not DER at all') })).to.deep.equal(bad);
    const dirCp = copy();
    rmSync(join(dirCp, 'checkpoint'));
    mkdirSync(join(dirCp, 'checkpoint'));
    const err = await fsckDataDir(dirCp).then(
      () => null,
      (e: NodeJS.ErrnoException) => e,
    );
    expect(err?.code).to.equal('EISDIR');
  });

  it('a range that ends early (a serving process): the records up to it; a checkpoint signed past it is not judged', async () => {
    const r = await fsckDataDir(clean, { recordsEnd: ends[149]! });
    expect(fields(r)).to.deep.equal({ ok: true, nodes: 150, firstBad: null, tiles: { levels: 1, hashes: 150, interiors: 0 }, checkpoint: null, signatures: 150 });
    const whole = await fsckDataDir(clean, { recordsEnd: ends[NODES - 1]! });
    expect([whole.nodes, whole.checkpoint]).to.deep.equal([NODES, { size: NODES, verified: true, reason: null }]);
    const past = await fsckDataDir(clean, { recordsEnd: ends[NODES - 1]! + 1000 });
    expect([past.nodes, past.ok]).to.deep.equal([NODES, true]);
  });

  it('the first and last lines: no header, an empty file, a header only, a torn last line, a whole last node without its newline', async () => {
    const expectFirst = async (text: string, firstBad: FsckReport['firstBad'], nodes: number) => {
      const dir = copy();
      writeFileSync(join(dir, 'khipu.jsonl'), text);
      const r = await fsckDataDir(dir);
      expect([r.firstBad, r.nodes], JSON.stringify(text.slice(0, 40))).to.deep.equal([firstBad, nodes]);
      return r;
    };
    await expectFirst(`${lines.slice(1, 4).join('\n')}\n`, { index: 0, reason: 'line 1 of khipu.jsonl is not a svc.khipu-file/v1 header' }, 0);
    await expectFirst('', { index: 0, reason: 'khipu.jsonl is empty: it has no header line' }, 0);
    const header = await expectFirst(`${lines[0]}\n`, { index: 0, reason: `node 0 is missing: the checkpoint signed ${NODES} nodes` }, 0);
    expect(header.signatures).to.equal(0);
    const all = `${lines.slice(0, NODES + 1).join('\n')}\n`;
    for (const torn of ['{"i":300,"kind"', '123', 'null']) {
      const r = await expectFirst(all + torn, null, NODES);
      expect(r.ok, torn).to.equal(true);
    }
    // the last node without its newline is a node (the store keeps it; its line end is one past the file)
    const dir = copy();
    writeFileSync(join(dir, 'khipu.jsonl'), all.slice(0, -1));
    const seen: FsckProgress[] = [];
    const r = await fsckDataDir(dir, { onProgress: (p) => seen.push(p) });
    expect(fields(r)).to.deep.equal(fields(await fsckDataDir(clean)));
    // the stored line ends reach one past the file: the total is known from the start
    expect(seen[0]).to.deep.equal({ phase: 'signatures', done: 0, total: NODES, bytes: ends[NODES - 1]! - 1 });
  });

  it('tile levels and derived files that are missing, empty or no file', async () => {
    const noLevel1 = copy();
    rmSync(join(noLevel1, 'tlog/tile/1'));
    expect(fields(await fsckDataDir(noLevel1))).to.deep.include({ ok: true, tiles: { levels: 1, hashes: NODES, interiors: 1 } });
    const emptyLevel1 = copy();
    truncateSync(join(emptyLevel1, 'tlog/tile/1'), 0);
    expect(fields(await fsckDataDir(emptyLevel1))).to.deep.include({ ok: true, tiles: { levels: 1, hashes: NODES, interiors: 1 } });
    // the last node read on its own (no newline) against a PAE column that ends long before it
    const short = copy();
    writeFileSync(join(short, 'khipu.jsonl'), `${lines.slice(0, NODES + 1).join('\n')}`);
    truncateSync(join(short, 'tlog/pae'), 100 * 32);
    expect(fields(await fsckDataDir(short))).to.deep.include({ ok: true, nodes: NODES, firstBad: null });
    for (const f of ['tlog/pae', 'khipu.jsonl']) {
      const dir = copy();
      rmSync(join(dir, f));
      mkdirSync(join(dir, f));
      const err = await fsckDataDir(dir).then(
        () => null,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(err?.code, f).to.equal('EISDIR');
    }
  });

  it('refuses what is no ledger directory: a missing one, a file', async () => {
    for (const dir of [join(root, 'absent'), join(clean, 'khipu.jsonl')]) {
      const err = await fsckDataDir(dir).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, dir).to.be.instanceOf(NotALedgerError);
    }
  });

  it('a signature check that fails is an error; a pluggable check names what it finds', async () => {
    const boom = await fsckDataDir(clean, { verifySignatures: () => Promise.reject(new Error('pool died')) }).then(
      () => null,
      (e: Error) => e,
    );
    expect(boom?.message).to.equal('pool died');
    const picky = await fsckDataDir(clean, { inFlight: 1, verifySignatures: async (nodes) => ({ index: nodes[7]!.index, reason: 'picked' }) });
    expect([picky.firstBad, picky.signatures, picky.ok]).to.deep.equal([{ index: 7, reason: 'picked' }, NODES, false]);
  });

  it('signatureCheck: null when all verify; else the first failing node, with its key or as an unknown key', async () => {
    const nodes = [0, 1, 2].map((index) => ({ index: 10 + index, keyid: index === 2 ? 'f'.repeat(64) : 'a'.repeat(64), payload: Buffer.from('p'), sig: Buffer.from('s') })) as unknown as Parameters<ReturnType<typeof signatureCheck>>[0];
    const keys = { ['a'.repeat(64)]: new Uint8Array([1]) };
    expect(await signatureCheck(async () => [true, true, true])(nodes, keys)).to.equal(null);
    expect(await signatureCheck(async () => [false, false, true])(nodes, keys)).to.deep.equal({ index: 10, reason: `signature does not verify over its PAE with key ${'a'.repeat(16)}` });
    expect(await signatureCheck(async () => [true, true, false])(nodes, keys)).to.deep.equal({ index: 12, reason: `signed by key ${'f'.repeat(64)}, which is not among the log's public keys` });
    let task: unknown = null;
    await signatureCheck(async (t) => ((task = t), [true, true, true]))(nodes, keys);
    expect((task as { kind: string; keys: unknown; items: { keyid: string }[] }).kind).to.equal('verify');
    expect((task as { items: { keyid: string }[] }).items.map((i) => i.keyid)).to.deep.equal(['a'.repeat(64), 'a'.repeat(64), 'f'.repeat(64)]);
  });

  describe('a log of 4,400 nodes (several signature chunks, a flush while reading, 17 full tiles)', () => {
    const BIG = 4400;
    let big: string;
    let bigOwn: { privateKey: KeyObject; keyid: string };
    before(async () => {
      big = join(root, 'big');
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const der = publicKey.export({ type: 'spki', format: 'der' });
      bigOwn = { privateKey, keyid: createHash('sha256').update(der).digest('hex') };
      const store = FileStore.open({ dataDir: big, retryAfterS: 3 });
      const storage = store.storage();
      const ledger = new Ledger(Infinity, storage);
      await store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: async () => null, resume: (sz) => ledger.resume(sz), head: () => ledger.head });
      await store.recordKey(bigOwn.keyid, publicKey.export({ type: 'spki', format: 'pem' }).toString());
      for (let k = 0; k < BIG; k += 400) {
        const inputs = Array.from({ length: 400 }, (_, j) => {
          const payload = Buffer.from(JSON.stringify({ n: k + j }));
          const paeBytes = pae(PAYLOAD_TYPE, payload);
          // node 3000 carries a signature over other bytes
          const sig = sign('sha256', k + j === 3000 ? Buffer.from('other') : paeBytes, privateKey);
          return { kind: 'note', tsUtc: '2025-01-01T00:00:00.000Z', payload, paeSha256: sha256(paeBytes), sig, keyid: bigOwn.keyid };
        });
        ledger.applyNodes(await store.commit(inputs, { size: ledger.size, head: ledger.head }));
      }
      await ledger.sync();
      await store.syncDerived();
      const text = `test.example/log\n${BIG}\n${ledger.root().toString('base64')}\n`;
      const keyId = createHash('sha256').update(der).digest().subarray(0, 4);
      writeFileSync(join(big, 'checkpoint'), `${text}\n\u2014 test.example/log ${Buffer.concat([keyId, sign('sha256', Buffer.from(text), privateKey)]).toString('base64')}\n`);
      await store.close();
      storage.close?.();
    });
    const bigCopy = (): string => {
      const dir = join(root, `big-${copies++}`);
      cpSync(big, dir, { recursive: true });
      return dir;
    };

    it('every field; progress: the flush at 4,096 nodes, the signatures, the checkpoint', async () => {
      const seen: FsckProgress[] = [];
      const r = await fsckDataDir(big, { onProgress: (p) => seen.push(p) });
      const sigBad = { index: 3000, reason: `signature does not verify over its PAE with key ${bigOwn.keyid.slice(0, 16)}` };
      expect(fields(r)).to.deep.equal({ ok: false, nodes: BIG, firstBad: sigBad, tiles: { levels: 2, hashes: BIG + 17, interiors: 17 }, checkpoint: { size: BIG, verified: true, reason: null }, signatures: BIG });
      const size = statSync(join(big, 'khipu.jsonl')).size;
      // the whole file is one read: its bytes are all read at the first flush; no chunk settled yet
      expect(seen[0]).to.deep.equal({ phase: 'records', done: 0, total: BIG, bytes: size });
      expect(seen.filter((p) => p.phase === 'signatures')[0]).to.deep.equal({ phase: 'signatures', done: 0, total: BIG, bytes: size });
      expect(seen.at(-1)).to.deep.equal({ phase: 'checkpoint', done: BIG, total: BIG, bytes: size });
      expect(seen.map((p) => p.phase).join(' ')).to.match(/^records (signatures )+checkpoint$/);
    });

    it('a damaged level-1 hash and a damaged interior past the first tile name the first node they cover', async () => {
      const l1 = bigCopy();
      flipByte(join(l1, 'tlog/tile/1'), 5 * 32 + 3);
      expect((await fsckDataDir(l1)).firstBad).to.deep.equal({ index: 1280, reason: 'tlog/tile/1 hash 5 (tile 0) is not the hash of nodes 1280..1535' });
      const inner = bigCopy();
      flipByte(join(inner, 'tlog/interior/0'), (9 * 254 + 130) * 32);
      expect((await fsckDataDir(inner)).firstBad).to.deep.equal({ index: 2304, reason: 'tlog/interior/0 of tile 9 is not the interior of tlog/tile/0 tile 9' });
    });
  });
});
