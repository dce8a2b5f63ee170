/**
 * Checkpoints driven directly, without the service: the derived Ed25519 key (HKDF written out here
 * from RFC 5869), the verifier keys, the start-up anchor and load against hand-built notes, the
 * signing schedule on a controlled clock, persistence through a scripted store, and the file store.
 */
import { expect } from 'chai';
import { createHmac, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointEd25519Key, checkpointOrigin, Checkpoints, FileCheckpointStore, type CheckpointOptions } from '../../src/ledger/checkpoint.js';
import { sha256 } from '../../src/ledger/dsse.js';
import { loadSigningKey, type SigningKey } from '../../src/ledger/keys.js';
import { Ledger, type AppendInput } from '../../src/ledger/ledger.js';
import type { Signer } from '../../src/ledger/signer.js';
import type { CheckpointStore } from '../../src/ledger/store/store.js';
import { until } from '../helpers/until.js';
import { mth, sha } from '../helpers/rfc6962.js';

const ORIGIN = 'example.org/khipu/0123456789abcdef';


/** RFC 5869 HKDF-SHA256 (extract, then expand), for one output of at most 32 bytes. */
function hkdf(ikm: Buffer, salt: Buffer, info: Buffer, length: number): Buffer {
  const prk = createHmac('sha256', salt).update(ikm).digest();
  return createHmac('sha256', prk).update(Buffer.concat([info, Uint8Array.of(1)])).digest().subarray(0, length);
}

const ed25519Private = (seed: Buffer): KeyObject => createPrivateKey({ key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]), format: 'der', type: 'pkcs8' });
const rawPublic = (key: KeyObject): Buffer => createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(12);
const edKeyId = (name: string, pub: Buffer): Buffer => sha(Buffer.from(`${name}\n`), Uint8Array.of(1), pub).subarray(0, 4);

/** The checkpoint key of `key`, derived here: HKDF over the P-256 scalar, info = the keyid bytes. */
function derivedKey(key: SigningKey): KeyObject {
  const d = Buffer.from(key.privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return ed25519Private(hkdf(d, Buffer.from('svc.khipu.checkpoint.ed25519.v1'), Buffer.from(key.keyid, 'hex'), 32));
}

const text = (origin: string, size: number | string, root: string): string => `${origin}\n${size}\n${root}\n`;
const line = (name: string, keyId: Buffer, sig: Buffer): string => `\u2014 ${name} ${Buffer.concat([keyId, sig]).toString('base64')}\n`;
/** A note over `t` signed with Ed25519 by `priv`, under `name` and `keyId` (the real ones unless given). */
function edNote(t: string, priv: KeyObject, name = ORIGIN, keyId = edKeyId(name, rawPublic(priv))): string {
  return `${t}\n${line(name, keyId, sign(null, Buffer.from(t), priv))}`;
}

const input = (k: number): AppendInput => ({ kind: 'k', tsUtc: new Date(Date.UTC(2025, 0, 1, 0, 0, k)).toISOString(), payload: Buffer.from(`payload ${k}`), paeSha256: sha256(Buffer.from(`pae ${k}`)), sig: Buffer.from([k]), keyid: 'key' });

function ledgerOf(n: number): Ledger {
  const ledger = new Ledger(1000);
  for (let k = 0; k < n; k++) ledger.append(input(k));
  return ledger;
}
const grow = (ledger: Ledger, n: number): void => {
  for (let k = 0; k < n; k++) ledger.append(input(ledger.size));
};
const rootB64 = (ledger: Ledger, size: number): string => mth(Array.from({ length: size }, (_, i) => ledger.get(i)!.nodeDigest)).toString('base64');

/** A signer that signs in-process with the ledger key and counts its calls. */
function fakeSigner(key: SigningKey, opts: { fail?: boolean; during?: () => void } = {}): Signer & { calls: number } {
  const s = {
    calls: 0,
    async sign(msg: Buffer): Promise<Buffer> {
      s.calls++;
      opts.during?.();
      if (opts.fail) throw new Error('pool down');
      return sign('sha256', msg, key.privateKey);
    },
  };
  return s as unknown as Signer & { calls: number };
}

/** A scripted checkpoint store: what newest() answers, what save() returns, and the calls made. */
function scriptedStore(script: { newest?: (atMost?: number) => string | null; save?: (size: number, note: string) => string } = {}) {
  const calls: string[] = [];
  const notes: string[] = [];
  const store: CheckpointStore = {
    async newest(atMost?: number) {
      calls.push(`newest(${atMost})`);
      return script.newest ? script.newest(atMost) : (notes.at(-1) ?? null);
    },
    async save(size: number, note: string) {
      calls.push(`save(${size})`);
      notes.push(note);
      return script.save ? script.save(size, note) : note;
    },
  };
  return { store, calls, notes };
}

/** performance.now() under the test's control while `fn` runs (restored after). */
async function withClock<T>(fn: (clock: { t: number }) => Promise<T>): Promise<T> {
  const clock = { t: 1_000_000 };
  const perf = performance as { now: () => number };
  perf.now = () => clock.t;
  try {
    return await fn(clock);
  } finally {
    delete (perf as { now?: unknown }).now;
  }
}

/** The delays of the timers `fn` sets (synchronously). */
function timersSetBy(fn: () => void): number[] {
  const delays: number[] = [];
  const real = globalThis.setTimeout;
  globalThis.setTimeout = ((cb: () => void, ms?: number) => {
    delays.push(ms ?? 0);
    return real(cb, ms);
  }) as typeof setTimeout;
  try {
    fn();
  } finally {
    globalThis.setTimeout = real;
  }
  return delays;
}

/** The timers `fn` sets and the ones `stop` clears (both synchronous), as handles. */
function timerHandles(fn: () => void): unknown[] {
  const handles: unknown[] = [];
  const real = globalThis.setTimeout;
  globalThis.setTimeout = ((cb: () => void, ms?: number) => {
    const h = real(cb, ms);
    handles.push(h);
    return h;
  }) as typeof setTimeout;
  try {
    fn();
  } finally {
    globalThis.setTimeout = real;
  }
  return handles;
}
function clearedBy(fn: () => void): unknown[] {
  const cleared: unknown[] = [];
  const real = globalThis.clearTimeout;
  globalThis.clearTimeout = ((h: NodeJS.Timeout) => {
    cleared.push(h);
    real(h);
  }) as typeof clearTimeout;
  try {
    fn();
  } finally {
    globalThis.clearTimeout = real;
  }
  return cleared;
}

interface Parsed {
  text: string;
  size: number;
  root: string;
  sigs: { name: string; keyId: Buffer; sig: Buffer }[];
}
function parse(note: string): Parsed {
  const split = note.indexOf('\n\n');
  const t = note.slice(0, split + 1);
  const [, size, root] = t.split('\n');
  const sigs = note
    .slice(split + 2)
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [, name, b64] = l.split(' ');
      const blob = Buffer.from(b64!, 'base64');
      return { name: name!, keyId: blob.subarray(0, 4), sig: blob.subarray(4) };
    });
  return { text: t, size: Number(size), root: root!, sigs };
}

async function rejection(p: Promise<unknown>): Promise<{ status: number; detail: string; headers: Record<string, string>; cause?: unknown }> {
  try {
    await p;
  } catch (err) {
    return err as { status: number; detail: string; headers: Record<string, string>; cause?: unknown };
  }
  throw new Error('expected a rejection');
}

describe('Checkpoints (unit: keys, anchor, load, schedule, persistence)', function () {
  this.timeout(30_000);
  const key = loadSigningKey(null);
  const edKey = derivedKey(key);
  const edPub = rawPublic(edKey);
  const opts = (o: Partial<CheckpointOptions> = {}): CheckpointOptions => ({ origin: ORIGIN, intervalMs: 1000, store: null, ...o });

  it('checkpointOrigin: the host (with port) of the public URL, else the service name, then /khipu/ and 16 hex of the keyid', () => {
    const keyid = 'ab'.repeat(32);
    expect(checkpointOrigin(keyid, 'https://svc.example.org:8443/base/path')).to.equal('svc.example.org:8443/khipu/abababababababab');
    expect(checkpointOrigin(keyid, null)).to.equal('drone-intel-svc/khipu/abababababababab');
  });

  it('the Ed25519 key is HKDF-SHA256 of the ledger scalar (own salt, keyid as info); vkeys name both keys by their key ids', () => {
    expect(rawPublic(checkpointEd25519Key(key)).equals(edPub)).to.equal(true);
    // another ledger key gives another checkpoint key
    expect(rawPublic(checkpointEd25519Key(loadSigningKey(null))).equals(edPub)).to.equal(false);
    const cp = new Checkpoints(ledgerOf(0), key, fakeSigner(key), opts());
    const spki = key.publicKey.export({ format: 'der', type: 'spki' });
    expect(cp.origin).to.equal(ORIGIN);
    expect(cp.vkeys).to.deep.equal({
      ed25519: `${ORIGIN}+${edKeyId(ORIGIN, edPub).toString('hex')}+${Buffer.concat([Uint8Array.of(1), edPub]).toString('base64')}`,
      ecdsa: `${ORIGIN}+${sha(spki).subarray(0, 4).toString('hex')}+${Buffer.concat([Uint8Array.of(2), spki]).toString('base64')}`,
    });
  });

  it('signs origin, size and the RFC 6962 root: Ed25519 first (derived key), then ECDSA by the ledger key with key id SHA-256(SPKI)[:4]', async () => {
    const ledger = ledgerOf(5);
    const signer = fakeSigner(key);
    const cp = new Checkpoints(ledger, key, signer, opts());
    const note = await cp.current();
    const p = parse(note);
    expect(p.text).to.equal(text(ORIGIN, 5, rootB64(ledger, 5)));
    expect(p.sigs.map((s) => s.name)).to.deep.equal([ORIGIN, ORIGIN]);
    expect(p.sigs[0]!.keyId.equals(edKeyId(ORIGIN, edPub))).to.equal(true);
    expect(verify(null, Buffer.from(p.text), createPublicKey(edKey), p.sigs[0]!.sig)).to.equal(true);
    expect(p.sigs[1]!.keyId.equals(sha(key.publicKey.export({ format: 'der', type: 'spki' })).subarray(0, 4))).to.equal(true);
    expect(verify('sha256', Buffer.from(p.text), key.publicKey, p.sigs[1]!.sig)).to.equal(true);
    expect(cp.newest).to.deep.equal({ size: 5, note });
    expect(signer.calls).to.equal(1);
  });

  describe('anchor: the persisted checkpoint start-up opens at', () => {
    const root = sha(Buffer.from('r')).toString('base64');
    const anchorOf = async (note: string | null): Promise<unknown> => new Checkpoints(ledgerOf(0), key, fakeSigner(key), opts({ store: scriptedStore({ newest: () => note }).store })).anchor();

    it('size and root of a note this origin signed with its Ed25519 key; the bound is passed to the store', async () => {
      const { store, calls } = scriptedStore({ newest: () => edNote(text(ORIGIN, 42, root), edKey) });
      const cp = new Checkpoints(ledgerOf(0), key, fakeSigner(key), opts({ store }));
      const a = (await cp.anchor(50)) as { size: number; root: Buffer };
      expect([a.size, a.root.toString('base64')]).to.deep.equal([42, root]);
      expect(calls).to.deep.equal(['newest(50)']);
      // size 0 is a checkpoint too (the empty tree)
      expect(await anchorOf(edNote(text(ORIGIN, 0, sha().toString('base64')), edKey))).to.deep.equal({ size: 0, root: sha() });
      // the ECDSA line may come first: any line that verifies is enough
      const t = text(ORIGIN, 7, root);
      const both = `${t}\n${line(ORIGIN, Buffer.from('abcd'), Buffer.alloc(64, 1))}${line(ORIGIN, edKeyId(ORIGIN, edPub), sign(null, Buffer.from(t), edKey))}`;
      expect(((await anchorOf(both)) as { size: number }).size).to.equal(7);
    });

    it('null without a store, without a note, or for a note that is not this log\'s, not signed by its key, or not a checkpoint', async () => {
      expect(await new Checkpoints(ledgerOf(0), key, fakeSigner(key), opts()).anchor()).to.equal(null);
      expect(await anchorOf(null)).to.equal(null);
      const other = ed25519Private(Buffer.alloc(32, 9));
      const cases: [string, string][] = [
        ['not a note', text(ORIGIN, 3, root)],
        ['another origin', edNote(text('other.org/log', 3, root), edKey, 'other.org/log')],
        ['another origin, signed as ours', edNote(text('other.org/log', 3, root), edKey)],
        ['signed by another key under our key id', edNote(text(ORIGIN, 3, root), other, ORIGIN, edKeyId(ORIGIN, edPub))],
        ['our key under another name', edNote(text(ORIGIN, 3, root), edKey, 'someone', edKeyId(ORIGIN, edPub))],
        ['our key under another key id', edNote(text(ORIGIN, 3, root), edKey, ORIGIN, Buffer.from('wxyz'))],
        ['size not a number', edNote(text(ORIGIN, 'x', root), edKey)],
        ['negative size', edNote(text(ORIGIN, -1, root), edKey)],
        ['fractional size', edNote(text(ORIGIN, 1.5, root), edKey)],
        ['size past 2^53', edNote(text(ORIGIN, '9007199254740993', root), edKey)],
        ['root not 32 bytes of base64', edNote(text(ORIGIN, 3, 'AAAA'), edKey)],
        ['root with a character outside base64', edNote(text(ORIGIN, 3, `${root.slice(0, 42)}-=`), edKey)],
      ];
      for (const [what, note] of cases) expect(await anchorOf(note), what).to.equal(null);
    });
  });

  describe('load: the persisted checkpoint the ledger must extend', () => {
    it('a note of this log the ledger extends becomes the newest, at most the ledger size is asked for, and the next one is due at once', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(4);
        const note = edNote(text(ORIGIN, 3, rootB64(ledger, 3)), edKey);
        const { store, calls } = scriptedStore({ newest: (atMost) => (atMost === undefined || atMost >= 3 ? note : null) });
        const signer = fakeSigner(key);
        const cp = new Checkpoints(ledger, key, signer, opts({ store, intervalMs: 3_600_000 }));
        clock.t += 500;
        expect(cp.newestAgeMs()).to.equal(500);
        await cp.load();
        expect(calls).to.deep.equal(['newest(4)']);
        expect(cp.newest).to.deep.equal({ size: 3, note });
        expect(cp.newestAgeMs(clock.t + 20)).to.equal(20);
        expect(cp.newestAgeMs(clock.t - 5)).to.equal(0);
        // signed at an unknown time: the grown log is signed now, not an hour later
        const next = parse(await cp.current());
        expect([next.size, signer.calls]).to.deep.equal([4, 1]);
      });
    });

    it('a loaded note of the ledger size is served as it is, with nothing signed', async () => {
      const ledger = ledgerOf(3);
      const note = edNote(text(ORIGIN, 3, rootB64(ledger, 3)), edKey);
      const signer = fakeSigner(key);
      const cp = new Checkpoints(ledger, key, signer, opts({ store: scriptedStore({ newest: () => note }).store }));
      await cp.load();
      expect(await cp.current()).to.equal(note);
      expect(signer.calls).to.equal(0);
      // the empty tree extends the empty tree
      const empty = new Checkpoints(ledgerOf(0), key, signer, opts({ store: scriptedStore({ newest: () => text(ORIGIN, 0, sha().toString('base64')) }).store }));
      await empty.load();
      expect(empty.newest?.size).to.equal(0);
    });

    it('without a store (memory mode) there is nothing to load', async () => {
      const cp = new Checkpoints(ledgerOf(2), key, fakeSigner(key), opts());
      await cp.load();
      expect(cp.newest).to.equal(null);
      expect(parse(await cp.current()).size).to.equal(2);
    });

    it('nothing persisted, or a note of another origin (a rotated key): nothing loaded, signing goes on', async () => {
      for (const note of [null, edNote(text('rotated.org/khipu/1', 2, 'x'), edKey, 'rotated.org/khipu/1')]) {
        const ledger = ledgerOf(2);
        const { store, calls } = scriptedStore({ newest: () => (calls.length === 1 ? note : null) });
        const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store }));
        await cp.load();
        expect(cp.newest).to.equal(null);
        expect(parse(await cp.current()).size).to.equal(2);
      }
    });

    it('refuses to sign when the ledger does not extend the note: shorter, another root, or an unreadable size (503, Retry-After 60)', async () => {
      const ledger = ledgerOf(3);
      const cases: [string, string][] = [
        [text(ORIGIN, 4, rootB64(ledger, 3)), 'No checkpoint: the ledger does not extend the checkpoint signed before (size 4): it was restored from an older state or altered'],
        [text(ORIGIN, 2, rootB64(ledger, 3)), 'No checkpoint: the ledger does not extend the checkpoint signed before (size 2): it was restored from an older state or altered'],
        [text(ORIGIN, 'many', rootB64(ledger, 3)), 'No checkpoint: the checkpoint written before cannot be read'],
        [text(ORIGIN, -2, rootB64(ledger, 3)), 'No checkpoint: the checkpoint written before cannot be read'],
      ];
      for (const [note, detail] of cases) {
        const signer = fakeSigner(key);
        const cp = new Checkpoints(ledger, key, signer, opts({ store: scriptedStore({ newest: () => note }).store }));
        await cp.load();
        const err = await rejection(cp.current());
        expect([err.status, err.detail, err.headers['Retry-After']], note).to.deep.equal([503, detail, '60']);
        expect(cp.newest).to.equal(null);
        // and the schedule signs nothing either
        expect(timersSetBy(() => cp.grew())).to.deep.equal([]);
        expect(signer.calls).to.equal(0);
      }
      // the root of exactly the size the ledger has is accepted
      const exact = new Checkpoints(ledger, key, fakeSigner(key), opts({ store: scriptedStore({ newest: () => text(ORIGIN, 3, rootB64(ledger, 3)) }).store }));
      await exact.load();
      expect(exact.newest?.size).to.equal(3);
    });
  });

  describe('schedule', () => {
    it('re-signs only when the log grew and the interval has passed, measured from the last signing', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(2);
        const signer = fakeSigner(key);
        const cp = new Checkpoints(ledger, key, signer, opts({ intervalMs: 1000 }));
        const first = await cp.current();
        grow(ledger, 1);
        clock.t += 999;
        expect(await cp.current()).to.equal(first);
        clock.t += 1;
        const second = await cp.current();
        expect(parse(second).size).to.equal(3);
        // the interval has passed again, but the log has not grown: the same note
        clock.t += 5000;
        expect(await cp.current()).to.equal(second);
        expect(signer.calls).to.equal(2);
        expect(cp.newestAgeMs()).to.equal(5000);
      });
    });

    it('concurrent requests share one signing; the next growth gets its own', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(2);
        const signer = fakeSigner(key);
        const cp = new Checkpoints(ledger, key, signer, opts({ intervalMs: 10 }));
        const [a, b] = await Promise.all([cp.current(), cp.current()]);
        expect([a === b, signer.calls]).to.deep.equal([true, 1]);
        grow(ledger, 2);
        clock.t += 10;
        expect(parse(await cp.current()).size).to.equal(4);
        expect(signer.calls).to.equal(2);
      });
    });

    it('grew(): the first checkpoint at once; later ones when the rest of the interval has passed; one timer at a time', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(2);
        const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 1000 }));
        try {
          expect(timersSetBy(() => cp.grew())).to.deep.equal([0]);
          expect(timersSetBy(() => cp.grew())).to.deep.equal([]);
          await until('the first checkpoint', () => cp.newest);
          expect(cp.newest!.size).to.equal(2);
          grow(ledger, 1);
          clock.t += 300;
          expect(timersSetBy(() => cp.grew())).to.deep.equal([700]);
          cp.stop();
          // long past the interval the wait is 0, never negative
          const late = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 1000 }));
          await late.current();
          clock.t += 5000;
          expect(timersSetBy(() => late.grew())).to.deep.equal([0]);
          late.stop();
        } finally {
          cp.stop();
        }
      });
    });

    it('a log that grew while a checkpoint was being signed gets the next one by itself', async () => {
      const ledger = ledgerOf(3);
      let once = true;
      const cp = new Checkpoints(
        ledger,
        key,
        fakeSigner(key, {
          during: () => {
            if (once) grow(ledger, 2);
            once = false;
          },
        }),
        opts({ intervalMs: 5 }),
      );
      try {
        cp.grew();
        await until('a checkpoint of 5 nodes', () => cp.newest?.size === 5);
        expect(parse(cp.newest!.note).root).to.equal(rootB64(ledger, 5));
      } finally {
        cp.stop();
      }
    });

    it('a scheduled signing that fails is logged, not thrown', async () => {
      const warnings: [object, string][] = [];
      const cp = new Checkpoints(ledgerOf(1), key, fakeSigner(key, { fail: true }), opts({ log: { warn: (obj, msg) => warnings.push([obj, msg]) } }));
      try {
        cp.grew();
        await until('the warning', () => warnings.length > 0);
        expect(warnings).to.deep.equal([[{ err: 'No checkpoint: it could not be written durably, retry later' }, 'checkpoint not signed; retried when the log grows']]);
      } finally {
        cp.stop();
      }
    });

    it('a scheduled signing that fails without a logger is dropped quietly (no unhandled rejection)', async () => {
      const signer = fakeSigner(key, { fail: true });
      const cp = new Checkpoints(ledgerOf(1), key, signer, opts());
      const unhandled: unknown[] = [];
      const onRejection = (reason: unknown) => void unhandled.push(reason);
      process.on('unhandledRejection', onRejection);
      try {
        cp.grew();
        await until('the signing attempt', () => signer.calls > 0);
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        expect(unhandled).to.deep.equal([]);
      } finally {
        process.off('unhandledRejection', onRejection);
        cp.stop();
      }
    });

    it('stop() clears the timer a growth set', async () => {
      const ledger = ledgerOf(1);
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 3_600_000 }));
      await cp.current();
      grow(ledger, 1);
      const [timer] = timerHandles(() => cp.grew());
      expect(timer).to.not.equal(undefined);
      const cleared = clearedBy(() => cp.stop());
      expect(cleared.length === 1 && cleared[0] === timer).to.equal(true);
      expect(clearedBy(() => cp.stop())).to.deep.equal([]);
    });

    it('stop(): no more timers, and requests are refused as the service stops (a refusal found before is kept)', async () => {
      const cp = new Checkpoints(ledgerOf(1), key, fakeSigner(key), opts());
      cp.stop();
      expect(timersSetBy(() => cp.grew())).to.deep.equal([]);
      expect((await rejection(cp.current())).detail).to.equal('No checkpoint: the service is stopping');
      const ledger = ledgerOf(1);
      const refused = new Checkpoints(ledger, key, fakeSigner(key), opts({ store: scriptedStore({ newest: () => text(ORIGIN, 9, rootB64(ledger, 1)) }).store }));
      await refused.load();
      refused.stop();
      expect((await rejection(refused.current())).detail).to.match(/^No checkpoint: the ledger does not extend the checkpoint signed before \(size 9\)/);
    });

    it('covering() schedules the signing it waits for (nothing else has to call grew())', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(3);
        const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 30 }));
        try {
          await cp.current();
          grow(ledger, 2);
          const five = cp.covering(5, 20_000);
          clock.t += 30;
          expect((await five).size).to.equal(5);
        } finally {
          cp.stop();
        }
      });
    });

    it('coverage(index): covered when the newest checkpoint counts the node, else within the interval', async () => {
      const ledger = ledgerOf(5);
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 2500 }));
      const proof = (i: number) => `/api/svc/v1/receipt/proof?index=${i}`;
      expect(cp.coverage(0)).to.deep.equal({ origin: ORIGIN, newest_size: null, covers: false, covered_within_ms: 2500, proof_url: proof(0) });
      await cp.current();
      expect(cp.coverage(4)).to.deep.equal({ origin: ORIGIN, newest_size: 5, covers: true, covered_within_ms: 0, proof_url: proof(4) });
      expect(cp.coverage(5)).to.deep.equal({ origin: ORIGIN, newest_size: 5, covers: false, covered_within_ms: 2500, proof_url: proof(5) });
    });

    it('covering(size): the newest when it counts size nodes, else the next signed of at least size; 503 with Retry-After past the wait', async () => {
      await withClock(async (clock) => {
        const ledger = ledgerOf(3);
        const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ intervalMs: 60_000 }));
        try {
          const three = await cp.covering(3, 1000);
          expect(three.size).to.equal(3);
          expect(await cp.covering(2, 1000)).to.equal(three);
          const five = cp.covering(5, 30_000);
          const seven = cp.covering(7, 30_000);
          let sevenDone = false;
          void seven.then(() => (sevenDone = true));
          grow(ledger, 2);
          clock.t += 60_000;
          await cp.current();
          const got = await five;
          expect([got.size, parse(got.note).root]).to.deep.equal([5, rootB64(ledger, 5)]);
          expect(sevenDone).to.equal(false);
          grow(ledger, 2);
          clock.t += 60_000;
          await cp.current();
          expect((await seven).size).to.equal(7);
          // nothing signs 9 within the wait; a request that gave up leaves the others waiting
          const patient = cp.covering(9, 10_000);
          const late = await rejection(cp.covering(9, 1));
          expect([late.status, late.detail, late.headers['Retry-After']]).to.deep.equal([503, 'No checkpoint covers 9 nodes yet; retry shortly', '60']);
          grow(ledger, 2);
          clock.t += 60_000;
          await cp.current();
          expect((await patient).size).to.equal(9);
        } finally {
          cp.stop();
        }
      });
      // Retry-After is the interval in whole seconds, rounded up, at least 1
      for (const [intervalMs, after] of [
        [2500, '3'],
        [10, '1'],
      ] as const) {
        const quick = new Checkpoints(ledgerOf(1), key, fakeSigner(key), opts({ intervalMs }));
        await quick.current();
        try {
          expect((await rejection(quick.covering(2, 1))).headers['Retry-After']).to.equal(after);
        } finally {
          quick.stop();
        }
      }
    });
  });

  describe('persistence', () => {
    it('made durable (beforePersist), then saved, then served; memory mode persists nothing', async () => {
      const order: string[] = [];
      const { store, calls, notes } = scriptedStore();
      const ledger = ledgerOf(4);
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store, beforePersist: async () => void order.push(`durable at ${calls.length}`) }));
      const note = await cp.current();
      expect(calls).to.deep.equal(['newest(4)', 'save(4)']);
      expect(order).to.deep.equal(['durable at 1']);
      expect(notes).to.deep.equal([note]);
      const bare = new Checkpoints(ledger, key, fakeSigner(key), opts({ beforePersist: async () => void order.push('memory') }));
      await bare.current();
      expect(order).to.deep.equal(['durable at 1']);
    });

    it('a size another replica signed already is served from the store, not signed again', async () => {
      const ledger = ledgerOf(4);
      const theirs = `${text(ORIGIN, 4, rootB64(ledger, 4))}\n${line(ORIGIN, Buffer.from('repl'), Buffer.alloc(64, 3))}`;
      const { store, calls } = scriptedStore({ newest: () => theirs });
      const signer = fakeSigner(key);
      const cp = new Checkpoints(ledger, key, signer, opts({ store }));
      expect(await cp.current()).to.equal(theirs);
      expect([signer.calls, calls]).to.deep.equal([0, ['newest(4)']]);
      // a stored checkpoint of a smaller size is not this one: a new one is signed and saved
      const older = `${text(ORIGIN, 3, rootB64(ledger, 3))}\n${line(ORIGIN, Buffer.from('repl'), Buffer.alloc(64, 3))}`;
      const s2 = scriptedStore({ newest: () => older, save: (_size, n) => n });
      const cp2 = new Checkpoints(ledger, key, signer, opts({ store: s2.store }));
      expect(parse(await cp2.current()).sigs).to.have.length(2);
      expect(s2.calls).to.deep.equal(['newest(4)', 'save(4)']);
    });

    it('a stored checkpoint of the same size under another origin (the key before a rotation) is another log: a new one is signed', async () => {
      const ledger = ledgerOf(3);
      const before = `${text('example.org/khipu/fedcba9876543210', 3, rootB64(ledger, 3))}\n${line('example.org/khipu/fedcba9876543210', Buffer.from('old!'), Buffer.alloc(64, 6))}`;
      const { store, calls } = scriptedStore({ newest: () => before, save: (_s, n) => n });
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store }));
      await cp.load();
      const p = parse(await cp.current());
      expect([p.text, p.sigs.length, calls]).to.deep.equal([text(ORIGIN, 3, rootB64(ledger, 3)), 2, ['newest(3)', 'newest(3)', 'save(3)']]);
    });

    it('when save() answers with the note another replica stored first, that one is served', async () => {
      const ledger = ledgerOf(2);
      const theirs = `${text(ORIGIN, 2, rootB64(ledger, 2))}\n${line(ORIGIN, Buffer.from('repl'), Buffer.alloc(64, 4))}`;
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store: scriptedStore({ newest: () => null, save: () => theirs }).store }));
      expect(await cp.current()).to.equal(theirs);
      expect(cp.newest).to.deep.equal({ size: 2, note: theirs });
    });

    it('a stored checkpoint of this size with another root is another history: refused now and from then on', async () => {
      const ledger = ledgerOf(2);
      const forged = `${text(ORIGIN, 2, sha(Buffer.from('other')).toString('base64'))}\n${line(ORIGIN, Buffer.from('repl'), Buffer.alloc(64, 5))}`;
      const want = 'No checkpoint: a checkpoint persisted for size 2 names another root: the ledger does not extend it';
      for (const script of [{ newest: () => forged }, { newest: () => null, save: () => forged }]) {
        const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store: scriptedStore(script).store }));
        const err = await rejection(cp.current());
        expect([err.status, err.detail, err.headers['Retry-After']]).to.deep.equal([503, want, '60']);
        expect((await rejection(cp.current())).detail).to.equal(want);
        expect(cp.newest).to.equal(null);
      }
    });

    it('a stored note that is no signed note is not this size\'s checkpoint; a saved one that is none is refused', async () => {
      const ledger = ledgerOf(2);
      const { store, calls } = scriptedStore({ newest: () => 'garbage', save: (_s, n) => n });
      const cp = new Checkpoints(ledger, key, fakeSigner(key), opts({ store }));
      expect(parse(await cp.current()).size).to.equal(2);
      expect(calls).to.deep.equal(['newest(2)', 'save(2)']);
      const refused = new Checkpoints(ledger, key, fakeSigner(key), opts({ store: scriptedStore({ newest: () => null, save: () => 'garbage' }).store }));
      expect((await rejection(refused.current())).detail).to.equal('No checkpoint: a checkpoint persisted for size 2 names another root: the ledger does not extend it');
    });

    it('a signer or store that fails: 503 with Retry-After 5 and the cause, and the next request tries again', async () => {
      const ledger = ledgerOf(2);
      let failSave = true;
      const cp = new Checkpoints(
        ledger,
        key,
        fakeSigner(key),
        opts({
          store: scriptedStore({
            newest: () => null,
            save: (_s, n) => {
              if (failSave) throw new Error('ENOSPC');
              return n;
            },
          }).store,
        }),
      );
      const err = await rejection(cp.current());
      expect([err.status, err.detail, err.headers['Retry-After'], (err.cause as Error).message]).to.deep.equal([503, 'No checkpoint: it could not be written durably, retry later', '5', 'ENOSPC']);
      failSave = false;
      expect(parse(await cp.current()).size).to.equal(2);
      const down = await rejection(new Checkpoints(ledger, key, fakeSigner(key, { fail: true }), opts()).current());
      expect([down.status, (down.cause as Error).message]).to.deep.equal([503, 'pool down']);
    });
  });

  describe('FileCheckpointStore', () => {
    let dir: string;
    beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-cpstore-'))));
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('null before the first; each save replaces the file whole and leaves no temporary file; returns the note saved', async () => {
      const file = join(dir, 'checkpoint');
      const store = new FileCheckpointStore(file);
      expect(await store.newest()).to.equal(null);
      expect(await store.save(1, 'one\n')).to.equal('one\n');
      expect(await store.save(2, 'two\n')).to.equal('two\n');
      expect([readFileSync(file, 'utf8'), await store.newest(), readdirSync(dir)]).to.deep.equal(['two\n', 'two\n', ['checkpoint']]);
      expect(existsSync(`${file}.tmp`)).to.equal(false);
      // the temporary file and the directory are closed after each save
      const open = () => readdirSync('/proc/self/fd').length;
      const before = open();
      await store.save(3, 'three\n');
      expect(open()).to.equal(before);
    });

    it('a checkpoint that cannot be read (not a missing one) is an error, not "none"', async () => {
      mkdirSync(join(dir, 'checkpoint'));
      const err = await rejection(new FileCheckpointStore(join(dir, 'checkpoint')).newest());
      expect((err as unknown as NodeJS.ErrnoException).code).to.equal('EISDIR');
    });
  });
});
