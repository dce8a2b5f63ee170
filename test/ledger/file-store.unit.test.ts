// FileStore in process, for mutation testing (StrykerJS switches mutants inside this process only;
// file-store.test.ts drives the same file through service child processes): the line format and
// its parser, the writer lock (an OS lock on LOCK: holder named, any name without the lock taken over),
// create, replay (every node in order, the signature sweep in chunks, torn-tail trimming, damage at
// its index with nothing rewritten), commit (sequencing, exact bytes, one write per batch, the
// durable length), the failure path (UNAVAILABLE, capped doubling backoff, reopen cutting the
// unacknowledged batch), the keys directory and close. Every expectation is computed here: lines
// built by hand, PAE and node digests recomputed with node:crypto, the file read back byte for byte.
// Private members are reached through a cast only to inject a failing descriptor, to read the
// durable length, and to drive the commit guard; timers and the clock are replaced only around
// the failure path, so nothing here depends on how fast it runs.
import { expect } from 'chai';
import { createHash, generateKeyPairSync } from 'node:crypto';
import fs, { constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, renameSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppendInput, LedgerNode } from '../../src/ledger/ledger.js';
import { acquireLock, FILE_SCHEMA, FileStore, LEDGER_FILE, LockHeldError, nodeLine, parseNodeLine, type FileStoreOptions } from '../../src/ledger/store/file-store.js';
import { StoreUnavailableError, type AdapterStatus, type ReplayReport } from '../../src/ledger/store/store.js';
import { referenceNodeDigest } from '../helpers/ledger-reference.js';

const TYPE = 'application/vnd.svc.receipt+json';
const ZERO = Buffer.alloc(32);
const HEADER = '{"schema":"svc.khipu-file/v1","created_at":"2025-01-01T00:00:00.000Z"}\n';
const DEAD_PID = 2 ** 22 + 12345; // above any pid_max: kill(pid, 0) says ESRCH
const hex = (b: Buffer): string => b.toString('hex');
const sha = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();
const paeOf = (payload: Buffer): Buffer => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(TYPE)} ${TYPE} ${payload.length} `), payload]);

/** d_i = SHA-256("svc.khipu.node.v1\n" ‖ u64be(i) ‖ prev ‖ pae_sha256), as README tells an auditor. */
const digestOf = referenceNodeDigest;

function input(k: number, simulated?: boolean): AppendInput {
  const payload = Buffer.from(JSON.stringify({ verdict: k % 3 ? 'ALLOW' : 'DENY', track: `t${k}` }));
  return {
    kind: k % 2 ? 'note' : 'counter_uas_decision',
    tsUtc: new Date(Date.UTC(2025, 0, 1, 0, 0, k % 60, k % 1000)).toISOString(),
    payload,
    paeSha256: sha(paeOf(payload)),
    sig: Buffer.from([0x30, k & 0xff, (k >> 8) & 0xff, 0x02]),
    keyid: k % 2 ? 'key-b' : 'key-a',
    ...(simulated === undefined ? {} : { simulated }),
  };
}
const inputs = (from: number, n: number): AppendInput[] => Array.from({ length: n }, (_, k) => input(from + k, (from + k) % 4 === 1 ? true : undefined));

/** The nodes `ins` become after `size` nodes ending in `head`, computed here. */
function chain(ins: AppendInput[], size = 0, head: Buffer = ZERO): LedgerNode[] {
  let prev = size === 0 ? ZERO : head;
  return ins.map((inp, k) => {
    const index = size + k;
    const nodeDigest = digestOf(index, prev, inp.paeSha256);
    const n: LedgerNode = { index, kind: inp.kind, tsUtc: inp.tsUtc, payload: inp.payload, paeSha256: inp.paeSha256, sig: inp.sig, keyid: inp.keyid, prev, nodeDigest, simulated: inp.simulated === true };
    prev = nodeDigest;
    return n;
  });
}

/** One line of the file, written out field by field in the documented order. */
const lineOf = (n: LedgerNode): string =>
  `{"i":${n.index},"kind":${JSON.stringify(n.kind)},"ts_utc":${JSON.stringify(n.tsUtc)},"simulated":${n.simulated},"keyid":${JSON.stringify(n.keyid)},` +
  `"payload_type":"${TYPE}","payload":"${n.payload.toString('base64')}","sig":"${n.sig.toString('base64')}",` +
  `"pae_sha256":"${hex(n.paeSha256)}","prev":"${hex(n.prev)}","digest":"${hex(n.nodeDigest)}"}\n`;
const FIELDS = ['i', 'kind', 'ts_utc', 'simulated', 'keyid', 'payload_type', 'payload', 'sig', 'pae_sha256', 'prev', 'digest'];

// the reason is shown by /health and readiness, so it names the file only relative to the data directory
const READY_REASON = (_dir?: string): string => `appending to ${LEDGER_FILE} in the data directory with O_DSYNC writes (durable before every acknowledgement)`;
const status = (state: AdapterStatus['state'], reason: string, attempts = 0, retry = 0, lastError: string | null = null): AdapterStatus => ({
  configured: true,
  state,
  reason,
  recovery: { attempts, retry_after_s: retry, last_error: lastError },
});

/** The members the failure path and the commit guard are driven through. */
interface Internals {
  fh: FileHandle | null;
  durableBytes: number;
  state: AdapterStatus['state'];
  retryAt: number;
  reopen(): Promise<void>;
  openForAppend(): Promise<FileHandle>;
  fail(err: Error): void;
}
const inside = (s: FileStore): Internals => s as unknown as Internals;

/** Calls to the private reopen, so a test can await the one a timer started. */
function spyReopen(store: FileStore): Promise<void>[] {
  const calls: Promise<void>[] = [];
  const i = inside(store);
  const original = i.reopen;
  i.reopen = () => {
    const p = original.call(i);
    calls.push(p);
    return p;
  };
  return calls;
}

interface Timer {
  fn: () => void;
  delay: number;
  unrefed: boolean;
}
const restorers: (() => void)[] = [];
/**
 * Date.now frozen at `now`, and the store's setTimeout calls recorded instead of scheduled (any
 * other caller's go through), until restored.
 */
function freezeClock(now: number): { timers: Timer[]; restore(): void } {
  const realNow = Date.now;
  const realSetTimeout = globalThis.setTimeout;
  const timers: Timer[] = [];
  Date.now = () => now;
  globalThis.setTimeout = ((fn: () => void, delay: number, ...rest: unknown[]) => {
    if (!/store[\\/]file-store\.[jt]s/.test(new Error().stack ?? '')) return Reflect.apply(realSetTimeout, globalThis, [fn, delay, ...rest]) as unknown;
    const t: Timer = { fn, delay, unrefed: false };
    timers.push(t);
    return {
      unref() {
        t.unrefed = true;
        return this;
      },
    };
  }) as unknown as typeof setTimeout;
  const restore = (): void => {
    Date.now = realNow;
    globalThis.setTimeout = realSetTimeout;
  };
  restorers.push(restore);
  return { timers, restore };
}

/** A descriptor whose write puts the first `partial` bytes on disk and then fails. */
function failingHandle(real: FileHandle, partial: number, err: Error): { fh: FileHandle; calls: { writes: number; closes: number } } {
  const calls = { writes: 0, closes: 0 };
  const fh = {
    async write(buf: Buffer, off: number, len: number) {
      calls.writes++;
      await real.write(buf, off, Math.min(len, partial));
      throw err;
    },
    close() {
      calls.closes++;
      return real.close();
    },
  };
  return { fh: fh as unknown as FileHandle, calls };
}

/** The open flags of a descriptor as the kernel reports them (Linux /proc: the service's platform). */
function fdFlags(fd: number): number {
  const m = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'));
  expect(m, 'a flags line in /proc/self/fdinfo').to.not.equal(null);
  return parseInt(m![1]!, 8);
}
function expectAppendDsync(store: FileStore): void {
  const fh = inside(store).fh;
  expect(fh, 'an append descriptor').to.not.equal(null);
  const flags = fdFlags(fh!.fd);
  expect(flags & 3, "write-only").to.equal(constants.O_WRONLY);
  expect(flags & constants.O_APPEND, 'O_APPEND').to.equal(constants.O_APPEND);
  expect(flags & constants.O_DSYNC, 'O_DSYNC').to.equal(constants.O_DSYNC);
}

/** What this process's descriptors point at (Linux /proc: the service's platform). */
function openPaths(): string[] {
  return readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return []; // closed meanwhile
    }
  });
}

interface Run {
  report: ReplayReport;
  applied: LedgerNode[];
  chunks: LedgerNode[][];
}
type Finding = { index: number; reason: string } | null;
/** replay() with apply and the sweep recorded; `ms` must lie within the time the call took. */
async function replay(store: FileStore, sweep: (nodes: readonly LedgerNode[], call: number) => Finding = () => null): Promise<Run> {
  const applied: LedgerNode[] = [];
  const chunks: LedgerNode[][] = [];
  const t0 = performance.now();
  const report = await store.replay({
    apply: (n) => void applied.push(n),
    verifySignatures: (nodes) => {
      chunks.push([...nodes]);
      return Promise.resolve(sweep(nodes, chunks.length - 1));
    },
  });
  const t1 = performance.now();
  expect(report.ms).to.be.within(0, t1 - t0);
  return { report, applied, chunks };
}

async function refusal(p: Promise<unknown>): Promise<StoreUnavailableError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).to.be.instanceOf(StoreUnavailableError);
  return err as StoreUnavailableError;
}

describe('ledger file store, in process (FileStore)', () => {
  const dirs: string[] = [];
  const stores: FileStore[] = [];
  const fresh = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-filestore-'));
    dirs.push(d);
    return d;
  };
  const open = (dir: string, extra: Partial<FileStoreOptions> = {}): FileStore => {
    const s = FileStore.open({ dataDir: dir, retryAfterS: 3, ...extra });
    stores.push(s);
    return s;
  };
  const fileOf = (dir: string): string => join(dir, LEDGER_FILE);
  /** A ledger file written here: a header, then one line per node, then `tail`. */
  const writeLedger = (dir: string, nodes: LedgerNode[], tail = ''): Buffer => {
    const bytes = Buffer.from(HEADER + nodes.map(lineOf).join('') + tail);
    writeFileSync(fileOf(dir), bytes);
    return bytes;
  };
  afterEach(async () => {
    restorers.splice(0).forEach((r) => r());
    try {
      for (const s of stores.splice(0).reverse()) await s.close();
    } finally {
      dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
    }
  });

  describe('the line format', () => {
    it('nodeLine writes the fields in their fixed order: index, kind, time, simulated, keyid, type, base64 payload and sig, hex digests', () => {
      const nodes = chain([input(0, true), input(1), input(2, false)]);
      for (const n of nodes) {
        const line = nodeLine(n);
        expect(line).to.equal(lineOf(n));
        expect(Object.keys(JSON.parse(line) as object)).to.deep.equal(FIELDS);
      }
      expect(nodes.map((n) => (JSON.parse(nodeLine(n)) as { simulated: boolean }).simulated)).to.deep.equal([true, false, false]);
    });

    it('parseNodeLine reads a line back against the chain so far; genesis links to zero whatever head it is given', () => {
      const nodes = chain(inputs(0, 3));
      // index 0 is checked against the zero digest, not against `head`
      expect(parseNodeLine(lineOf(nodes[0]!).trimEnd(), 0, Buffer.alloc(32, 0xee))).to.deep.equal(nodes[0]);
      expect(parseNodeLine(lineOf(nodes[2]!), 2, nodes[1]!.nodeDigest)).to.deep.equal(nodes[2]);
      expect(parseNodeLine(lineOf(nodes[2]!), 2, ZERO)).to.equal('prev does not match node 1');
      expect(parseNodeLine(lineOf(nodes[1]!), 1, ZERO)).to.equal('prev does not match node 0');
      // a node is simulated only when the line says exactly true
      const asWritten = JSON.parse(lineOf(nodes[1]!)) as Record<string, unknown>;
      expect(asWritten.simulated).to.equal(true);
      expect((parseNodeLine(lineOf(nodes[1]!), 1, nodes[0]!.nodeDigest) as LedgerNode).simulated).to.equal(true);
      for (const simulated of ['yes', 1, undefined]) {
        const n = parseNodeLine(JSON.stringify({ ...asWritten, simulated }), 1, nodes[0]!.nodeDigest) as LedgerNode;
        expect(n.simulated, String(simulated)).to.equal(false);
      }
    });

    it('a node\'s evaluation detail follows the fields the digest covers and reads back byte for byte; it changes no digest', () => {
      const [plainNode] = chain(inputs(0, 1));
      const detail = Buffer.from('{"frame":{"track_id":"t1","lat":36.1,"lon":-115.1},"axes":{"kinematic":0.912345},"pac_bayes":{"n":5000}}');
      const withDetail: LedgerNode = { ...plainNode!, detail };
      const line = nodeLine(withDetail);
      expect(Object.keys(JSON.parse(line) as object)).to.deep.equal([...FIELDS, 'detail']);
      expect(line.startsWith(nodeLine(plainNode!).slice(0, -2))).to.equal(true);
      const back = parseNodeLine(line, 0, ZERO) as LedgerNode;
      expect(back.detail!.equals(detail)).to.equal(true);
      expect(back.nodeDigest.equals(plainNode!.nodeDigest)).to.equal(true);
      expect(parseNodeLine(nodeLine(plainNode!), 0, ZERO)).to.not.have.property('detail');
    });
  });

  describe('the writer lock', () => {
    /** The lock is free again: another taker gets it at once (and gives it back); the file stays, naming nobody. */
    const expectReleased = (d: string): void => {
      expect(readFileSync(join(d, 'LOCK'), 'utf8'), 'LOCK names nobody').to.equal('');
      acquireLock(d)();
    };

    it('open creates the data directory, keys/ and a LOCK naming this process, synced; the lock descriptor is the one kept open; no ledger file before replay', () => {
      const d = join(fresh(), 'not', 'yet');
      // the LOCK's name is on stable storage before start-up goes on
      const realFsync = fs.fsyncSync;
      let fsyncs = 0;
      fs.fsyncSync = ((fd: number) => {
        fsyncs++;
        realFsync(fd);
      }) as typeof fs.fsyncSync;
      syncBuiltinESMExports();
      const t0 = Date.now();
      let store: FileStore;
      try {
        store = open(d);
      } finally {
        fs.fsyncSync = realFsync;
        syncBuiltinESMExports();
      }
      const t1 = Date.now();
      expect(fsyncs).to.equal(1);
      const real = realpathSync(d);
      expect(openPaths().filter((p) => p.startsWith(real)), 'descriptors left open').to.deep.equal([join(real, 'LOCK')]);
      expect(statSync(join(d, 'keys')).isDirectory()).to.equal(true);
      const text = readFileSync(join(d, 'LOCK'), 'utf8');
      expect(text.endsWith('}\n')).to.equal(true);
      const lock = JSON.parse(text) as { pid: number; host: string; started_at: string };
      expect(Object.keys(lock)).to.deep.equal(['pid', 'host', 'started_at']);
      expect([lock.pid, lock.host]).to.deep.equal([process.pid, hostname()]);
      expect(Date.parse(lock.started_at)).to.be.within(t0, t1);
      expect(existsSync(fileOf(d))).to.equal(false);
      expect([store.mode, store.scope]).to.deep.equal(['file', 'LOCAL_FILE']);
      expect(store.status()).to.deep.equal(status('REPLAYING', 'replaying the ledger file'));
    });

    it('a second open on the same directory is refused naming the holder, even in the same process; after close the directory opens again', async () => {
      const d = fresh();
      const first = open(d);
      const lock = readFileSync(join(d, 'LOCK'), 'utf8');
      const held = JSON.parse(lock) as { started_at: string };
      expect(() => FileStore.open({ dataDir: d, retryAfterS: 1 })).to.throw(
        LockHeldError,
        `data directory ${d} is locked by pid ${process.pid} on ${hostname()} since ${held.started_at}; one process writes a file ledger (use postgres mode for replicas)`,
      );
      expect(readFileSync(join(d, 'LOCK'), 'utf8')).to.equal(lock);
      await first.close();
      expectReleased(d);
      const second = open(d); // keys/ exists already: still fine
      expect((JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')) as { pid: number }).pid).to.equal(process.pid);
      await second.close();
    });

    it('whatever a LOCK file says, nobody holds it without the OS lock: a dead pid, a live one (this process, pid 1), another host, empty or unreadable are all taken over', () => {
      const stale = [
        { pid: DEAD_PID, host: hostname(), started_at: 'then' },
        { pid: process.pid, host: hostname(), started_at: 'then' },
        { pid: 1, host: hostname(), started_at: 'then' },
        { pid: process.pid, host: `${hostname()}-elsewhere`, started_at: 'then' },
      ].map((h) => JSON.stringify(h));
      for (const text of [...stale, '', '{"pid":']) {
        const d = fresh();
        writeFileSync(join(d, 'LOCK'), `${text}\n...and a longer tail than the new name`);
        const release = acquireLock(d);
        const lock = JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')) as { pid: number; host: string };
        expect([lock.pid, lock.host], JSON.stringify(text)).to.deep.equal([process.pid, hostname()]);
        release();
        expectReleased(d);
      }
    });

    it('a holder that has not written its name yet still holds the lock, and is said to be unnamed', () => {
      const d = fresh();
      const release = acquireLock(d);
      writeFileSync(join(d, 'LOCK'), '');
      expect(() => acquireLock(d)).to.throw(LockHeldError, `data directory ${d} is locked by another process (it has not written its name yet)`);
      release();
      expectReleased(d);
    });

    it('a name that cannot be written (a full disk) leaves the lock held, with a warning', () => {
      const d = fresh();
      const realWrite = fs.writeSync;
      fs.writeSync = (() => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }) as typeof fs.writeSync;
      syncBuiltinESMExports();
      const warned: [object, string][] = [];
      let release: () => void;
      try {
        release = acquireLock(d, { warn: (o, m) => void warned.push([o, m]), info: () => {} });
      } finally {
        fs.writeSync = realWrite;
        syncBuiltinESMExports();
      }
      expect(warned).to.deep.equal([[{ err: 'ENOSPC: no space left on device, write' }, 'ledger LOCK: holder not written (the lock is held all the same)']]);
      expect(() => acquireLock(d)).to.throw(LockHeldError, 'it has not written its name yet');
      release();
      expectReleased(d);
    });

    it('errors other than a held lock propagate as they are', () => {
      const missing = join(fresh(), 'absent');
      const err = (() => {
        try {
          acquireLock(missing);
        } catch (e) {
          return e as NodeJS.ErrnoException;
        }
        return null;
      })();
      expect([err?.code, err?.syscall]).to.deep.equal(['ENOENT', 'open']);
    });

    it('release empties the LOCK, closes its descriptor and is idempotent; a LOCK removed meanwhile is not an error', async () => {
      const d = fresh();
      const release = acquireLock(d);
      release();
      release();
      expectReleased(d);
      expect(openPaths().filter((p) => p.startsWith(realpathSync(d)))).to.deep.equal([]);
      const store = open(d);
      rmSync(join(d, 'LOCK'));
      await store.close();
      expect(store.status()).to.deep.equal(status('REPLAYING', 'closed'));
    });
  });

  describe('create and commit', () => {
    it('replay of a new directory writes the header, opens an O_DSYNC append descriptor and reports READY', async () => {
      const d = fresh();
      const store = open(d);
      const t0 = Date.now();
      const { report, applied, chunks } = await replay(store);
      const t1 = Date.now();
      expect([report.nodes, report.trimmed, report.corruptAt, applied, chunks]).to.deep.equal([0, null, null, [], []]);
      const text = readFileSync(fileOf(d), 'utf8');
      expect(text.endsWith('}\n')).to.equal(true);
      expect(text.indexOf('\n')).to.equal(text.length - 1);
      const header = JSON.parse(text) as Record<string, string>;
      expect(Object.keys(header)).to.deep.equal(['schema', 'created_at', 'node_digest']);
      expect(header.schema).to.equal(FILE_SCHEMA).and.to.equal('svc.khipu-file/v1');
      expect(Date.parse(header.created_at!)).to.be.within(t0, t1);
      expect(header.node_digest).to.equal('SHA-256("svc.khipu.node.v1\\n" || uint64_be(i) || prev || pae_sha256)');
      expect(inside(store).durableBytes).to.equal(Buffer.byteLength(text));
      expect(store.status()).to.deep.equal(status('READY', READY_REASON(d)));
      expectAppendDsync(store);
      expect(await store.readFrom()).to.deep.equal([]);
      store.onRemoteAppend();
    });

    it('commit is refused before replay, and after close (the store says why and when to retry)', async () => {
      const d = fresh();
      const store = open(d, { retryAfterS: 4 });
      const early = await refusal(store.commit(inputs(0, 1), { size: 0, head: ZERO }));
      expect([early.message, early.retryAfterS]).to.deep.equal(['replaying the ledger file', 4]);
      expect(existsSync(fileOf(d))).to.equal(false);
      await replay(store);
      await store.commit(inputs(0, 1), { size: 0, head: ZERO });
      const fh = inside(store).fh!;
      await store.close();
      expect(store.status()).to.deep.equal(status('UNAVAILABLE', 'closed'));
      expect(inside(store).fh).to.equal(null);
      expect(fh.fd).to.equal(-1); // the append descriptor is closed
      expect(readFileSync(join(d, 'LOCK'), 'utf8')).to.equal('');
      acquireLock(d)();
      const late = await refusal(store.commit(inputs(1, 1), { size: 1, head: chain(inputs(0, 1))[0]!.nodeDigest }));
      expect([late.message, late.retryAfterS]).to.deep.equal(['closed', 4]);
      await store.close(); // twice is harmless
      expect(readFileSync(fileOf(d), 'utf8').split('\n')).to.have.length(3);
    });

    it('batches are sequenced after the tip and appended as exact lines, one write per batch; the durable length follows the file', async () => {
      const d = fresh();
      const store = open(d);
      await replay(store);
      const header = readFileSync(fileOf(d));
      // count writes on the real descriptor
      const real = inside(store).fh!;
      let writes = 0;
      const counting = {
        write: (buf: Buffer, off: number, len: number) => {
          writes++;
          return real.write(buf, off, len);
        },
        close: () => real.close(),
      };
      inside(store).fh = counting as unknown as FileHandle;
      const all = inputs(0, 6);
      const expected = chain(all);
      const batches: [number, number][] = [
        [0, 3],
        [3, 5],
        [5, 6],
      ];
      let size = header.length;
      for (const [from, to] of batches) {
        const tip = { size: from, head: from ? expected[from - 1]!.nodeDigest : Buffer.alloc(32, 0xab) };
        const got = await store.commit(all.slice(from, to), tip);
        expect(got).to.deep.equal(expected.slice(from, to));
        const added = Buffer.byteLength(expected.slice(from, to).map(lineOf).join(''));
        size += added;
        expect(statSync(fileOf(d)).size).to.equal(size);
        expect(inside(store).durableBytes).to.equal(size);
      }
      expect(writes).to.equal(3);
      expect(readFileSync(fileOf(d)).equals(Buffer.concat([header, Buffer.from(expected.map(lineOf).join(''))]))).to.equal(true);
      // an empty batch writes nothing and answers nothing
      expect(await store.commit([], { size: 6, head: expected[5]!.nodeDigest })).to.deep.equal([]);
      expect([writes, inside(store).durableBytes]).to.deep.equal([3, size]);
    });

    it('a short write is continued from where it stopped until the whole batch is on disk', async () => {
      const d = fresh();
      const store = open(d);
      await replay(store);
      const real = inside(store).fh!;
      const offsets: [number, number][] = [];
      inside(store).fh = {
        write: (buf: Buffer, off: number, len: number) => {
          offsets.push([off, len]);
          return real.write(buf, off, Math.min(len, 100));
        },
        close: () => real.close(),
      } as unknown as FileHandle;
      const nodes = chain(inputs(0, 2));
      const batch = Buffer.from(nodes.map(lineOf).join(''));
      expect(await store.commit(inputs(0, 2), { size: 0, head: ZERO })).to.deep.equal(nodes);
      const calls = Math.ceil(batch.length / 100);
      expect(offsets).to.deep.equal(Array.from({ length: calls }, (_, k) => [k * 100, batch.length - k * 100]));
      expect(readFileSync(fileOf(d), 'utf8').split('\n').slice(1).join('\n')).to.equal(batch.toString());
    });

    it('the commit guard: refused when not READY even with a descriptor, and when READY without one (retry-after from the options)', async () => {
      const d = fresh();
      const store = open(d, { retryAfterS: 5 });
      await replay(store);
      const i = inside(store);
      i.retryAt = Date.now() + 600_000; // a past recovery's schedule must not leak into the answer
      i.state = 'CORRUPT';
      const corrupt = await refusal(store.commit(inputs(0, 1), { size: 0, head: ZERO }));
      expect(corrupt.retryAfterS).to.equal(5);
      i.state = 'READY';
      const fh = i.fh;
      i.fh = null;
      const noHandle = await refusal(store.commit(inputs(0, 1), { size: 0, head: ZERO }));
      expect([noHandle.message, noHandle.retryAfterS]).to.deep.equal([READY_REASON(d), 5]);
      i.fh = fh;
      expect(await store.commit(inputs(0, 1), { size: 0, head: ZERO })).to.deep.equal(chain(inputs(0, 1)));
    });
  });

  describe('replay', () => {
    it('a file written by commits replays every node in index order with every field, swept once, and appends continue after it', async () => {
      const d = fresh();
      let store = open(d);
      await replay(store);
      const all = inputs(0, 7);
      const expected = chain(all);
      await store.commit(all.slice(0, 4), { size: 0, head: ZERO });
      await store.commit(all.slice(4), { size: 4, head: expected[3]!.nodeDigest });
      await store.close();
      const bytes = readFileSync(fileOf(d));

      store = open(d);
      const { report, applied, chunks } = await replay(store);
      expect([report.nodes, report.trimmed, report.corruptAt]).to.deep.equal([7, null, null]);
      expect(applied).to.deep.equal(expected);
      expect(chunks).to.deep.equal([expected]);
      expect(readFileSync(fileOf(d)).equals(bytes)).to.equal(true);
      expect(inside(store).durableBytes).to.equal(bytes.length);
      expect(store.status()).to.deep.equal(status('READY', READY_REASON(d)));
      expectAppendDsync(store);
      const more = chain(inputs(0, 9)).slice(7);
      expect(await store.commit(inputs(7, 2), { size: 7, head: expected[6]!.nodeDigest })).to.deep.equal(more);
      expect(readFileSync(fileOf(d)).equals(Buffer.concat([bytes, Buffer.from(more.map(lineOf).join(''))]))).to.equal(true);
    });

    it('a header-only file replays 0 nodes, sweeps nothing, is kept as it is, and takes node 0 next', async () => {
      const d = fresh();
      writeLedger(d, []);
      const store = open(d);
      const { report, applied, chunks } = await replay(store);
      expect([report.nodes, report.trimmed, report.corruptAt, applied, chunks]).to.deep.equal([0, null, null, [], []]);
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(HEADER);
      expect(inside(store).durableBytes).to.equal(HEADER.length);
      expect(store.status().state).to.equal('READY');
      const n = chain(inputs(0, 1));
      await store.commit(inputs(0, 1), { size: 0, head: ZERO });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(HEADER + lineOf(n[0]!));
    });

    it('an empty file gets a header and is READY, with nothing trimmed', async () => {
      const d = fresh();
      writeFileSync(fileOf(d), '');
      const store = open(d);
      const { report, chunks } = await replay(store);
      expect([report.nodes, report.trimmed, report.corruptAt, chunks]).to.deep.equal([0, null, null, []]);
      expect((JSON.parse(readFileSync(fileOf(d), 'utf8')) as { schema: string }).schema).to.equal(FILE_SCHEMA);
      expect(store.status()).to.deep.equal(status('READY', READY_REASON(d)));
      expectAppendDsync(store);
    });

    it('a torn header (no newline at all) is trimmed and the file started again', async () => {
      const d = fresh();
      writeFileSync(fileOf(d), '{"schema":"svc.khi');
      const store = open(d);
      const { report } = await replay(store);
      expect(report).to.deep.include({ nodes: 0, corruptAt: null, trimmed: { bytes: 18, reason: 'torn last line (18 bytes without a newline) trimmed: it was never acknowledged' } });
      const text = readFileSync(fileOf(d), 'utf8');
      expect((JSON.parse(text) as { schema: string }).schema).to.equal(FILE_SCHEMA);
      expect(inside(store).durableBytes).to.equal(Buffer.byteLength(text));
      expect(store.status().state).to.equal('READY');
      const n = chain(inputs(0, 1));
      await store.commit(inputs(0, 1), { size: 0, head: ZERO });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(text + lineOf(n[0]!));
    });

    it('a torn last line is cut to the durable length, reported with its size, and the chain goes on after it', async () => {
      const d = fresh();
      const nodes = chain(inputs(0, 3));
      const good = writeLedger(d, nodes);
      const torn = '{"i":3,"kind":"counter_uas_dec';
      writeFileSync(fileOf(d), Buffer.concat([good, Buffer.from(torn)]));
      const store = open(d);
      const { report, applied, chunks } = await replay(store);
      expect(report.trimmed).to.deep.equal({ bytes: torn.length, reason: `torn last line (${torn.length} bytes without a newline) trimmed: it was never acknowledged` });
      expect([report.nodes, report.corruptAt]).to.deep.equal([3, null]);
      expect(applied).to.deep.equal(nodes);
      expect(chunks).to.deep.equal([nodes]);
      expect(readFileSync(fileOf(d)).equals(good)).to.equal(true);
      expect(inside(store).durableBytes).to.equal(good.length);
      const next = chain(inputs(0, 4))[3]!;
      await store.commit(inputs(3, 1), { size: 3, head: nodes[2]!.nodeDigest });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(good.toString() + lineOf(next));
    });

    it('a complete node line that lost only its newline is a node: kept, its newline added, logged, and the next node takes the next index', async () => {
      const d = fresh();
      const nodes = chain(inputs(0, 3));
      const good = writeLedger(d, nodes.slice(0, 2));
      const last = lineOf(nodes[2]!).trimEnd();
      writeFileSync(fileOf(d), good.toString() + last);
      const warned: [object, string][] = [];
      const store = open(d, { log: { warn: (o, m) => void warned.push([o, m]), info: () => {} } });
      const { report, applied, chunks } = await replay(store);
      expect([report.nodes, report.trimmed, report.corruptAt]).to.deep.equal([3, null, null]);
      expect(applied).to.deep.equal(nodes);
      expect(chunks).to.deep.equal([nodes]); // its signature is checked like any other
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(good.toString() + last + '\n');
      expect(inside(store).durableBytes).to.equal(good.length + Buffer.byteLength(last) + 1);
      expect(warned).to.deep.equal([[{ index: 2, file: fileOf(d) }, 'ledger file: the last node had lost its newline; it verifies and is kept']]);
      expect(store.status()).to.deep.equal(status('READY', READY_REASON(d)));
      const next = chain(inputs(0, 4))[3]!;
      await store.commit(inputs(3, 1), { size: 3, head: nodes[2]!.nodeDigest });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(good.toString() + last + '\n' + lineOf(next));
    });

    it('a header that lost only its newline is kept too, and node 0 starts the next line', async () => {
      const d = fresh();
      writeFileSync(fileOf(d), HEADER.trimEnd());
      const store = open(d);
      const { report } = await replay(store);
      expect([report.nodes, report.trimmed, report.corruptAt]).to.deep.equal([0, null, null]);
      await store.commit(inputs(0, 1), { size: 0, head: ZERO });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(HEADER + lineOf(chain(inputs(0, 1))[0]!));
    });

    it('a whole last line without its newline that does not verify is damage, not a torn write: reported at its index, the file untouched', async () => {
      const d = fresh();
      const nodes = chain(inputs(0, 3));
      const good = writeLedger(d, nodes.slice(0, 2));
      for (const [last, reason, sweep] of [
        [lineOf(nodes[2]!).trimEnd().replace(/"i":2/, '"i":7'), 'node 2 (line 4): index 7 where 2 was expected', false],
        [lineOf(nodes[2]!).trimEnd(), 'signature does not verify', true],
      ] as const) {
        writeFileSync(fileOf(d), good.toString() + last);
        const store = open(d);
        const { report, applied } = await replay(store, (batch) => (sweep ? { index: batch[batch.length - 1]!.index, reason } : null));
        expect(report.corruptAt).to.deep.equal({ index: 2, reason });
        expect([report.nodes, report.trimmed, applied]).to.deep.equal([2, null, nodes.slice(0, 2)]);
        expect(store.status().state).to.equal('CORRUPT');
        expect(readFileSync(fileOf(d), 'utf8')).to.equal(good.toString() + last);
        await store.close();
      }
    });

    it('a ledger path that cannot be read (a directory) fails the replay with that error', async () => {
      const d = fresh();
      mkdirSync(fileOf(d));
      const store = open(d);
      const err = (await store.replay({ apply: () => {}, verifySignatures: () => Promise.resolve(null) }).then(
        () => null,
        (e: unknown) => e,
      )) as NodeJS.ErrnoException | null;
      expect([err?.code, err?.syscall]).to.deep.equal(['EISDIR', 'read']);
      expect(store.status().state).to.equal('REPLAYING');
    });

    describe('damage mid-file: reported at its index, the prefix served, nothing rewritten, appends refused', () => {
      const nodes = chain(inputs(0, 5));
      type Line = Record<string, unknown>;
      const line2 = JSON.parse(lineOf(nodes[2]!)) as Line;
      const edit = (f: (l: Line) => void): string => {
        const l = { ...line2 };
        f(l);
        return JSON.stringify(l);
      };
      const flip = (s: string, at: number): string => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
      const wrongPrev = Buffer.alloc(32, 9);
      const cases: [string, string, string][] = [
        ['a flipped payload byte', edit((l) => (l.payload = flip(l.payload as string, 4))), 'pae_sha256 does not recompute from the payload'],
        ['a wrong index', edit((l) => (l.i = 7)), 'index 7 where 2 was expected'],
        ['an index given as a string', edit((l) => (l.i = '2')), 'index 2 where 2 was expected'],
        ['a link to another node (its digest recomputed over it)', edit((l) => ((l.prev = hex(wrongPrev)), (l.digest = hex(digestOf(2, wrongPrev, nodes[2]!.paeSha256))))), 'prev does not match node 1'],
        ['a wrong node digest', edit((l) => (l.digest = hex(Buffer.alloc(32, 1)))), 'node digest does not recompute'],
        ['prev in upper case', edit((l) => (l.prev = (l.prev as string).toUpperCase())), 'prev is not a hex SHA-256'],
        ['pae_sha256 one digit short', edit((l) => (l.pae_sha256 = (l.pae_sha256 as string).slice(1))), 'pae_sha256 is not a hex SHA-256'],
        ['digest as a number', edit((l) => (l.digest = 12345)), 'digest is not a hex SHA-256'],
        ['prev as an array holding its hex', edit((l) => (l.prev = [l.prev])), 'prev is not a hex SHA-256'],
        ['no payload', edit((l) => delete l.payload), 'a field is missing'],
        ['no sig', edit((l) => delete l.sig), 'a field is missing'],
        ['no keyid', edit((l) => delete l.keyid), 'a field is missing'],
        ['a kind that is not a string', edit((l) => (l.kind = 3)), 'a field is missing'],
        ['no ts_utc', edit((l) => delete l.ts_utc), 'a field is missing'],
        ['another payload type', edit((l) => (l.payload_type = 'application/json')), `payload_type is not ${TYPE}`],
        ['a cut line', lineOf(nodes[2]!).slice(0, 40), 'line is not JSON'],
        ['an empty line', '', 'line is not JSON'],
        ['JSON null', 'null', 'line is not a JSON object'],
        ['a JSON number', '42', 'line is not a JSON object'],
        ['a second header', HEADER.trimEnd(), 'index undefined where 2 was expected'],
      ];
      for (const [name, bad, why] of cases) {
        it(name, async () => {
          const d = fresh();
          const text = HEADER + [lineOf(nodes[0]!), lineOf(nodes[1]!), `${bad}\n`, lineOf(nodes[3]!), lineOf(nodes[4]!)].join('');
          writeFileSync(fileOf(d), text);
          const store = open(d);
          const { report, applied, chunks } = await replay(store);
          const reason = `node 2 (line 4): ${why}`;
          expect([report.nodes, report.trimmed, report.corruptAt]).to.deep.equal([2, null, { index: 2, reason }]);
          expect(applied).to.deep.equal(nodes.slice(0, 2));
          expect(chunks).to.deep.equal([nodes.slice(0, 2)]);
          const damaged = `ledger file damaged at node 2: ${reason}; appends are refused, nodes 0..1 are served`;
          expect(store.status()).to.deep.equal(status('CORRUPT', damaged));
          expect(inside(store).fh).to.equal(null);
          const err = await refusal(store.commit(inputs(5, 1), { size: 2, head: nodes[1]!.nodeDigest }));
          expect([err.message, err.retryAfterS]).to.deep.equal([damaged, 3]);
          await store.close();
          expect(store.status()).to.deep.equal(status('CORRUPT', 'closed'));
          expect(readFileSync(fileOf(d), 'utf8')).to.equal(text);
        });
      }

      it('damage in the first node serves nothing', async () => {
        const d = fresh();
        const text = HEADER + lineOf({ ...nodes[0]!, prev: Buffer.alloc(32, 2), nodeDigest: digestOf(0, Buffer.alloc(32, 2), nodes[0]!.paeSha256) }) + lineOf(nodes[1]!);
        writeFileSync(fileOf(d), text);
        const warned: [object, string][] = [];
        const store = open(d, { log: { warn: (o, m) => void warned.push([o, m]), info: () => {} } });
        const { report, applied, chunks } = await replay(store);
        const reason = 'node 0 (line 2): prev does not match node -1';
        expect([report.nodes, report.corruptAt, applied, chunks]).to.deep.equal([0, { index: 0, reason }, [], []]);
        expect(store.status().reason).to.equal(`ledger file damaged at node 0: ${reason}; appends are refused, nodes 0..-1 are served`);
        expect(warned).to.deep.equal([[{ index: 0, reason, file: fileOf(d) }, 'ledger file damaged: appends refused']]);
        expect(readFileSync(fileOf(d), 'utf8')).to.equal(text);
      });

      for (const [name, header] of [
        ['not JSON', 'khipu\n'],
        ['another schema', '{"schema":"svc.khipu-file/v0"}\n'],
        ['JSON null', 'null\n'],
        ['a JSON string', '"svc.khipu-file/v1"\n'],
        ['an empty first line', '\n'],
      ] as const) {
        it(`a header that is ${name}: damaged at 0, nothing applied or swept`, async () => {
          const d = fresh();
          const text = header + nodes.map(lineOf).join('');
          writeFileSync(fileOf(d), text);
          const store = open(d);
          const { report, applied, chunks } = await replay(store);
          expect([report.nodes, report.trimmed, report.corruptAt, applied, chunks]).to.deep.equal([0, null, { index: 0, reason: 'line 1 is not a svc.khipu-file/v1 header' }, [], []]);
          expect(store.status().state).to.equal('CORRUPT');
          await refusal(store.commit(inputs(0, 1), { size: 0, head: ZERO }));
          expect(readFileSync(fileOf(d), 'utf8')).to.equal(text);
        });
      }
    });

    describe('the signature sweep', () => {
      it("its finding becomes corruptAt: the nodes before it are served, appends refused, the file untouched", async () => {
        const d = fresh();
        const nodes = chain(inputs(0, 5));
        const bytes = writeLedger(d, nodes);
        const store = open(d);
        const { report, applied, chunks } = await replay(store, () => ({ index: 3, reason: 'node 3: signature does not verify' }));
        expect([report.nodes, report.trimmed, report.corruptAt]).to.deep.equal([3, null, { index: 3, reason: 'node 3: signature does not verify' }]);
        expect(applied).to.deep.equal(nodes.slice(0, 3));
        expect(chunks).to.deep.equal([nodes]);
        expect(store.status()).to.deep.equal(status('CORRUPT', 'ledger file damaged at node 3: node 3: signature does not verify; appends are refused, nodes 0..2 are served'));
        await refusal(store.commit(inputs(5, 1), { size: 3, head: nodes[2]!.nodeDigest }));
        expect(readFileSync(fileOf(d)).equals(bytes)).to.equal(true);
      });

      it('with damage found while parsing too, the earlier index wins; at the same index the parse finding stays', async () => {
        const d = fresh();
        const nodes = chain(inputs(0, 5));
        writeLedger(d, nodes.slice(0, 3), lineOf({ ...nodes[3]!, nodeDigest: Buffer.alloc(32, 3) }) + lineOf(nodes[4]!));
        const parsed = { index: 3, reason: 'node 3 (line 5): node digest does not recompute' };
        const cases: [Finding, { index: number; reason: string }][] = [
          [null, parsed],
          [{ index: 1, reason: 'sig 1' }, { index: 1, reason: 'sig 1' }],
          [{ index: 3, reason: 'sig 3' }, parsed],
          [{ index: 4, reason: 'sig 4' }, parsed],
        ];
        for (const [finding, want] of cases) {
          const store = open(d);
          const { report, applied, chunks } = await replay(store, () => finding);
          expect(report.corruptAt, JSON.stringify(finding)).to.deep.equal(want);
          expect(applied).to.deep.equal(nodes.slice(0, want.index));
          expect(chunks).to.deep.equal([nodes.slice(0, 3)]);
          expect(store.status().state).to.equal('CORRUPT');
          await store.close();
        }
      });

      it('runs in chunks of 4096 nodes while parsing goes on; the earliest finding over all chunks wins', async () => {
        const d = fresh();
        const n = 2 * 4096 + 1; // two full chunks handed over while parsing, one node left for the end
        const one = input(0); // one payload for all: the chain still differs at every node
        const nodes = chain(Array.from({ length: n }, () => one));
        writeLedger(d, nodes);
        const store = open(d);
        // a finding in the first and the last chunk: the earlier one is reported, not the last one seen
        const findings = [{ index: 10, reason: 'a' }, null, { index: 8192, reason: 'b' }];
        const run = await replay(store, (_nodes, call) => findings[call] ?? null);
        expect(run.chunks.map((c) => c.length)).to.deep.equal([4096, 4096, 1]);
        expect(run.chunks.every((c, j) => c.every((x, k) => x.index === j * 4096 + k))).to.equal(true);
        expect(run.chunks[2]![0]).to.deep.equal(nodes[8192]);
        expect(run.report.corruptAt).to.deep.equal(findings[0]);
        expect([run.report.nodes, run.applied.length]).to.deep.equal([10, 10]);
        expect(run.applied[9]).to.deep.equal(nodes[9]);
      });
    });
  });

  describe('a failed write', () => {
    const T = 1_750_000_000_000;
    const EIO = (): Error => Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });

    /** A READY store holding `n` committed nodes, its file's bytes, and the durable length. */
    async function withNodes(d: string, n: number, extra: Partial<FileStoreOptions>): Promise<{ store: FileStore; nodes: LedgerNode[]; bytes: Buffer }> {
      const store = open(d, extra);
      await replay(store);
      const nodes = chain(inputs(0, n));
      await store.commit(inputs(0, n), { size: 0, head: ZERO });
      const bytes = readFileSync(fileOf(d));
      expect(inside(store).durableBytes).to.equal(bytes.length);
      return { store, nodes, bytes };
    }

    /** One node stored, then a commit whose write fails after `partial` bytes (EIO): the store is UNAVAILABLE, its reopen timer recorded. */
    async function afterFailedWrite(partial: number): Promise<{ d: string; store: FileStore; bytes: Buffer; reopens: Promise<void>[]; clock: ReturnType<typeof freezeClock> }> {
      const d = fresh();
      const { store, bytes } = await withNodes(d, 1, { recoveryBaseMs: 2000 });
      inside(store).fh = failingHandle(inside(store).fh!, partial, EIO()).fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      try {
        await refusal(store.commit(inputs(1, 1), { size: 1, head: chain(inputs(0, 1))[0]!.nodeDigest }));
      } catch (err) {
        clock.restore();
        throw err;
      }
      return { d, store, bytes, reopens, clock };
    }

    it('refuses the batch (UNAVAILABLE, retry-after from the backoff); the reopen cuts its bytes and the chain continues', async () => {
      const d = fresh();
      const { store, nodes, bytes } = await withNodes(d, 3, { retryAfterS: 2, recoveryBaseMs: 10_000, recoveryMaxMs: 60_000 });
      const { fh, calls } = failingHandle(inside(store).fh!, 10, EIO());
      inside(store).fh = fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      try {
        const tip = { size: 3, head: nodes[2]!.nodeDigest };
        const err = await refusal(store.commit(inputs(3, 2), tip));
        const reason = 'ledger file write failed (EIO: i/o error, write); appends are refused until it is reopened';
        expect([err.message, err.retryAfterS]).to.deep.equal([reason, 10]);
        expect(calls).to.deep.equal({ writes: 1, closes: 1 });
        expect(inside(store).fh).to.equal(null);
        expect(statSync(fileOf(d)).size).to.equal(bytes.length + 10); // the failed batch's first bytes are on disk
        expect(inside(store).durableBytes).to.equal(bytes.length);
        expect(store.status()).to.deep.equal(status('UNAVAILABLE', reason, 0, 10, 'EIO: i/o error, write'));
        expect(clock.timers.map((t) => [t.delay, t.unrefed])).to.deep.equal([[10_000, true]]);
        // refused until the reopen, without touching the file or scheduling anything more
        const again = await refusal(store.commit(inputs(3, 2), tip));
        expect(again.retryAfterS).to.equal(10);
        expect([clock.timers.length, calls.writes, reopens.length]).to.deep.equal([1, 1, 0]);

        clock.timers[0]!.fn();
        expect(reopens).to.have.length(1);
        await reopens[0];
        expect(readFileSync(fileOf(d)).equals(bytes)).to.equal(true);
        expect(store.status()).to.deep.equal(status('READY', READY_REASON(d), 1, 0, 'EIO: i/o error, write'));
        expectAppendDsync(store);
        expect(clock.timers).to.have.length(1);
      } finally {
        clock.restore();
      }
      const more = chain(inputs(0, 5)).slice(3);
      expect(await store.commit(inputs(3, 2), { size: 3, head: nodes[2]!.nodeDigest })).to.deep.equal(more);
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(bytes.toString() + more.map(lineOf).join(''));
      await store.close();
      const replayed = await replay(open(d));
      expect(replayed.applied).to.deep.equal(chain(inputs(0, 5)));
    });

    it('is logged when a log is given: the failure, then the reopen', async () => {
      const d = fresh();
      const logged: [string, object, string][] = [];
      const log = { warn: (o: object, m: string) => void logged.push(['warn', o, m]), info: (o: object, m: string) => void logged.push(['info', o, m]) };
      const { store, nodes } = await withNodes(d, 1, { recoveryBaseMs: 100, log });
      inside(store).fh = failingHandle(inside(store).fh!, 0, EIO()).fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      try {
        await refusal(store.commit(inputs(1, 1), { size: 1, head: nodes[0]!.nodeDigest }));
        clock.timers[0]!.fn();
        await reopens[0];
      } finally {
        clock.restore();
      }
      expect(logged).to.deep.equal([
        ['warn', { err: 'EIO: i/o error, write', file: fileOf(d) }, 'ledger file write failed: appends refused'],
        ['info', { attempts: 1 }, 'ledger file reopened: appends resume'],
      ]);
    });

    it('backoff with the default constants: 500 ms doubling per failed reopen, capped at 30 s; the first reopen that works resumes', async () => {
      const d = fresh();
      const { store, nodes, bytes } = await withNodes(d, 2, { retryAfterS: 7 });
      inside(store).fh = failingHandle(inside(store).fh!, 25, EIO()).fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      const away = `${fileOf(d)}.away`;
      try {
        const tip = { size: 2, head: nodes[1]!.nodeDigest };
        const err = await refusal(store.commit(inputs(2, 1), tip));
        expect(err.retryAfterS).to.equal(7); // max(7, 1)
        expect(clock.timers.map((t) => t.delay)).to.deep.equal([500]);
        expect(store.status().recovery).to.deep.equal({ attempts: 0, retry_after_s: 1, last_error: 'EIO: i/o error, write' });
        // reopening fails while the ledger's path is a directory
        renameSync(fileOf(d), away);
        mkdirSync(fileOf(d));
        const delays = [1000, 2000, 4000, 8000, 16000, 30000, 30000];
        for (let a = 1; a <= delays.length; a++) {
          clock.timers.at(-1)!.fn();
          await reopens.at(-1);
          expect(reopens).to.have.length(a);
          expect(clock.timers.map((t) => t.delay)).to.deep.equal([500, ...delays.slice(0, a)]);
          expect(clock.timers.at(-1)!.unrefed).to.equal(true);
          const s = store.status();
          expect([s.state, s.recovery.attempts, s.recovery.retry_after_s]).to.deep.equal(['UNAVAILABLE', a, delays[a - 1]! / 1000]);
          expect(s.recovery.last_error).to.match(/^EISDIR/);
          expect((await refusal(store.commit(inputs(2, 1), tip))).retryAfterS).to.equal(Math.max(7, delays[a - 1]! / 1000));
        }
        rmdirSync(fileOf(d));
        renameSync(away, fileOf(d));
        clock.timers.at(-1)!.fn();
        await reopens.at(-1);
        expect(reopens).to.have.length(8);
        expect(store.status()).to.deep.include({ state: 'READY' });
        expect(store.status().recovery.attempts).to.equal(8);
        expect(readFileSync(fileOf(d)).equals(bytes)).to.equal(true);
      } finally {
        clock.restore();
      }
      await store.commit(inputs(2, 1), { size: 2, head: nodes[1]!.nodeDigest });
      expect(readFileSync(fileOf(d), 'utf8')).to.equal(bytes.toString() + lineOf(chain(inputs(0, 3))[2]!));
    });

    it('backoff with configured constants doubles from recoveryBaseMs up to recoveryMaxMs; retry-after never below the configured one', async () => {
      const d = fresh();
      const { store, nodes } = await withNodes(d, 1, { retryAfterS: 30, recoveryBaseMs: 1000, recoveryMaxMs: 5000 });
      inside(store).fh = failingHandle(inside(store).fh!, 3, EIO()).fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      try {
        const err = await refusal(store.commit(inputs(1, 1), { size: 1, head: nodes[0]!.nodeDigest }));
        expect(err.retryAfterS).to.equal(30);
        rmSync(fileOf(d));
        mkdirSync(fileOf(d));
        for (let a = 1; a <= 3; a++) {
          clock.timers.at(-1)!.fn();
          await reopens.at(-1);
        }
        expect(clock.timers.map((t) => t.delay)).to.deep.equal([1000, 2000, 4000, 5000]);
        expect(store.status().recovery).to.deep.include({ attempts: 3, retry_after_s: 5 });
      } finally {
        clock.restore();
      }
    });

    it('closed while waiting: the timer then reopens nothing', async () => {
      const { d, store, bytes, reopens, clock } = await afterFailedWrite(7);
      try {
        await store.close();
        expect(store.status()).to.deep.equal(status('UNAVAILABLE', 'closed', 0, 2, 'EIO: i/o error, write'));
        expect(readFileSync(join(d, 'LOCK'), 'utf8')).to.equal('');
      acquireLock(d)();
        clock.timers[0]!.fn();
        await reopens[0];
        expect(store.status()).to.deep.equal(status('UNAVAILABLE', 'closed', 0, 2, 'EIO: i/o error, write'));
        expect(inside(store).fh).to.equal(null);
        expect(clock.timers).to.have.length(1);
        expect(statSync(fileOf(d)).size).to.equal(bytes.length + 7); // left for the next start to trim
      } finally {
        clock.restore();
      }
    });

    it('closed during a reopen: the reopen cuts nothing and keeps no descriptor once close() has run', async () => {
      const { d, store, bytes, reopens, clock } = await afterFailedWrite(7);
      try {
        clock.timers[0]!.fn(); // the reopen starts and awaits its open() ...
        await store.close(); // ... while the store is closed and the lock released
        await reopens[0];
        expect(store.status().state).to.equal('UNAVAILABLE');
        expect(store.status().reason).to.equal('closed');
        expect(inside(store).fh).to.equal(null);
        expect(statSync(fileOf(d)).size).to.equal(bytes.length + 7); // another writer may own the file now
        // the descriptor the reopen had opened is closed too
        expect(openPaths().filter((p) => p === fileOf(d))).to.deep.equal([]);
        await refusal(store.commit(inputs(1, 1), { size: 1, head: chain(inputs(0, 1))[0]!.nodeDigest }));
      } finally {
        clock.restore();
      }
    });

    it('closed while the reopen opens its append descriptor: that descriptor is closed, the store stays closed', async () => {
      const { d, store, reopens, clock } = await afterFailedWrite(3);
      const i = inside(store);
      const opened: FileHandle[] = [];
      const realOpen = i.openForAppend;
      i.openForAppend = async () => {
        const fh = await realOpen.call(i);
        opened.push(fh);
        await store.close(); // lands between the open and its use
        return fh;
      };
      try {
        clock.timers[0]!.fn();
        await reopens[0];
        expect(store.status().state).to.equal('UNAVAILABLE');
        expect(store.status().reason).to.equal('closed');
        expect(i.fh).to.equal(null);
        expect(opened).to.have.length(1);
        expect(openPaths().filter((p) => p === fileOf(d))).to.deep.equal([]);
      } finally {
        clock.restore();
      }
    });

    it('a write that fails after close() schedules no recovery and leaves the store closed', async () => {
      const d = fresh();
      const { store } = await withNodes(d, 1, {});
      const clock = freezeClock(T);
      try {
        await store.close();
        inside(store).fail(EIO());
        expect(store.status().state).to.equal('UNAVAILABLE');
        expect(store.status().reason).to.equal('closed');
        expect(store.status().recovery.last_error).to.equal(null);
        expect(clock.timers).to.have.length(0);
      } finally {
        clock.restore();
      }
    });

    it('a timer firing after the store is READY again does nothing', async () => {
      const d = fresh();
      const { store, nodes, bytes } = await withNodes(d, 1, { retryAfterS: 1, recoveryBaseMs: 4000 });
      inside(store).fh = failingHandle(inside(store).fh!, 7, EIO()).fh;
      const reopens = spyReopen(store);
      const clock = freezeClock(T);
      try {
        await refusal(store.commit(inputs(1, 1), { size: 1, head: nodes[0]!.nodeDigest }));
        await inside(store).reopen(); // recovered before the timer
        const fh = inside(store).fh;
        expect(store.status()).to.deep.include({ state: 'READY' });
        expect(readFileSync(fileOf(d)).equals(bytes)).to.equal(true);
        clock.timers[0]!.fn();
        await reopens.at(-1);
        expect(reopens).to.have.length(2);
        expect(store.status()).to.deep.equal(status('READY', READY_REASON(d), 1, 0, 'EIO: i/o error, write'));
        expect(inside(store).fh).to.equal(fh);
        expect(clock.timers).to.have.length(1);
        // READY again with that schedule still ahead: a refusal says the configured retry-after
        inside(store).fh = null;
        expect((await refusal(store.commit(inputs(1, 1), { size: 1, head: nodes[0]!.nodeDigest }))).retryAfterS).to.equal(1);
        inside(store).fh = fh;
      } finally {
        clock.restore();
      }
    });
  });

  describe('the keys directory', () => {
    it('recordKey writes keys/<keyid>.pem once (idempotent, first wins; a damaged file is replaced); loadKeys lists the .pem files in name order', async () => {
      const d = fresh();
      const store = open(d);
      const ids = ['k9', 'k3', 'k7', 'k1', 'k5', 'k8', 'k2', 'k6', 'k4'];
      const pemOf = new Map(ids.map((id) => [id, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString()]));
      const another = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
      writeFileSync(join(d, 'keys', 'k3.pem'), pemOf.get('k3')!.slice(0, 40)); // cut short by a full disk
      for (const id of ids) await store.recordKey(id, pemOf.get(id)!);
      expect(readFileSync(join(d, 'keys', 'k3.pem'), 'utf8')).to.equal(pemOf.get('k3'));
      expect(readFileSync(join(d, 'keys', 'k7.pem'), 'utf8')).to.equal(pemOf.get('k7'));
      await store.recordKey('k7', another);
      expect(readFileSync(join(d, 'keys', 'k7.pem'), 'utf8')).to.equal(pemOf.get('k7'));
      expect(readdirSync(join(d, 'keys')).filter((f) => f.endsWith('.tmp')), 'no temporary file left').to.deep.equal([]);
      writeFileSync(join(d, 'keys', 'notes.txt'), 'not a key');
      writeFileSync(join(d, 'keys', 'k0.pem.bak'), 'old');
      writeFileSync(join(d, 'keys', 'pem'), 'no');
      const want = [...ids].sort().map((id) => pemOf.get(id)!);
      expect(await store.loadKeys()).to.deep.equal(want);
      // libuv happens to list a directory sorted; the order must not depend on that: list keys/ backwards
      const realReaddir = fsp.readdir;
      fsp.readdir = (async (path: string, ...rest: unknown[]) => {
        const names = (await Reflect.apply(realReaddir, fsp, [path, ...rest])) as string[];
        return path.startsWith(d) ? [...names].reverse() : names;
      }) as typeof fsp.readdir;
      syncBuiltinESMExports();
      try {
        expect(await store.loadKeys()).to.deep.equal(want);
      } finally {
        fsp.readdir = realReaddir;
        syncBuiltinESMExports();
      }
    });

    it('recordKey passes on errors other than an existing file', async () => {
      const d = fresh();
      const store = open(d);
      rmSync(join(d, 'keys'), { recursive: true });
      const err = (await store.recordKey('k', 'PEM').then(
        () => null,
        (e: unknown) => e,
      )) as NodeJS.ErrnoException | null;
      expect(err?.code).to.equal('ENOENT');
    });
  });
});
