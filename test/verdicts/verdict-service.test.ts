// The verdict path (VerdictService) on a real Ledger and LedgerWriter, with a store and a signer the
// test controls: receipt bytes, PAE, signature, keyid and node recomputed independently; the
// all-or-nothing batch (reservations released after an evaluation, signing or append failure);
// capacity errors (ledger full, store unavailable, writer queue full); track memory (moves only
// after a durable append, within a batch too, bounded at 10,000 tracks, oldest set first out);
// listeners, the appended count, the simulated flag and the nowMs option. No HTTP service.
import { expect } from 'chai';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import type { NoFlyZone } from '../../src/ledger/ledger.config.js';
import { Ledger, type AppendInput, type LedgerNode } from '../../src/ledger/ledger.js';
import { RECEIPT_KIND, receiptPayload, type ReceiptBody } from '../../src/ledger/receipt.js';
import type { SignedReceipt, Signer } from '../../src/ledger/signer.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import { StoreUnavailableError, type Tip } from '../../src/ledger/store/store.js';
import { LedgerWriter } from '../../src/ledger/writer.js';
import { AppError } from '../../src/http/errors.js';
import type { PreviousFix } from '../../src/verdicts/axes.js';
import { evaluate, type Evaluation } from '../../src/verdicts/evaluate.js';
import type { TelemetryFrame } from '../../src/verdicts/telemetry.js';
import { VerdictService, type Verdict } from '../../src/verdicts/verdict-service.js';

const zone: NoFlyZone = { id: 'nf-test', name: 'test', polygon: [[36.0, -115.2], [36.0, -115.0], [36.2, -115.0], [36.2, -115.2]] };
const ZONES = [zone];
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number): string => new Date(ms).toISOString();

const inside: TelemetryFrame = { track_id: 'in-1', source: 'ADS-B', lat: 36.1, lon: -115.1, alt_m: 90, speed_mps: 12, heading_deg: 30, rssi_dbm: -60, n_observations: 40, ts_utc: iso(NOW - 2000) };
const outside: TelemetryFrame = { track_id: 'a1b2c3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 2000, ts_utc: iso(NOW - 1000) };
const bare: TelemetryFrame = { track_id: 'bare', lat: 36.3, lon: -115.3 };
/** A frame whose evaluation holds NaN: receiptPayload refuses to serialise it. */
const poisoned: TelemetryFrame = { track_id: 'nan', lat: 36.5, lon: -115.1, alt_m: Number.NaN };

/** A frame of a track moving north at ~11 m/s: its kinematic axes depend on the previous fix. */
const moving = (track: string, lat: number, tsMs?: number): TelemetryFrame => ({ track_id: track, lat, lon: 10, speed_mps: 10, heading_deg: 0, ...(tsMs === undefined ? {} : { ts_utc: iso(tsMs) }) });

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => (resolve = res));
  return { promise, resolve };
}

const sigFor = (bytes: Buffer): Buffer => sha256(Buffer.concat([Buffer.from('sig:'), bytes]));

/**
 * Records every PAE it is asked to sign; can hold signatures back or refuse some. Receipts are made
 * as the signing lane makes them (workers/sign-host.ts): serialised, PAE, SHA-256, signed; one that
 * cannot be serialised fails alone.
 */
class FakeSigner {
  readonly calls: Buffer[] = [];
  hold: Deferred<void> | null = null;
  refuse: ((bytes: Buffer) => Error | null) | null = null;

  async sign(bytes: Buffer): Promise<Buffer> {
    this.calls.push(bytes);
    if (this.hold) await this.hold.promise;
    const err = this.refuse?.(bytes);
    if (err) throw err;
    return sigFor(bytes);
  }

  async signReceipt(body: ReceiptBody, tsUtc: string): Promise<SignedReceipt> {
    const payload = receiptPayload(body, tsUtc);
    const paeBytes = pae(PAYLOAD_TYPE, payload);
    return { payload, paeSha256: sha256(paeBytes), sig: await this.sign(paeBytes) };
  }
}

/** The memory store, recording each batch and failing the next commit on demand. */
class RecordingStore extends MemoryStore {
  readonly commits: AppendInput[][] = [];
  failWith: unknown = null;

  override commit(inputs: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]> {
    this.commits.push([...inputs]);
    const err = this.failWith;
    this.failWith = null;
    return err ? Promise.reject(err) : super.commit(inputs, tip);
  }
}

function setup(maxNodes = 100, writerOpts: { queueMax?: number; retryAfterS?: number } = {}) {
  const ledger = new Ledger(maxNodes);
  const store = new RecordingStore();
  const writer = new LedgerWriter(ledger, store, { groupMax: 64, waitMs: 0, queueMax: writerOpts.queueMax ?? 1000, retryAfterS: writerOpts.retryAfterS ?? 5 });
  const signer = new FakeSigner();
  const svc = new VerdictService(ledger, writer, signer as unknown as Signer, 'kid-7', ZONES, 9);
  return { ledger, store, writer, signer, svc };
}

/** The receipt bytes and PAE the service must produce for `e` at `nowMs`. */
function receiptOf(e: Evaluation, nowMs: number): { payload: Buffer; pae: Buffer } {
  const payload = receiptPayload({ breaches: e.breaches, decision: e.decision, geofence_inside: e.geofence.inside, lambda: e.lambda, lambda_floor: e.lambdaFloor }, iso(nowMs));
  return { payload, pae: pae(PAYLOAD_TYPE, payload) };
}

async function failure(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

function expectCapacity(err: unknown, detail: string, retryAfter: string): void {
  expect(err).to.be.instanceOf(AppError);
  const e = err as AppError;
  expect([e.code, e.status, e.detail, e.message, e.headers]).to.deep.equal(['CAPACITY', 503, detail, detail, { 'Retry-After': retryAfter }]);
}

/** The verdict was evaluated against `prev` as the track's previous fix. */
function expectPrevious(v: Verdict, prev: PreviousFix | undefined, nowMs: number): void {
  expect(v.evaluation).to.deep.equal(evaluate(v.frame, ZONES, prev, nowMs));
}

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('verdict service (VerdictService)', () => {
  it('decide: receipt, PAE, signature, keyid and node exactly as recomputed from the evaluation', async () => {
    const { ledger, store, signer, svc } = setup();
    const v = await svc.decide(inside, { nowMs: NOW });
    const ev = evaluate(inside, ZONES, undefined, NOW);
    expect(ev.geofence.inside).to.equal(true); // the zones reached the evaluation
    expect(v.evaluation).to.deep.equal(ev);
    expect(v.frame).to.equal(inside);
    const { payload, pae: paeBytes } = receiptOf(ev, NOW);
    expect(signer.calls).to.have.length(1);
    expect(signer.calls[0]!.equals(paeBytes)).to.equal(true);
    const n = v.node;
    expect([n.index, n.kind, n.tsUtc, n.keyid, n.simulated, v.simulated]).to.deep.equal([0, RECEIPT_KIND, iso(NOW), 'kid-7', false, false]);
    expect(n.payload.equals(payload)).to.equal(true);
    expect(n.paeSha256.equals(sha256(paeBytes))).to.equal(true);
    expect(n.sig.equals(sigFor(paeBytes))).to.equal(true);
    expect(ledger.size).to.equal(1);
    expect(ledger.get(0)!.nodeDigest.equals(n.nodeDigest)).to.equal(true);
    expect(store.commits).to.have.length(1);
    expect(store.commits[0]!.map((i) => i.simulated)).to.deep.equal([false]);
    expect(svc.appended).to.equal(1);
  });

  it('decideAll: every frame signed before any signature is awaited, then one append; nodes contiguous in frame order; simulated reaches the node', async () => {
    const { ledger, store, signer, svc } = setup(3);
    signer.hold = deferred<void>();
    const frames = [outside, inside, bare];
    const done = svc.decideAll(frames, { nowMs: NOW, simulated: true });
    await turn();
    expect(signer.calls).to.have.length(3);
    expect(store.commits).to.have.length(0);
    expect(() => ledger.reserve(1)).to.throw('ledger is full'); // the batch's 3 slots are held
    signer.hold.resolve();
    const vs = await done;
    expect(store.commits.map((c) => c.length)).to.deep.equal([3]);
    expect(vs.map((v) => v.frame)).to.deep.equal(frames);
    expect(vs.map((v) => [v.node.index, v.node.simulated, v.simulated])).to.deep.equal([[0, true, true], [1, true, true], [2, true, true]]);
    vs.forEach((v, i) => {
      const ev = evaluate(frames[i]!, ZONES, undefined, NOW);
      const r = receiptOf(ev, NOW);
      expect(v.evaluation).to.deep.equal(ev);
      expect(signer.calls[i]!.equals(r.pae)).to.equal(true);
      expect(v.node.payload.equals(r.payload)).to.equal(true);
      expect(v.node.paeSha256.equals(sha256(r.pae))).to.equal(true);
      expect(v.node.sig.equals(sigFor(r.pae))).to.equal(true);
      expect(v.node.keyid).to.equal('kid-7');
    });
    expect([vs[0]!.evaluation.decision, vs[1]!.evaluation.decision]).to.deep.equal(['ALLOW', 'DENY']);
    expect(svc.appended).to.equal(3);
    // simulated: false is not simulated either
    const { svc: svc2 } = setup();
    const v2 = await svc2.decide(outside, { nowMs: NOW, simulated: false });
    expect([v2.simulated, v2.node.simulated]).to.deep.equal([false, false]);
  });

  it('without nowMs the receipt is stamped with the current time', async () => {
    const { svc } = setup();
    const before = Date.now();
    const v = await svc.decide(bare);
    const after = Date.now();
    const ts = Date.parse(v.node.tsUtc);
    expect(ts).to.be.within(before, after);
    expect(v.node.tsUtc).to.equal(iso(ts));
    expect(v.evaluation).to.deep.equal(evaluate(bare, ZONES, undefined, ts));
    expect([v.simulated, v.node.simulated]).to.deep.equal([false, false]);
  });

  it('ledger full: Errors.capacity with the cap and the service retryAfterS, nothing signed; exactly maxNodes frames still fit', async () => {
    const { ledger, store, signer, svc } = setup(2);
    expectCapacity(await failure(svc.decideAll([outside, inside, bare], { nowMs: NOW })), 'Ledger is full (2 nodes); nothing is evicted, retry later', '9');
    expect([signer.calls.length, store.commits.length, svc.appended]).to.deep.equal([0, 0, 0]);
    const vs = await svc.decideAll([outside, inside], { nowMs: NOW });
    expect(vs.map((v) => v.node.index)).to.deep.equal([0, 1]);
    expectCapacity(await failure(svc.decide(bare, { nowMs: NOW })), 'Ledger is full (2 nodes); nothing is evicted, retry later', '9');
    expect(ledger.size).to.equal(2);
    // any other refusal of the reservation is passed on as it is
    const odd = new TypeError('reserve broke');
    ledger.reserve = () => {
      throw odd;
    };
    expect(await failure(svc.decide(bare, { nowMs: NOW }))).to.equal(odd);
  });

  it('an evaluation that cannot be serialised fails the batch and releases its reservations', async () => {
    const { ledger, store, signer, svc } = setup(2);
    const err = await failure(svc.decideAll([moving('trk', 10, NOW - 1000), poisoned], { nowMs: NOW }));
    expect(err).to.be.instanceOf(Error).and.not.instanceOf(AppError);
    expect((err as Error).message).to.equal('receipt holds a non-finite number');
    // the lane signs the batch's other receipt, but nothing of the batch is appended
    expect([signer.calls.length, store.commits.length, svc.appended, ledger.size]).to.deep.equal([1, 0, 0, 0]);
    // both slots are free again, and the failed frame of 'trk' did not become its previous fix
    const vs = await svc.decideAll([moving('trk', 10.0001), bare], { nowMs: NOW });
    expectPrevious(vs[0]!, undefined, NOW);
    expect(ledger.size).to.equal(2);
  });

  it('a signing failure fails the batch with that error, appends nothing and releases its reservations', async () => {
    const { ledger, store, signer, svc } = setup(2);
    const seen: Verdict[] = [];
    svc.onVerdict((v) => seen.push(v));
    const refused = new Error('pool down');
    signer.refuse = (bytes) => (bytes.equals(receiptOf(evaluate(inside, ZONES, undefined, NOW), NOW).pae) ? refused : null);
    expect(await failure(svc.decideAll([moving('trk', 10, NOW - 1000), inside], { nowMs: NOW }))).to.equal(refused);
    expect([signer.calls.length, store.commits.length, svc.appended, ledger.size, seen.length]).to.deep.equal([2, 0, 0, 0, 0]);
    signer.refuse = null;
    const vs = await svc.decideAll([moving('trk', 10.0001), outside], { nowMs: NOW });
    expectPrevious(vs[0]!, undefined, NOW);
    expect([ledger.size, svc.appended, seen.length]).to.deep.equal([2, 2, 2]);
  });

  it("an append failure releases the reservations: the store's StoreUnavailableError becomes capacity with its retryAfterS; other errors pass as they are", async () => {
    const { ledger, store, svc } = setup(2);
    store.failWith = new StoreUnavailableError('db down', 11);
    expectCapacity(await failure(svc.decideAll([moving('trk', 10, NOW - 1000), outside], { nowMs: NOW })), 'Ledger store unavailable: db down, retry later', '11');
    const boom = new Error('boom');
    store.failWith = boom;
    expect(await failure(svc.decideAll([moving('trk', 10, NOW - 1000), outside], { nowMs: NOW }))).to.equal(boom);
    expect([store.commits.length, svc.appended, ledger.size]).to.deep.equal([2, 0, 0]);
    const vs = await svc.decideAll([moving('trk', 10.0001), outside], { nowMs: NOW });
    expectPrevious(vs[0]!, undefined, NOW);
    expect([ledger.size, svc.appended]).to.deep.equal([2, 2]);
    // the writer's own refusal (queue full) is a StoreUnavailableError too, with the writer's retryAfterS
    const w = setup(10, { queueMax: 1, retryAfterS: 6 });
    expectCapacity(await failure(w.svc.decideAll([outside, inside], { nowMs: NOW })), 'Ledger store unavailable: ledger write queue full (1 nodes waiting for a commit), retry later', '6');
    expect((await w.svc.decide(outside, { nowMs: NOW })).node.index).to.equal(0);
  });

  it('track memory: the previous fix (ts_utc, else nowMs) moves on only after a durable append; a later frame of the same batch sees the earlier one', async () => {
    const { signer, store, svc } = setup();
    const a = await svc.decide(moving('trk', 10, NOW - 5000), { nowMs: NOW });
    expectPrevious(a, undefined, NOW);
    const fixA = { lat: 10, lon: 10, atMs: NOW - 5000 }; // ts_utc, not nowMs
    const b = await svc.decide(moving('trk', 10.0001), { nowMs: NOW + 1000 });
    expectPrevious(b, fixA, NOW + 1000);
    expect(b.evaluation).to.not.deep.equal(evaluate(b.frame, ZONES, { ...fixA, atMs: NOW }, NOW + 1000));
    expect(b.evaluation).to.not.deep.equal(evaluate(b.frame, ZONES, undefined, NOW + 1000));
    const fixB = { lat: 10.0001, lon: 10, atMs: NOW + 1000 }; // no ts_utc: nowMs
    // one batch: the second frame of 'trk' sees the first; another track sees nothing
    const [c, other, d] = await svc.decideAll([moving('trk', 10.0002), moving('other', 10.0005), moving('trk', 10.0003, NOW + 2500)], { nowMs: NOW + 2000 });
    expectPrevious(c!, fixB, NOW + 2000);
    expectPrevious(other!, undefined, NOW + 2000);
    expectPrevious(d!, { lat: 10.0002, lon: 10, atMs: NOW + 2000 }, NOW + 2000);
    const fixD = { lat: 10.0003, lon: 10, atMs: NOW + 2500 };
    // failed batches (signing, append) leave the history where it was
    signer.refuse = () => new Error('no');
    await failure(svc.decide(moving('trk', 10.001, NOW + 3000), { nowMs: NOW + 3000 }));
    signer.refuse = null;
    store.failWith = new Error('io');
    await failure(svc.decide(moving('trk', 10.002, NOW + 3000), { nowMs: NOW + 3000 }));
    const e = await svc.decide(moving('trk', 10.0004), { nowMs: NOW + 4000 });
    expectPrevious(e, fixD, NOW + 4000);
    const o2 = await svc.decide(moving('other', 10.0006), { nowMs: NOW + 4000 });
    expectPrevious(o2, { lat: 10.0005, lon: 10, atMs: NOW + 2000 }, NOW + 4000);
  });

  it('track memory keeps 10,000 tracks, forgetting the one set longest ago (a set refreshes a track)', async () => {
    const { svc } = setup();
    // filling 10,000 tracks through decide costs ~3 s of evaluations: the memory is filled directly
    const memory = (svc as unknown as { tracks: { set(id: string, fix: PreviousFix): void } }).tracks;
    const old = { lat: 10, lon: 10, atMs: NOW - 1000 };
    for (let i = 0; i < 10_000; i++) memory.set(`t${i}`, old);
    // t0 is remembered, and deciding it makes it the newest
    expectPrevious(await svc.decide(moving('t0', 10.0001), { nowMs: NOW }), old, NOW);
    // the 10,001st track evicts the oldest: t1, not the refreshed t0
    expectPrevious(await svc.decide(moving('new', 10.0001), { nowMs: NOW }), undefined, NOW);
    expectPrevious(await svc.decide(moving('t1', 10.0001), { nowMs: NOW }), undefined, NOW);
    expectPrevious(await svc.decide(moving('t3', 10.0001), { nowMs: NOW }), old, NOW);
    expectPrevious(await svc.decide(moving('t0', 10.0002), { nowMs: NOW + 1000 }), { lat: 10.0001, lon: 10, atMs: NOW }, NOW + 1000);
    expectPrevious(await svc.decide(moving('new', 10.0002), { nowMs: NOW + 1000 }), { lat: 10.0001, lon: 10, atMs: NOW }, NOW + 1000);
    // t1 came back as the newest and pushed t2 out; t2 coming back pushes out t4 (t3 was refreshed)
    expectPrevious(await svc.decide(moving('t2', 10.0001), { nowMs: NOW }), undefined, NOW);
    expectPrevious(await svc.decide(moving('t5', 10.0001), { nowMs: NOW }), old, NOW);
    expectPrevious(await svc.decide(moving('t4', 10.0001), { nowMs: NOW }), undefined, NOW);
  });

  it('listeners: called once per verdict, in verdict order then subscription order, with the verdict returned; unsubscribe stops them', async () => {
    const { svc } = setup();
    const calls: [string, Verdict][] = [];
    const offA = svc.onVerdict((v) => calls.push(['A', v]));
    svc.onVerdict((v) => calls.push(['B', v]));
    expect(svc.appended).to.equal(0);
    const vs = await svc.decideAll([outside, inside, bare], { nowMs: NOW });
    expect(calls.map(([who, v]) => [who, v.node.index])).to.deep.equal([['A', 0], ['B', 0], ['A', 1], ['B', 1], ['A', 2], ['B', 2]]);
    calls.forEach(([, v], i) => expect(v).to.equal(vs[Math.floor(i / 2)]));
    expect(svc.appended).to.equal(3);
    offA();
    calls.length = 0;
    const v = await svc.decide(outside, { nowMs: NOW });
    expect(calls).to.deep.equal([['B', v]]);
    expect(svc.appended).to.equal(4);
  });
});
