// The signing path in units: DSSE PAE and signature encodings, the batched Signer (with a pool that
// signs in-process) for PAEs and for whole receipts (the lane's signReceipts), key loading and keyids, the keyring, and the start-up signature sweep (with the
// worker's own verify handler run in-process).
import { expect } from 'chai';
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeBase64, isStrictBase64, pae, PAYLOAD_TYPE, sha256, verifySignature } from '../../src/ledger/dsse.js';
import { Keyring, keyidOf } from '../../src/ledger/keyring.js';
import { KeyError, loadSigningKey, resolveSigningKey } from '../../src/ledger/keys.js';
import { signatureVerifier } from '../../src/ledger/replay.js';
import { Signer } from '../../src/ledger/signer.js';
import type { LedgerNode } from '../../src/ledger/ledger.js';
import type { WorkerPool } from '../../src/platform/pool.js';
import hostHandle from '../../workers/host.js';
import signHandle, { signReceipts } from '../../workers/sign-host.js';
import { receiptPayload, type ReceiptBody } from '../../src/ledger/receipt.js';
import type { Task } from '../../src/lib/tasks.js';
import { withTempDir } from '../helpers/shell.js';

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const derKeyid = (k: KeyObject) => createHash('sha256').update(k.export({ type: 'spki', format: 'der' })).digest('hex');

/** A pool stand-in: signs 'sign' tasks with `key`, runs 'verify' through the worker's own handler, records every task. */
function fakePool(key: KeyObject, opts: { fail?: boolean; inLargerBuffer?: boolean } = {}) {
  const tasks: Task[] = [];
  const larger: ArrayBuffer[] = [];
  const pool = {
    run<T>(task: Task): Promise<{ value: T }> {
      tasks.push(task);
      if (opts.fail) return Promise.reject(new Error('pool down'));
      // cloned as a worker's answer is: the packed receipts arrive in a buffer of their own
      if (task.kind === 'receipts') return Promise.resolve({ value: structuredClone(signReceipts(task.items, key)) as T });
      if (task.kind === 'sign') {
        // as a worker's answer arrives: each signature in an ArrayBuffer of its own size, or (to
        // check the copy) at an offset inside a larger one
        const sigs = task.paes.map((p) => new Uint8Array(sign('sha256', p, key)));
        const placed = opts.inLargerBuffer
          ? sigs.map((s) => {
              const big = new Uint8Array(1024);
              larger.push(big.buffer);
              big.set(s, 8);
              return big.subarray(8, 8 + s.length);
            })
          : sigs;
        return Promise.resolve({ value: placed as T });
      }
      const res = hostHandle(task);
      if (!res.ok) return Promise.reject(new Error(res.error.msg));
      return Promise.resolve({ value: res.value as T });
    },
  };
  return { pool: pool as unknown as WorkerPool, tasks, larger };
}

describe('signing path', () => {
  it('PAE: "DSSEv1 <len type> <type> <len body> <body>" with lengths in bytes, not characters', () => {
    expect(pae('t', Buffer.from('')).toString()).to.equal('DSSEv1 1 t 0 ');
    const body = Buffer.from('é€', 'utf8'); // 2 characters, 5 bytes
    expect(pae('ü', body).equals(Buffer.concat([Buffer.from('DSSEv1 2 ü 5 '), body]))).to.equal(true);
    expect(sha256(Buffer.from('abc')).toString('hex')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('strict base64: standard with optional padding, or URL-safe; lengths that cannot be base64 are refused', () => {
    for (const ok of ['', 'QQ==', 'QUI=', 'QUJD', 'QQ', 'QUI', '-_-_', 'a+/=']) expect(isStrictBase64(ok), ok).to.equal(true);
    for (const bad of ['Q', 'QUJDR', 'QQ=', 'Q===', 'QUJD=', 'a b', 'a+_b', 'QQ==QQ==']) expect(isStrictBase64(bad), bad).to.equal(false);
    expect(decodeBase64('+/8=').equals(Buffer.from([0xfb, 0xff]))).to.equal(true);
    expect(decodeBase64('-_8').equals(Buffer.from([0xfb, 0xff]))).to.equal(true);
    expect(decodeBase64('AAEC').equals(Buffer.from([0, 1, 2]))).to.equal(true);
  });

  it('verifySignature: DER first, raw r‖s (64 bytes) second, neither for a wrong key, message or encoding', () => {
    const { privateKey, publicKey } = p256();
    const other = p256().publicKey;
    const msg = pae(PAYLOAD_TYPE, Buffer.from('{"a":1}'));
    const der = sign('sha256', msg, privateKey);
    const raw = sign('sha256', msg, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    expect(raw.length).to.equal(64);
    expect(verifySignature(msg, der, publicKey)).to.deep.equal({ verified: true, encoding: 'der' });
    expect(verifySignature(msg, raw, publicKey)).to.deep.equal({ verified: true, encoding: 'ieee-p1363' });
    expect(verifySignature(msg, der, other)).to.deep.equal({ verified: false, encoding: null });
    expect(verifySignature(msg, raw, other)).to.deep.equal({ verified: false, encoding: null });
    expect(verifySignature(Buffer.from('other'), der, publicKey)).to.deep.equal({ verified: false, encoding: null });
    expect(verifySignature(msg, Buffer.alloc(64, 1), publicKey)).to.deep.equal({ verified: false, encoding: null });
    expect(verifySignature(msg, Buffer.alloc(63, 1), publicKey)).to.deep.equal({ verified: false, encoding: null });
    // a raw signature one byte short is not tried as P1363
    expect(verifySignature(msg, raw.subarray(0, 63), publicKey)).to.deep.equal({ verified: false, encoding: null });
  });

  it('Signer: PAEs of one turn go in ⌈n/batchMax⌉ round trips, each promise gets its own signature, as an exact-size Buffer', async () => {
    const { privateKey, publicKey } = p256();
    const { pool, tasks } = fakePool(privateKey);
    const signer = new Signer(pool, 4);
    const paes = Array.from({ length: 10 }, (_, k) => pae(PAYLOAD_TYPE, Buffer.from(`{"k":${k}}`)));
    const sigs = await Promise.all(paes.map((p) => signer.sign(p)));
    expect(tasks.map((t) => (t.kind === 'sign' ? t.paes.length : -1))).to.deep.equal([4, 4, 2]);
    expect([signer.batches, signer.signatures]).to.deep.equal([3, 10]);
    sigs.forEach((s, k) => {
      expect(verify('sha256', paes[k]!, publicKey, s), `sig ${k}`).to.equal(true);
      expect([s.byteOffset, s.buffer.byteLength]).to.deep.equal([0, s.length]);
    });
    // a later turn is a new batch
    await signer.sign(paes[0]!);
    expect([signer.batches, signer.signatures]).to.deep.equal([4, 11]);
  });

  it('Signer: a signature inside a larger buffer is copied out at its exact size, never kept as a view of the rest', async () => {
    const { privateKey, publicKey } = p256();
    const { pool, larger } = fakePool(privateKey, { inLargerBuffer: true });
    const signer = new Signer(pool, 4);
    const paes = [1, 2, 3].map((k) => pae(PAYLOAD_TYPE, Buffer.from(`{"k":${k}}`)));
    const sigs = await Promise.all(paes.map((p) => signer.sign(p)));
    sigs.forEach((s, k) => {
      expect(Buffer.isBuffer(s)).to.equal(true);
      expect(verify('sha256', paes[k]!, publicKey, s), `sig ${k}`).to.equal(true);
      expect(larger.includes(s.buffer as ArrayBuffer), `sig ${k} is a view of the 1 KiB answer`).to.equal(false);
    });
  });

  it('Signer: a failed round trip rejects every PAE of its batch', async () => {
    const { pool } = fakePool(p256().privateKey, { fail: true });
    const signer = new Signer(pool, 8);
    const results = await Promise.allSettled([1, 2, 3].map((k) => signer.sign(Buffer.from([k]))));
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected', 'rejected']);
    expect((results[0] as PromiseRejectedResult).reason.message).to.equal('pool down');
  });

  it('Signer: each batch is reported once answered or failed, with its lane, size and round trip', async () => {
    const { privateKey } = p256();
    const seen: [string, number, boolean][] = [];
    const seconds: number[] = [];
    const observe = (lane: string, s: number, size: number, answered: boolean): void => {
      seen.push([lane, size, answered]);
      seconds.push(s);
    };
    const signer = new Signer(fakePool(privateKey).pool, 4, { onBatch: observe });
    // a receipt that cannot be serialised fails alone inside an answered batch
    await Promise.allSettled([...[0.8, Number.NaN, 0.9, 0.95, 0.99].map((x) => signer.signReceipt(receiptBody(x), TS)), signer.sign(Buffer.from([1]))]);
    expect(seen).to.deep.equal([['signatures', 1, true], ['receipts', 4, true], ['receipts', 1, true]]);
    const down = new Signer(fakePool(privateKey, { fail: true }).pool, 4, { onBatch: observe });
    await Promise.allSettled([down.sign(Buffer.from([1])), down.sign(Buffer.from([2]))]);
    expect(seen.at(-1)).to.deep.equal(['signatures', 2, false]);
    for (const s of seconds) expect(s).to.be.at.least(0).and.below(1);
  });

  it('Signer: one batch per signing thread is out at a time; what arrives meanwhile goes as one batch (up to batchMax) when one comes back', async () => {
    const { privateKey, publicKey } = p256();
    // a pool whose answers the test releases, one task at a time, in the order sent
    const sent: { items: number; release(): void }[] = [];
    const pool = {
      run<T>(task: Task): Promise<{ value: T }> {
        if (task.kind !== 'receipts') throw new Error(`unexpected ${task.kind}`);
        return new Promise((resolve) => sent.push({ items: task.items.length, release: () => resolve({ value: structuredClone(signReceipts(task.items, privateKey)) as T }) }));
      },
    } as unknown as WorkerPool;
    const turn = () => new Promise((r) => setImmediate(r));
    const sizes = () => sent.map((t) => t.items);

    const one = new Signer(pool, 4, { inFlight: 1 });
    const bodies = Array.from({ length: 8 }, (_, k) => receiptBody(0.5 + k / 100));
    // three groups arrive in three turns: the first goes at once, the others wait for it
    const answers: Promise<{ sig: Buffer }>[] = [];
    for (const group of [bodies.slice(0, 2), bodies.slice(2, 5), bodies.slice(5)]) {
      answers.push(...group.map((b) => one.signReceipt(b, TS)));
      await turn();
      expect(sizes()).to.deep.equal([2]);
    }
    sent[0]!.release();
    await turn();
    expect(sizes()).to.deep.equal([2, 4]); // six waited: batchMax of them go, two stay
    sent[1]!.release();
    await turn();
    expect(sizes()).to.deep.equal([2, 4, 2]);
    sent[2]!.release();
    const got = await Promise.all(answers);
    got.forEach((r, k) => expect(verify('sha256', pae(PAYLOAD_TYPE, receiptPayload(bodies[k]!, TS)), publicKey, r.sig), `receipt ${k}`).to.equal(true));
    expect([one.batches, one.signatures]).to.deep.equal([3, 8]);

    // two signing threads: two batches out, the third group waits
    sent.length = 0;
    const two = new Signer(pool, 4, { inFlight: 2 });
    const later: Promise<unknown>[] = [];
    for (let g = 0; g < 3; g++) {
      later.push(two.signReceipt(bodies[g]!, TS));
      await turn();
    }
    expect(sizes()).to.deep.equal([1, 1]);
    sent[1]!.release();
    await turn();
    expect(sizes()).to.deep.equal([1, 1, 1]);
    sent[0]!.release();
    sent[2]!.release();
    await Promise.all(later);
  });

  it('the signing lane signs only sign and receipt tasks, and only with a key (in-process there is none), and checks signatures; kernel threads sign nothing', () => {
    expect(signHandle({ kind: 'probe' })).to.deep.include({ ok: false, error: { code: 'BAD_TASK', msg: 'the signing lane only signs and checks signatures' } });
    // checking needs no private key: the start-up check of the ledger runs here
    const { privateKey, publicKey } = p256();
    const msg = Buffer.from('checked in the signing lane');
    const der = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
    const checked = signHandle({ kind: 'verify', keys: { k: der }, items: [{ pae: msg, sig: sign('sha256', msg, privateKey), keyid: 'k' }, { pae: msg, sig: sign('sha256', Buffer.from('other'), privateKey), keyid: 'k' }, { pae: msg, sig: sign('sha256', msg, privateKey), keyid: 'unknown' }] });
    expect(checked).to.deep.include({ ok: true, value: [true, false, false] });
    expect(signHandle({ kind: 'sign', paes: [] })).to.deep.include({ ok: false, error: { code: 'NO_SIGNING_KEY', msg: 'pool started without a signing key' } });
    expect(signHandle({ kind: 'receipts', items: [] })).to.deep.include({ ok: false, error: { code: 'NO_SIGNING_KEY', msg: 'pool started without a signing key' } });
    expect(hostHandle({ kind: 'receipts', items: [] })).to.deep.include({ ok: false, error: { code: 'BAD_TASK', msg: 'signing runs in the signing lane' } });
  });

  const receiptBody = (lambda: number): ReceiptBody => ({ breaches: [{ rule: 'axis', axis: 'freshness', value: 0.25, limit: 0.3 }], decision: 'REVIEW', geofence_inside: false, lambda, lambda_floor: 0.7 });
  const TS = '2026-11-26T09:00:00.000Z';

  it('signReceipts: each receipt serialised, its PAE hashed and signed, packed back to back; one that cannot be serialised fails alone', () => {
    const { privateKey, publicKey } = p256();
    const items = [{ body: receiptBody(0.8), tsUtc: TS }, { body: receiptBody(Number.NaN), tsUtc: TS }, { body: receiptBody(0.95), tsUtc: '2026-11-26T09:00:01.000Z' }];
    const r = signReceipts(items, privateKey);
    expect(r.errors).to.deep.equal([null, 'receipt holds a non-finite number', null]);
    expect(r.payloadLen[1]).to.equal(-1);
    let at = 0;
    for (const i of [0, 2]) {
      const payload = receiptPayload(items[i]!.body, items[i]!.tsUtc);
      const paeBytes = pae(PAYLOAD_TYPE, payload);
      expect(r.at[i]).to.equal(at);
      expect(r.payloadLen[i]).to.equal(payload.length);
      const bytes = Buffer.from(r.bytes);
      expect(bytes.subarray(at, at + payload.length).equals(payload), `payload ${i}`).to.equal(true);
      expect(bytes.subarray(at + payload.length, at + payload.length + 32).equals(sha256(paeBytes)), `pae sha ${i}`).to.equal(true);
      const sig = bytes.subarray(at + payload.length + 32, at + payload.length + 32 + r.sigLen[i]!);
      expect(verify('sha256', paeBytes, publicKey, sig), `sig ${i}`).to.equal(true);
      at += payload.length + 32 + sig.length;
    }
    expect(r.bytes.length).to.equal(at);
  });

  it('Signer.signReceipt: receipts and PAEs of one turn go in one task per kind; each gets its own views; a bad receipt rejects alone', async () => {
    const { privateKey, publicKey } = p256();
    const { pool, tasks } = fakePool(privateKey);
    const signer = new Signer(pool, 8);
    const bodies = [0.8, Number.NaN, 0.91, 0.99].map(receiptBody);
    const probe = pae(PAYLOAD_TYPE, Buffer.from('{"probe":1}'));
    const [results, probeSig] = await Promise.all([Promise.allSettled(bodies.map((b) => signer.signReceipt(b, TS))), signer.sign(probe)]);
    expect(tasks.map((t) => t.kind)).to.deep.equal(['sign', 'receipts']);
    expect([signer.batches, signer.signatures]).to.deep.equal([2, 5]);
    expect(verify('sha256', probe, publicKey, probeSig)).to.equal(true);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).to.equal('receipt holds a non-finite number');
    for (const k of [0, 2, 3]) {
      const r = (results[k] as PromiseFulfilledResult<{ payload: Buffer; paeSha256: Buffer; sig: Buffer }>).value;
      const payload = receiptPayload(bodies[k]!, TS);
      expect(r.payload.equals(payload), `payload ${k}`).to.equal(true);
      expect(r.paeSha256.equals(sha256(pae(PAYLOAD_TYPE, payload))), `pae sha ${k}`).to.equal(true);
      expect(verify('sha256', pae(PAYLOAD_TYPE, payload), publicKey, r.sig), `sig ${k}`).to.equal(true);
      expect([Buffer.isBuffer(r.payload), Buffer.isBuffer(r.sig)]).to.deep.equal([true, true]);
    }
    // a failed round trip rejects every receipt of its batch
    const down = new Signer(fakePool(privateKey, { fail: true }).pool, 8);
    const failed = await Promise.allSettled([down.signReceipt(bodies[0]!, TS), down.signReceipt(bodies[2]!, TS)]);
    expect(failed.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
  });

  it('keys: keyid is SHA-256 of the DER SPKI, the JWK is the public point, ephemeral only without a file', async () => {
    const eph = loadSigningKey(null);
    expect(eph.ephemeral).to.equal(true);
    expect(eph.keyid).to.equal(derKeyid(eph.publicKey));
    expect(eph.jwk).to.deep.equal((({ kty, crv, x, y }) => ({ kty, crv, x, y }))(eph.publicKey.export({ format: 'jwk' })));
    expect(createPublicKey(eph.spkiPem).export({ format: 'der', type: 'spki' }).equals(eph.publicKey.export({ format: 'der', type: 'spki' }))).to.equal(true);
    await withTempDir(async (dir) => {
      const { privateKey } = p256();
      const file = join(dir, 'k.pem');
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const k = loadSigningKey(file);
      expect(k.ephemeral).to.equal(false);
      expect(k.keyid).to.equal(derKeyid(createPublicKey(privateKey)));
      const ed = join(dir, 'ed.pem');
      writeFileSync(ed, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
      // the curve error is the one thrown, not rewrapped as a parse error
      expect(() => loadSigningKey(ed)).to.throw(KeyError, /^signing key must be EC P-256 \(prime256v1\), got ed25519\/-$/);
      const p384 = join(dir, 'p384.pem');
      writeFileSync(p384, generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
      expect(() => loadSigningKey(p384)).to.throw(KeyError, /got ec\/secp384r1/);
      writeFileSync(join(dir, 'junk.pem'), 'not a key');
      expect(() => loadSigningKey(join(dir, 'junk.pem'))).to.throw(KeyError, /is not a PKCS#8 PEM private key/);
      expect(() => loadSigningKey(join(dir, 'missing.pem'))).to.throw(KeyError, /cannot read signing key file/);
    });
  });

  it('resolveSigningKey: file mode creates one 0600 key in the data directory and reuses it; a configured file wins', async () => {
    await withTempDir(async (dir) => {
      const data = join(dir, 'data');
      const a = resolveSigningKey({ mode: 'file', dataDir: data, signingKeyFile: null });
      const file = join(data, 'signing-key.pem');
      expect(statSync(file).mode & 0o777).to.equal(0o600);
      expect(a.ephemeral).to.equal(false);
      const before = readFileSync(file, 'utf8');
      const b = resolveSigningKey({ mode: 'file', dataDir: data, signingKeyFile: null });
      expect(b.keyid).to.equal(a.keyid);
      expect(readFileSync(file, 'utf8')).to.equal(before);
      const own = join(dir, 'own.pem');
      writeFileSync(own, p256().privateKey.export({ type: 'pkcs8', format: 'pem' }));
      expect(resolveSigningKey({ mode: 'file', dataDir: data, signingKeyFile: own }).keyid).to.not.equal(a.keyid);
      expect(resolveSigningKey({ mode: 'memory', dataDir: data, signingKeyFile: null }).ephemeral).to.equal(true);
      expect(() => resolveSigningKey({ mode: 'file', dataDir: join(own, 'sub'), signingKeyFile: null })).to.throw();
      // a directory that exists but where no file can be created (procfs): the create error is reported
      expect(() => resolveSigningKey({ mode: 'file', dataDir: '/proc/self', signingKeyFile: null })).to.throw(KeyError, /^cannot create signing key file \/proc\/self\/signing-key.pem/);
    });
  });

  it('keyring: the current key first, retired keys by keyid, each once; lookups ignore case', () => {
    const current = loadSigningKey(null);
    const ring = new Keyring(current);
    // added in descending keyid order, so a list that kept insertion order would not be sorted
    const olds = [p256(), p256(), p256(), p256()].map((k) => k.publicKey).sort((a, b) => derKeyid(b).localeCompare(derKeyid(a)));
    const ids = olds.map((k) => ring.add(k.export({ type: 'spki', format: 'pem' }).toString()));
    expect(ids).to.deep.equal(olds.map(derKeyid));
    // re-adding the current key's PEM leaves it current
    expect(ring.add(current.spkiPem)).to.equal(current.keyid);
    expect(ring.add(olds[0]!.export({ type: 'spki', format: 'pem' }).toString())).to.equal(ids[0]);
    expect(ring.list().map((k) => [k.keyid, k.current])).to.deep.equal([[current.keyid, true], ...[...ids].sort().map((id) => [id, false])]);
    const got = ring.get(ids[1]!.toUpperCase())!;
    expect(got.keyid).to.equal(ids[1]);
    expect(got.jwk).to.deep.equal((({ kty, crv, x, y }) => ({ kty, crv, x, y }))(olds[1]!.export({ format: 'jwk' })));
    expect(createPublicKey(got.spkiPem).export({ format: 'der', type: 'spki' }).equals(olds[1]!.export({ format: 'der', type: 'spki' }))).to.equal(true);
    expect(ring.get(current.keyid)!.current).to.equal(true);
    expect(ring.get('00')).to.equal(undefined);
    expect(keyidOf(olds[2]!)).to.equal(ids[2]);
  });

  it('start-up sweep: the first node whose signature fails is named, with why; chunks of 2048 go to the pool', async () => {
    const current = loadSigningKey(null);
    const retired = p256();
    const ring = new Keyring(current);
    ring.add(retired.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const node = (i: number, key: KeyObject, keyid: string): LedgerNode => {
      const payload = Buffer.from(`{"i":${i}}`);
      return { index: i, kind: 'k', tsUtc: 't', payload, paeSha256: sha256(pae(PAYLOAD_TYPE, payload)), sig: sign('sha256', pae(PAYLOAD_TYPE, payload), key), keyid, prev: Buffer.alloc(32), nodeDigest: Buffer.alloc(32), simulated: false };
    };
    const nodes = Array.from({ length: 2050 }, (_, i) => (i % 3 ? node(i, current.privateKey, current.keyid) : node(i, retired.privateKey, derKeyid(retired.publicKey))));
    const { pool, tasks } = fakePool(current.privateKey);
    const sweep = signatureVerifier(pool, ring);
    expect(await sweep(nodes)).to.equal(null);
    expect(tasks.map((t) => (t.kind === 'verify' ? t.items.length : -1))).to.deep.equal([2048, 2]);
    // a signature over another payload at 100 (first chunk) and an unknown key at 2049 (second): the lowest index wins
    const bad = [...nodes];
    bad[100] = { ...nodes[100]!, sig: node(1, current.privateKey, current.keyid).sig };
    bad[2049] = node(2049, p256().privateKey, 'ab'.repeat(32));
    expect(await sweep(bad)).to.deep.equal({ index: 100, reason: 'node 100: signature does not verify over its PAE' });
    bad[100] = nodes[100]!;
    expect(await sweep(bad)).to.deep.equal({ index: 2049, reason: `node 2049: signed by key ${'ab'.repeat(32)}, which is not in the keyring` });
    // within one chunk the first failure is reported, not a later one
    const two = [...nodes.slice(0, 10)];
    two[2] = { ...two[2]!, sig: two[5]!.sig };
    two[7] = { ...two[7]!, sig: two[5]!.sig };
    expect((await sweep(two))!.index).to.equal(2);
    // the first node of a chunk
    const first = [...nodes.slice(0, 4)];
    first[0] = { ...first[0]!, sig: first[1]!.sig };
    expect((await sweep(first))!.index).to.equal(0);
    // no empty chunk is sent: nothing for [], one task for exactly 2048 nodes
    const before = tasks.length;
    expect(await sweep([])).to.equal(null);
    expect(tasks.length).to.equal(before);
    await sweep(nodes.slice(0, 2048));
    expect(tasks.length).to.equal(before + 1);
  });
});
