/**
 * FileStore as a postgres replica's copy of the chain, driven in-process without a database: the
 * nodes the ledger applies after start are written as lines (in one write per 256 KiB, at a sync,
 * or at close), read back from memory until then, synced with a marker of how many are held, and
 * cut back; a full disk keeps the lines in memory until a write succeeds.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import fs, { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger, nodeDigest, ZERO_DIGEST, type LedgerNode } from '../../src/ledger/ledger.js';
import { COPY_SYNCED, FileStore, LEDGER_FILE } from '../../src/ledger/store/file-store.js';

const TYPE = 'application/vnd.svc.receipt+json';
const sha = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();

/** `n` chained nodes from `from`, each with a payload of `pad` bytes. */
function nodes(from: number, n: number, prev: Buffer, pad = 40): LedgerNode[] {
  const out: LedgerNode[] = [];
  for (let i = from; i < from + n; i++) {
    const payload = Buffer.from(JSON.stringify({ n: i, pad: 'p'.repeat(pad) }));
    const paeSha256 = sha(Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(TYPE)} ${TYPE} ${payload.length} `), payload]));
    const digest = nodeDigest(i, prev, paeSha256);
    out.push({ index: i, kind: 'note', tsUtc: '2025-01-01T00:00:00.000Z', payload, paeSha256, sig: Buffer.from([0x30, i & 0xff]), keyid: 'k', prev, nodeDigest: digest, simulated: false });
    prev = digest;
  }
  return out;
}

/** The line the copy holds for `n`, written here field by field. */
const lineOf = (n: LedgerNode): string =>
  `{"i":${n.index},"kind":"note","ts_utc":"${n.tsUtc}","simulated":false,"keyid":"k","payload_type":"${TYPE}","payload":"${n.payload.toString('base64')}","sig":"${n.sig.toString('base64')}",` +
  `"pae_sha256":"${n.paeSha256.toString('hex')}","prev":"${n.prev.toString('hex')}","digest":"${n.nodeDigest.toString('hex')}"}\n`;

const fileOf = (d: string): string => join(d, LEDGER_FILE);

describe('ledger file store as a replica copy (copy: true)', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  const open: { store: FileStore; ledger: Ledger; close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.close();
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  /** A copy opened and replayed as postgres mode opens it, with its ledger over the copy's files. */
  async function copyOf(dir?: string, warnings: string[] = []) {
    const d = dir ?? mkdtempSync(join(tmpdir(), 'svc-copy-'));
    if (!dir) dirs.push(d);
    const store = FileStore.open({ dataDir: d, retryAfterS: 3, copy: true, log: { warn: (_o, m) => void warnings.push(m), info: () => {} } });
    const storage = store.storage();
    const ledger = new Ledger(Infinity, storage);
    await store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: async () => null, resume: (s) => ledger.resume(s), head: () => ledger.head });
    const o = {
      dir: d,
      store,
      ledger,
      close: async () => {
        await store.close();
        storage.close?.();
      },
    };
    open.push(o);
    return o;
  }

  it('applied nodes are served from memory until a sync writes their lines; the sync records how many it holds', async () => {
    const c = await copyOf();
    const header = readFileSync(fileOf(c.dir));
    const ns = nodes(0, 30, ZERO_DIGEST);
    for (const n of ns) c.ledger.applyNode(n);
    expect(readFileSync(fileOf(c.dir)).equals(header)).to.equal(true);
    for (const i of [0, 17, 29]) expect(c.ledger.get(i)!.nodeDigest.equals(ns[i]!.nodeDigest), `node ${i}`).to.equal(true);
    await c.store.syncDerived();
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header.toString('utf8') + ns.map(lineOf).join(''));
    expect(readFileSync(join(c.dir, COPY_SYNCED), 'utf8')).to.equal('30\n');
    expect(c.store.recordsEnd()).to.equal(statSync(fileOf(c.dir)).size);
    expect(await c.store.copyHeld()).to.equal(30);
    // more after the sync, then a sync again: appended after the first lines
    const more = nodes(30, 5, ns.at(-1)!.nodeDigest);
    for (const n of more) c.ledger.applyNode(n);
    await c.store.syncDerived();
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header.toString('utf8') + [...ns, ...more].map(lineOf).join(''));
    expect(readFileSync(join(c.dir, COPY_SYNCED), 'utf8')).to.equal('35\n');
  });

  it('lines are written without a sync once 256 KiB are pending', async () => {
    const c = await copyOf();
    const header = statSync(fileOf(c.dir)).size;
    const ns = nodes(0, 400, ZERO_DIGEST, 600);
    const bytes = ns.map((n) => Buffer.byteLength(lineOf(n)));
    // the first node whose line brings the pending bytes to 256 KiB
    let sum = 0;
    const at = bytes.findIndex((b) => (sum += b) >= 256 * 1024);
    for (const n of ns.slice(0, at)) c.ledger.applyNode(n);
    expect(statSync(fileOf(c.dir)).size).to.equal(header);
    c.ledger.applyNode(ns[at]!);
    expect(statSync(fileOf(c.dir)).size).to.equal(header + sum);
    expect(existsSync(join(c.dir, COPY_SYNCED))).to.equal(false);
  });

  it('copyHeld: the synced count, bounded by the line ends and by the lines whole in the file; 0 before any sync', async () => {
    const c = await copyOf();
    expect(await c.store.copyHeld()).to.equal(0);
    const ns = nodes(0, 20, ZERO_DIGEST);
    for (const n of ns) c.ledger.applyNode(n);
    await c.store.syncDerived();
    expect(await c.store.copyHeld()).to.equal(20);
    writeFileSync(join(c.dir, COPY_SYNCED), '25\n');
    expect(await c.store.copyHeld()).to.equal(20);
    writeFileSync(join(c.dir, COPY_SYNCED), '7\n');
    expect(await c.store.copyHeld()).to.equal(7);
    writeFileSync(join(c.dir, COPY_SYNCED), 'junk\n');
    expect(await c.store.copyHeld()).to.equal(0);
    writeFileSync(join(c.dir, COPY_SYNCED), '20\n');
    // the last line cut short: 19 whole
    truncateSync(fileOf(c.dir), statSync(fileOf(c.dir)).size - 3);
    expect(await c.store.copyHeld()).to.equal(19);
    rmSync(fileOf(c.dir));
    expect(await c.store.copyHeld()).to.equal(0);
  });

  it('cutCopy: back to the first n lines (their line ends kept), or to no file at all', async () => {
    const c = await copyOf();
    const header = readFileSync(fileOf(c.dir), 'utf8');
    const ns = nodes(0, 12, ZERO_DIGEST);
    for (const n of ns) c.ledger.applyNode(n);
    await c.store.syncDerived();
    await c.store.cutCopy(5);
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header + ns.slice(0, 5).map(lineOf).join(''));
    writeFileSync(join(c.dir, COPY_SYNCED), '12\n');
    expect(await c.store.copyHeld()).to.equal(5);
    await c.store.cutCopy(0);
    expect(existsSync(fileOf(c.dir))).to.equal(false);
    expect(await c.store.copyHeld()).to.equal(0);
  });

  it('a full disk: the part written is cut, the lines stay in memory (served from there) until a sync writes them', async () => {
    const warnings: string[] = [];
    const c = await copyOf(undefined, warnings);
    const header = readFileSync(fileOf(c.dir), 'utf8');
    const ns = nodes(0, 400, ZERO_DIGEST, 600);
    const real = fs.writeSync;
    fs.writeSync = ((fd: number, buf: Uint8Array, off: number, len: number): number => {
      real(fd, buf, off, Math.min(len, 1000));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }) as unknown as typeof fs.writeSync;
    syncBuiltinESMExports();
    try {
      for (const n of ns) c.ledger.applyNode(n);
    } finally {
      fs.writeSync = real;
      syncBuiltinESMExports();
    }
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header);
    expect(warnings[0]).to.equal('ledger copy: write failed; lines kept in memory until it succeeds');
    for (const i of [0, 250, 399]) expect(c.ledger.get(i)!.payload.equals(ns[i]!.payload), `node ${i}`).to.equal(true);
    await c.store.syncDerived();
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header + ns.map(lineOf).join(''));
    expect(readFileSync(join(c.dir, COPY_SYNCED), 'utf8')).to.equal('400\n');
  });

  it('close() writes what is pending and releases the descriptor', async () => {
    const c = await copyOf();
    const header = readFileSync(fileOf(c.dir), 'utf8');
    const ns = nodes(0, 3, ZERO_DIGEST);
    for (const n of ns) c.ledger.applyNode(n);
    await c.store.syncDerived();
    const more = nodes(3, 2, ns.at(-1)!.nodeDigest);
    for (const n of more) c.ledger.applyNode(n);
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    await c.close();
    open.splice(open.indexOf(c), 1);
    expect(fds()).to.be.below(before);
    expect(readFileSync(fileOf(c.dir), 'utf8')).to.equal(header + [...ns, ...more].map(lineOf).join(''));
    dirs.push(c.dir);
  });

  it('rebuilt from the rows (cut to nothing, replayed again), it keeps no descriptor on the file it removed, and close() leaves none', async () => {
    const c = await copyOf();
    const ns = nodes(0, 6, ZERO_DIGEST);
    for (const n of ns) c.ledger.applyNode(n);
    await c.store.syncDerived();
    const onLog = () => readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        return readlinkSync(join('/proc/self/fd', fd)).startsWith(fileOf(c.dir)) ? [readlinkSync(join('/proc/self/fd', fd))] : [];
      } catch {
        return []; // the descriptor readdir itself used, closed since
      }
    });
    // what postgres mode does with a copy that does not match the database
    await c.store.cutCopy(0);
    const storage = c.store.storage();
    const ledger = new Ledger(Infinity, storage);
    await c.store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: async () => null, resume: (s) => ledger.resume(s), head: () => ledger.head });
    expect(onLog().filter((p) => p.endsWith('(deleted)'))).to.deep.equal([]);
    expect(onLog()).to.have.length(1); // the append descriptor on the new file
    storage.close?.();
    await c.close();
    open.splice(open.indexOf(c), 1);
    dirs.push(c.dir);
    expect(onLog()).to.deep.equal([]);
  });
});

describe('ledger file store (file mode): derived files, damage found later, what replay cannot open', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const fresh = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-filemode-'));
    dirs.push(d);
    return d;
  };

  it('syncDerived writes the line ends; recordsEnd is where the durable records end; storage close() releases its files', async () => {
    const d = fresh();
    const warned: [object, string][] = [];
    const store = FileStore.open({ dataDir: d, retryAfterS: 3, log: { warn: (o, m) => void warned.push([o, m]), info: () => {} } });
    const storage = store.storage();
    const ledger = new Ledger(Infinity, storage);
    await store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: async () => null, resume: (s) => ledger.resume(s), head: () => ledger.head });
    const ns = nodes(0, 6, ZERO_DIGEST);
    const committed = await store.commit(
      ns.map((n) => ({ kind: n.kind, tsUtc: n.tsUtc, payload: n.payload, paeSha256: n.paeSha256, sig: n.sig, keyid: n.keyid })),
      { size: 0, head: ZERO_DIGEST },
    );
    ledger.applyNodes(committed);
    expect(store.recordsEnd()).to.equal(statSync(fileOf(d)).size);
    await ledger.sync();
    await store.syncDerived();
    const ends = readFileSync(join(d, 'tlog', 'record-ends'));
    const text = readFileSync(fileOf(d), 'utf8');
    const want = [...text.matchAll(/\n/g)].slice(1).map((m) => m.index! + 1);
    expect(Array.from({ length: ends.length / 8 }, (_, k) => Number(ends.readBigUInt64BE(k * 8)))).to.deep.equal(want);
    // damage found later: refused from then on; a second finding does not replace the first
    store.damaged({ index: 2, reason: 'signature does not verify' });
    store.damaged({ index: 4, reason: 'another' });
    expect(store.status().state).to.equal('CORRUPT');
    expect(store.status().reason).to.equal('ledger file damaged at node 2: signature does not verify (found by the background fsck); appends are refused');
    expect(warned.filter(([, m]) => m === 'ledger file damaged: appends refused')).to.deep.equal([[{ index: 2, reason: 'signature does not verify', file: fileOf(d) }, 'ledger file damaged: appends refused']]);
    const fds = () => readdirSync('/proc/self/fd').length;
    const before = fds();
    storage.close?.();
    expect(fds()).to.be.below(before);
    await store.close();
  });

  it('a khipu.jsonl that cannot be opened (a directory) is an error, not a new log', async () => {
    const d = fresh();
    fs.mkdirSync(join(d, LEDGER_FILE));
    const store = FileStore.open({ dataDir: d, retryAfterS: 3 });
    try {
      const err = await store.replay({ apply: () => {}, verifySignatures: async () => null }).then(
        () => null,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(err?.code).to.equal('EISDIR');
    } finally {
      await store.close();
    }
  });
});

describe('ledger file store (file mode): opening at a checkpoint, in process', function () {
  this.timeout(60_000);
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const N = 40;
  const K = 30;
  const ns = nodes(0, N, ZERO_DIGEST);
  const rootOf = (size: number): Buffer => {
    const l = new Ledger(1000);
    for (const n of ns.slice(0, size)) l.applyNode(n);
    return l.root();
  };

  /** A file-mode directory holding the N nodes, its derived files synced. */
  async function written(): Promise<string> {
    const d = mkdtempSync(join(tmpdir(), 'svc-anchor-'));
    dirs.push(d);
    const store = FileStore.open({ dataDir: d, retryAfterS: 3 });
    const storage = store.storage();
    const ledger = new Ledger(Infinity, storage);
    await store.replay({ apply: (n) => ledger.applyNode(n, false, true), verifySignatures: async () => null, resume: (s) => ledger.resume(s), head: () => ledger.head });
    const committed = await store.commit(
      ns.map((n) => ({ kind: n.kind, tsUtc: n.tsUtc, payload: n.payload, paeSha256: n.paeSha256, sig: n.sig, keyid: n.keyid })),
      { size: 0, head: ZERO_DIGEST },
    );
    ledger.applyNodes(committed);
    await ledger.sync();
    await store.syncDerived();
    await store.close();
    storage.close?.();
    return d;
  }

  /** Opens `d` at `anchor`: what was applied, the report, the state and the warnings. */
  async function reopen(d: string, anchor: { size: number; root: Buffer } | null) {
    const warned: string[] = [];
    const store = FileStore.open({ dataDir: d, retryAfterS: 3, log: { warn: (_o, m) => void warned.push(m), info: () => {} } });
    const storage = store.storage();
    const ledger = new Ledger(Infinity, storage);
    const applied: number[] = [];
    try {
      const report = await store.replay({
        apply: (n) => (applied.push(n.index), ledger.applyNode(n, false, true)),
        verifySignatures: async () => null,
        anchor,
        resume: (s) => ledger.resume(s),
        head: () => ledger.head,
      });
      return { report: { nodes: report.nodes, fromCheckpoint: report.fromCheckpoint, corruptAt: report.corruptAt }, applied, status: store.status(), warned, root: ledger.root(), size: ledger.size };
    } finally {
      await store.close();
      storage.close?.();
    }
  }

  it('opens at the checkpoint and reads only the records after it; the tree is the whole one', async () => {
    const d = await written();
    const r = await reopen(d, { size: K, root: rootOf(K) });
    expect(r.report).to.deep.equal({ nodes: N, fromCheckpoint: K, corruptAt: null });
    expect(r.applied).to.deep.equal(Array.from({ length: N - K }, (_, k) => K + k));
    expect([r.size, r.root.equals(rootOf(N)), r.status.state, r.warned]).to.deep.equal([N, true, 'READY', []]);
    // an anchor of size 0 is no anchor
    const zero = await reopen(d, { size: 0, root: rootOf(0) });
    expect([zero.report.fromCheckpoint, zero.applied.length]).to.deep.equal([0, N]);
  });

  it('derived files that do not hold the checkpoint: rebuilt from every record, with a warning', async () => {
    const rebuilt = 'ledger file: derived files do not match the checkpoint; rebuilding them from the records';
    const wrongRoot = await reopen(await written(), { size: K, root: rootOf(K - 1) });
    expect([wrongRoot.report, wrongRoot.applied.length, wrongRoot.warned, wrongRoot.root.equals(rootOf(N))]).to.deep.equal([{ nodes: N, fromCheckpoint: 0, corruptAt: null }, N, [rebuilt], true]);
    const shortEnds = await written();
    truncateSync(join(shortEnds, 'tlog', 'record-ends'), (K - 1) * 8);
    const s = await reopen(shortEnds, { size: K, root: rootOf(K) });
    expect([s.report.fromCheckpoint, s.applied.length, s.warned]).to.deep.equal([0, N, [rebuilt]]);
    const offLine = await written();
    const ends = readFileSync(join(offLine, 'tlog', 'record-ends'));
    ends.writeBigUInt64BE(ends.readBigUInt64BE((K - 1) * 8) - 2n, (K - 1) * 8);
    writeFileSync(join(offLine, 'tlog', 'record-ends'), ends);
    const o = await reopen(offLine, { size: K, root: rootOf(K) });
    expect([o.report.fromCheckpoint, o.applied.length, o.warned, o.root.equals(rootOf(N))]).to.deep.equal([0, N, [rebuilt], true]);
  });

  it('records the checkpoint counted that are gone: damage at the first one not wholly in the file; nothing after it applied', async () => {
    const d = await written();
    const text = readFileSync(fileOf(d), 'utf8');
    const lineEnds = [...text.matchAll(/\n/g)].slice(1).map((m) => m.index! + 1);
    // the file ends in the middle of node 20's line
    truncateSync(fileOf(d), lineEnds[20]! - 5);
    const r = await reopen(d, { size: K, root: rootOf(K) });
    const reason = `node 20: missing, the checkpoint signed before names ${K} nodes (records 20..${K - 1} are gone)`;
    expect(r.report.corruptAt).to.deep.equal({ index: 20, reason });
    expect([r.status.state, r.status.reason]).to.deep.equal(['CORRUPT', `ledger file damaged at node 20: ${reason}; appends are refused, nodes 0..19 are served`]);
    expect([r.applied, r.size]).to.deep.equal([[], 20]);
    // a new directory under a checkpoint of K nodes: all of them are missing
    const empty = mkdtempSync(join(tmpdir(), 'svc-anchor-'));
    dirs.push(empty);
    const e = await reopen(empty, { size: K, root: rootOf(K) });
    expect(e.report.corruptAt).to.deep.equal({ index: 0, reason: `node 0: missing, the checkpoint signed before names ${K} nodes (records 0..${K - 1} are gone)` });
  });
});
