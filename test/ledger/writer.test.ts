// The group-commit writer (LedgerWriter) against a store whose commits and reads the test completes by
// hand: batching while a commit is in flight, the groupMax cap (exactly full, and a lone oversized
// request), the queueMax refusal at its boundary, setImmediate vs timer scheduling, commit failure
// and a batch that does not extend the mirror, other replicas' nodes ahead of a batch (own = false),
// catch-up in pages of 500 serialised with commits, onRemoteAppend, and drain. No wall-clock waits.
import { expect } from 'chai';
import { sha256 } from '../../src/ledger/dsse.js';
import { Ledger, ZERO_DIGEST, type AppendInput, type LedgerNode } from '../../src/ledger/ledger.js';
import { sequence, StoreUnavailableError, type AdapterStatus, type LedgerStore, type ReplayReport, type Tip } from '../../src/ledger/store/store.js';
import { LedgerWriter, type WriterOptions } from '../../src/ledger/writer.js';

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(err: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const input = (tag: string, k: number): AppendInput => ({
  kind: 'k',
  tsUtc: `2026-01-01T00:00:${String(k % 60).padStart(2, '0')}.000Z`,
  payload: Buffer.from(`${tag} ${k}`),
  paeSha256: sha256(Buffer.from(`${tag} pae ${k}`)),
  sig: Buffer.from([k & 255]),
  keyid: tag,
});
const inputs = (tag: string, n: number): AppendInput[] => Array.from({ length: n }, (_, k) => input(tag, k));
const payloads = (xs: readonly { payload: Buffer }[]): string[] => xs.map((x) => x.payload.toString());

/**
 * A store shared with "other replicas": `chain` is the durable chain of every writer. A commit
 * waits until the test releases (or fails) it, then sequences its inputs after the durable chain and
 * answers, as postgres does, with every node from the tip it was given on (remote nodes first).
 */
class FakeStore implements LedgerStore {
  readonly mode = 'postgres' as const;
  readonly scope = 'POSTGRES' as const;
  readonly chain: LedgerNode[] = [];
  readonly commits: { inputs: AppendInput[]; tip: Tip; gate: Deferred<LedgerNode[] | null> }[] = [];
  readonly reads: [number, number][] = [];
  /** Commits complete at once (no release needed). */
  auto = false;
  readGate: Deferred<void> | null = null;
  readError: Error | null = null;
  private remoteListener: ((size: number) => void) | null = null;

  commit(ins: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]> {
    const gate = deferred<LedgerNode[] | null>();
    this.commits.push({ inputs: [...ins], tip: { size: tip.size, head: tip.head }, gate });
    if (this.auto) gate.resolve(null);
    return gate.promise.then((given) => {
      if (given) return given;
      this.chain.push(...sequence(ins, this.tip()));
      return this.chain.slice(tip.size);
    });
  }

  release(i: number, nodes: LedgerNode[] | null = null): void {
    this.commits[i]!.gate.resolve(nodes);
  }

  fail(i: number, err: unknown): void {
    this.commits[i]!.gate.reject(err);
  }

  tip(): Tip {
    return { size: this.chain.length, head: this.chain.length ? this.chain[this.chain.length - 1]!.nodeDigest : ZERO_DIGEST };
  }

  /** Another replica appends `n` nodes. */
  remote(n: number): void {
    const from = this.chain.length;
    this.chain.push(...sequence(Array.from({ length: n }, (_, k) => input('remote', from + k)), this.tip()));
  }

  /** The NOTIFY a postgres store receives when another replica appended. */
  ping(): void {
    this.remoteListener?.(this.chain.length);
  }

  async readFrom(from: number, limit: number): Promise<LedgerNode[]> {
    this.reads.push([from, limit]);
    const gate = this.readGate;
    if (gate) await gate.promise;
    if (this.readError) throw this.readError;
    return this.chain.slice(from, from + limit);
  }

  onRemoteAppend(listener: (size: number) => void): void {
    this.remoteListener = listener;
  }

  replay(): Promise<ReplayReport> {
    return Promise.resolve({ nodes: 0, trimmed: null, corruptAt: null, ms: 0 });
  }

  loadKeys(): Promise<string[]> {
    return Promise.resolve([]);
  }

  recordKey(): Promise<string> {
    return Promise.resolve(new Date(0).toISOString());
  }

  status(): AdapterStatus {
    return { configured: true, state: 'READY', reason: 'fake', recovery: { attempts: 0, retry_after_s: 0, last_error: null } };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A promise's outcome as seen so far, without awaiting it (and without leaving a rejection unhandled). */
interface Tracked<T> {
  state: 'pending' | 'fulfilled' | 'rejected';
  value?: T;
  error?: unknown;
  promise: Promise<T>;
}

function track<T>(promise: Promise<T>): Tracked<T> {
  const t: Tracked<T> = { state: 'pending', promise };
  promise.then(
    (v) => Object.assign(t, { state: 'fulfilled', value: v }),
    (e: unknown) => Object.assign(t, { state: 'rejected', error: e }),
  );
  return t;
}

/** One event-loop turn: every setImmediate queued before it and every microtask has run. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await turn();
}

const indices = (t: Tracked<LedgerNode[]>): number[] => (t.value ?? []).map((n) => n.index);

/** Runs `fn` with setImmediate and setTimeout captured (not run): what did it schedule? */
function scheduled(fn: () => void): { immediates: (() => void)[]; timeouts: { ms: number | undefined; cb: () => void }[] } {
  const realImmediate = globalThis.setImmediate;
  const realTimeout = globalThis.setTimeout;
  const immediates: (() => void)[] = [];
  const timeouts: { ms: number | undefined; cb: () => void }[] = [];
  globalThis.setImmediate = ((cb: () => void) => {
    immediates.push(cb);
  }) as unknown as typeof setImmediate;
  globalThis.setTimeout = ((cb: () => void, ms?: number) => {
    timeouts.push({ ms, cb });
  }) as unknown as typeof setTimeout;
  try {
    fn();
  } finally {
    globalThis.setImmediate = realImmediate;
    globalThis.setTimeout = realTimeout;
  }
  return { immediates, timeouts };
}

/** Process-level unhandled rejections while `fn` runs, captured instead of reported. */
async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const saved = process.listeners('unhandledRejection');
  const seen: unknown[] = [];
  const mine = (reason: unknown): void => {
    seen.push(reason);
  };
  process.removeAllListeners('unhandledRejection');
  process.on('unhandledRejection', mine);
  try {
    await fn();
    await turns(2);
  } finally {
    process.removeListener('unhandledRejection', mine);
    for (const l of saved) process.on('unhandledRejection', l);
  }
  return seen;
}

const OPTS: WriterOptions = { groupMax: 64, waitMs: 0, queueMax: 1000, retryAfterS: 3 };

const stores: FakeStore[] = [];

function setup(opts: Partial<WriterOptions> = {}, maxNodes = 10_000) {
  const ledger = new Ledger(maxNodes);
  const store = new FakeStore();
  stores.push(store);
  const writer = new LedgerWriter(ledger, store, { ...OPTS, ...opts });
  const applied: [number, boolean][] = [];
  ledger.onAppend((n, own) => applied.push([n.index, own]));
  return { ledger, store, writer, applied };
}

describe('ledger group-commit writer (LedgerWriter)', () => {
  // a test that failed half-way leaves no commit or read waiting (and no drain polling) behind it
  afterEach(() => {
    for (const s of stores.splice(0)) {
      s.auto = true;
      s.readError = null;
      s.readGate?.resolve();
      for (const c of s.commits) c.gate.resolve(null);
    }
  });

  it('one append: committed after the mirror tip, in the mirror (own) only once durable, answered with its node', async () => {
    const { ledger, store, writer, applied } = setup({}, 2);
    ledger.reserve(1);
    const a = track(writer.append([input('a', 0)]));
    expect(store.commits).to.have.length(0); // not in this turn: it waits for company
    await turn();
    expect(store.commits).to.have.length(1);
    expect(store.commits[0]!.tip.size).to.equal(0);
    expect(store.commits[0]!.tip.head.equals(ZERO_DIGEST)).to.equal(true);
    expect(payloads(store.commits[0]!.inputs)).to.deep.equal(['a 0']);
    await turns(2);
    expect([a.state, ledger.size, applied.length]).to.deep.equal(['pending', 0, 0]);
    store.release(0);
    await turn();
    expect(a.state).to.equal('fulfilled');
    expect(indices(a)).to.deep.equal([0]);
    expect(a.value![0]!.nodeDigest.equals(ledger.get(0)!.nodeDigest)).to.equal(true);
    expect(payloads(a.value!)).to.deep.equal(['a 0']);
    expect(applied).to.deep.equal([[0, true]]);
    // an own node consumes the slot reserved for it: exactly one more fits
    ledger.reserve(1);
    expect(() => ledger.reserve(1)).to.throw('ledger is full');
  });

  it('appends arriving while a batch commits go together in the next one; each request gets exactly its own slice', async () => {
    const { ledger, store, writer, applied } = setup();
    const a = track(writer.append([input('a', 0)]));
    await turn();
    const b = track(writer.append(inputs('b', 2)));
    const c = track(writer.append(inputs('c', 1)));
    const d = track(writer.append(inputs('d', 3)));
    await turns(3);
    expect(store.commits).to.have.length(1); // one commit at a time
    store.release(0);
    await turn();
    expect(indices(a)).to.deep.equal([0]);
    expect(store.commits).to.have.length(2);
    expect(payloads(store.commits[1]!.inputs)).to.deep.equal(['b 0', 'b 1', 'c 0', 'd 0', 'd 1', 'd 2']);
    expect(store.commits[1]!.tip.size).to.equal(1);
    expect(store.commits[1]!.tip.head.equals(ledger.get(0)!.nodeDigest)).to.equal(true);
    expect([b.state, c.state, d.state, ledger.size]).to.deep.equal(['pending', 'pending', 'pending', 1]);
    store.release(1);
    await turn();
    expect([indices(b), indices(c), indices(d)]).to.deep.equal([[1, 2], [3], [4, 5, 6]]);
    expect([payloads(b.value!), payloads(c.value!), payloads(d.value!)]).to.deep.equal([['b 0', 'b 1'], ['c 0'], ['d 0', 'd 1', 'd 2']]);
    expect(applied).to.deep.equal([0, 1, 2, 3, 4, 5, 6].map((i) => [i, true]));
    // appends of one turn share one commit too
    const e = track(writer.append(inputs('e', 1)));
    const f = track(writer.append(inputs('f', 2)));
    await turn();
    expect(store.commits).to.have.length(3);
    expect(payloads(store.commits[2]!.inputs)).to.deep.equal(['e 0', 'f 0', 'f 1']);
    store.release(2);
    await turn();
    expect([indices(e), indices(f), ledger.size]).to.deep.equal([[7], [8, 9], 10]);
  });

  it('groupMax caps a commit by nodes (exactly full is allowed); a request larger than groupMax goes alone', async () => {
    const { ledger, store, writer } = setup({ groupMax: 4 });
    const first = track(writer.append(inputs('x', 1)));
    await turn();
    const sizes = [2, 2, 1, 6, 1, 3, 5];
    const reqs = sizes.map((n, r) => track(writer.append(inputs(`r${r}`, n))));
    store.auto = true;
    store.release(0);
    await turns(3);
    expect(store.commits.map((c) => c.inputs.length)).to.deep.equal([1, 4, 1, 6, 4, 5]);
    expect(store.commits.map((c) => c.tip.size)).to.deep.equal([0, 1, 5, 6, 12, 16]);
    expect(indices(first)).to.deep.equal([0]);
    expect(reqs.map(indices)).to.deep.equal([[1, 2], [3, 4], [5], [6, 7, 8, 9, 10, 11], [12], [13, 14, 15], [16, 17, 18, 19, 20]]);
    expect(ledger.size).to.equal(21);
  });

  it('queueMax: pending + new == queueMax is accepted, one node more is refused (503 + retryAfterS); a batch taken frees its nodes', async () => {
    const { store, writer } = setup({ queueMax: 5, retryAfterS: 7 });
    const a = track(writer.append(inputs('a', 3)));
    const b = track(writer.append(inputs('b', 2))); // 3 + 2 == 5
    const c = track(writer.append(inputs('c', 1))); // 5 + 1 > 5
    await turn();
    expect(c.state).to.equal('rejected');
    expect(c.error).to.be.instanceOf(StoreUnavailableError);
    expect((c.error as StoreUnavailableError).message).to.equal('ledger write queue full (5 nodes waiting for a commit)');
    expect((c.error as StoreUnavailableError).retryAfterS).to.equal(7);
    expect(store.commits).to.have.length(1);
    expect(payloads(store.commits[0]!.inputs)).to.deep.equal(['a 0', 'a 1', 'a 2', 'b 0', 'b 1']);
    // the batch in flight no longer counts: a full queue's worth waits behind it, not a node more
    const d = track(writer.append(inputs('d', 5)));
    const e = track(writer.append(inputs('e', 1)));
    await turn();
    expect([d.state, e.state]).to.deep.equal(['pending', 'rejected']);
    expect((e.error as StoreUnavailableError).retryAfterS).to.equal(7);
    store.auto = true;
    store.release(0);
    await turns(2);
    expect([indices(a), indices(b), indices(d)]).to.deep.equal([[0, 1, 2], [3, 4], [5, 6, 7, 8, 9]]);
    expect(store.commits.map((x) => x.inputs.length)).to.deep.equal([5, 5]);
    // alone, more than queueMax is refused too; exactly queueMax is not
    const big = track(writer.append(inputs('big', 6)));
    const max = track(writer.append(inputs('max', 5)));
    await turns(2);
    expect([big.state, max.state]).to.deep.equal(['rejected', 'fulfilled']);
    expect(indices(max)).to.deep.equal([10, 11, 12, 13, 14]);
  });

  it('waitMs 0 flushes with setImmediate, scheduled once per batch and never while a batch is committing', async () => {
    const { store, writer } = setup({ waitMs: 0 });
    let a!: Tracked<LedgerNode[]>;
    let b!: Tracked<LedgerNode[]>;
    const s1 = scheduled(() => {
      a = track(writer.append(inputs('a', 1)));
      b = track(writer.append(inputs('b', 1)));
    });
    expect([s1.immediates.length, s1.timeouts.length]).to.deep.equal([1, 0]);
    await turn();
    expect(store.commits).to.have.length(0); // the captured flush has not run
    s1.immediates[0]!();
    await turn();
    expect(store.commits).to.have.length(1);
    expect(payloads(store.commits[0]!.inputs)).to.deep.equal(['a 0', 'b 0']);
    // during the commit: the running flush picks new appends up, nothing new is scheduled
    let c!: Tracked<LedgerNode[]>;
    const s2 = scheduled(() => {
      c = track(writer.append(inputs('c', 1)));
    });
    expect([s2.immediates.length, s2.timeouts.length]).to.deep.equal([0, 0]);
    store.release(0);
    await turn();
    expect(store.commits).to.have.length(2);
    store.release(1);
    await turn();
    expect([indices(a), indices(b), indices(c)]).to.deep.equal([[0], [1], [2]]);
    // the flush is over: the next append schedules again
    let d!: Tracked<LedgerNode[]>;
    const s3 = scheduled(() => {
      d = track(writer.append(inputs('d', 1)));
    });
    expect([s3.immediates.length, s3.timeouts.length]).to.deep.equal([1, 0]);
    store.auto = true;
    s3.immediates[0]!();
    await turn();
    expect(indices(d)).to.deep.equal([3]);
  });

  it('waitMs > 0 waits that many ms on a timer for company', async () => {
    const { store, writer } = setup({ waitMs: 7 });
    let a!: Tracked<LedgerNode[]>;
    let b!: Tracked<LedgerNode[]>;
    const s = scheduled(() => {
      a = track(writer.append(inputs('a', 1)));
      b = track(writer.append(inputs('b', 2)));
    });
    expect(s.immediates).to.have.length(0);
    expect(s.timeouts.map((t) => t.ms)).to.deep.equal([7]);
    await turns(2);
    const c = track(writer.append(inputs('c', 1))); // still waiting: joins, schedules nothing
    await turns(2);
    expect(store.commits).to.have.length(0);
    store.auto = true;
    s.timeouts[0]!.cb();
    await turn();
    expect(store.commits.map((x) => payloads(x.inputs))).to.deep.equal([['a 0', 'b 0', 'b 1', 'c 0']]);
    expect([indices(a), indices(b), indices(c)]).to.deep.equal([[0], [1, 2], [3]]);
  });

  it('a failed commit rejects every request of its batch with the store error; the next batch still commits', async () => {
    const { ledger, store, writer, applied } = setup();
    const a = track(writer.append(inputs('a', 2)));
    const b = track(writer.append(inputs('b', 1)));
    await turn();
    const c = track(writer.append(inputs('c', 1)));
    const d = track(writer.append(inputs('d', 2)));
    const err = new StoreUnavailableError('disk gone', 4);
    store.fail(0, err);
    await turn();
    expect([a.state, b.state]).to.deep.equal(['rejected', 'rejected']);
    expect(a.error).to.equal(err);
    expect(b.error).to.equal(err);
    expect([ledger.size, applied.length]).to.deep.equal([0, 0]);
    expect(store.commits).to.have.length(2);
    expect(store.commits[1]!.tip.size).to.equal(0);
    expect(payloads(store.commits[1]!.inputs)).to.deep.equal(['c 0', 'd 0', 'd 1']);
    store.release(1);
    await turn();
    expect([indices(c), indices(d), ledger.size]).to.deep.equal([[0], [1, 2], 3]);
    // and the writer keeps going
    store.auto = true;
    const e = track(writer.append(inputs('e', 1)));
    await turns(2);
    expect(indices(e)).to.deep.equal([3]);
  });

  it('a durable batch that does not extend the mirror rejects every request of it, and the error is not swallowed', async () => {
    const { ledger, store, writer } = setup();
    let a!: Tracked<LedgerNode[]>;
    let b!: Tracked<LedgerNode[]>;
    const seen = await unhandledDuring(async () => {
      a = track(writer.append(inputs('a', 1)));
      b = track(writer.append(inputs('b', 2)));
      await turn();
      // sequenced after a chain this process never saw
      store.release(0, sequence(store.commits[0]!.inputs, { size: 5, head: Buffer.alloc(32, 1) }));
      await turn();
    });
    expect([a.state, b.state]).to.deep.equal(['rejected', 'rejected']);
    expect((a.error as Error).message).to.equal('node 5 does not extend a ledger of 0 nodes');
    expect(b.error).to.equal(a.error);
    expect(seen).to.deep.equal([a.error]);
    expect(ledger.size).to.equal(0);
    // the writer still commits afterwards
    store.auto = true;
    const c = track(writer.append(inputs('c', 1)));
    await turns(2);
    expect(indices(c)).to.deep.equal([0]);
  });

  it("other replicas' nodes returned ahead of a batch are applied (own = false) but handed to no requester", async () => {
    const { ledger, store, writer, applied } = setup({}, 6);
    store.remote(2);
    ledger.reserve(2);
    const a = track(writer.append(inputs('a', 1)));
    const b = track(writer.append(inputs('b', 2)));
    await turn();
    expect(store.commits[0]!.tip.size).to.equal(0);
    store.release(0);
    await turn();
    expect([indices(a), indices(b)]).to.deep.equal([[2], [3, 4]]);
    expect([payloads(a.value!), payloads(b.value!)]).to.deep.equal([['a 0'], ['b 0', 'b 1']]);
    expect(applied).to.deep.equal([[0, false], [1, false], [2, true], [3, true], [4, true]]);
    expect(payloads([0, 1].map((i) => ledger.get(i)!))).to.deep.equal(['remote 0', 'remote 1']);
    // the reservations were consumed by the own nodes only (2 reserved, 3 own): the last slot is free
    ledger.reserve(1);
    expect(() => ledger.reserve(1)).to.throw('ledger is full');
  });

  it("onCommit is told of each group commit once it ends: its own nodes (not other replicas'), durable or refused, and its duration", async () => {
    const seen: [number, boolean][] = [];
    const seconds: number[] = [];
    const { store, writer } = setup({
      onCommit: (s, n, durable) => {
        seconds.push(s);
        seen.push([n, durable]);
      },
    });
    const a = track(writer.append(inputs('a', 2)));
    const b = track(writer.append(inputs('b', 1)));
    await turn();
    expect(seen).to.deep.equal([]); // nothing until the store answers
    store.fail(0, new StoreUnavailableError('disk gone', 4));
    await turn();
    expect([a.state, b.state, seen]).to.deep.equal(['rejected', 'rejected', [[3, false]]]);
    store.remote(5);
    const c = track(writer.append(inputs('c', 4)));
    await turn();
    const gate = performance.now();
    while (performance.now() - gate < 2); // the commit takes at least 2 ms
    store.release(1);
    await turn();
    expect(indices(c)).to.deep.equal([5, 6, 7, 8]);
    expect(seen).to.deep.equal([[3, false], [4, true]]);
    expect(seconds[1]).to.be.at.least(0.002).and.below(1);
  });

  it('catchUp reads from the mirror size in pages of 500 until a short page; caught-up nodes are not own', async () => {
    const { ledger, store, writer, applied } = setup();
    store.auto = true;
    await writer.append(inputs('a', 2));
    store.remote(1001);
    await writer.catchUp();
    expect(store.reads).to.deep.equal([[2, 500], [502, 500], [1002, 500]]);
    expect(ledger.size).to.equal(1003);
    expect(ledger.head.equals(store.tip().head)).to.equal(true);
    expect(applied.slice(2).every(([, own]) => !own)).to.equal(true);
    expect(applied.map(([i]) => i)).to.deep.equal(Array.from({ length: 1003 }, (_, i) => i));
    // nothing new: one empty page
    store.reads.length = 0;
    await writer.catchUp();
    expect(store.reads).to.deep.equal([[1003, 500]]);
    // exactly a page: a second, empty read confirms the end
    store.reads.length = 0;
    store.remote(500);
    await writer.catchUp();
    expect(store.reads).to.deep.equal([[1003, 500], [1503, 500]]);
    expect(ledger.size).to.equal(1503);
    // a failed read rejects catchUp
    store.readError = new Error('connection reset');
    let caught: unknown;
    await writer.catchUp().catch((e: unknown) => (caught = e));
    expect(caught).to.equal(store.readError);
  });

  it('catchUp and commits run one at a time, each against the mirror the other left', async () => {
    const { ledger, store, writer } = setup();
    const a = track(writer.append(inputs('a', 1)));
    await turn();
    store.remote(3); // lands before our batch in the store
    const up = track(writer.catchUp());
    await turns(3);
    expect(store.reads).to.deep.equal([]); // waits for the commit in flight
    store.release(0);
    await turns(2);
    expect(indices(a)).to.deep.equal([3]);
    expect(up.state).to.equal('fulfilled');
    expect(store.reads).to.deep.equal([[4, 500]]);
    // the other way round: a commit waits for a catch-up in flight
    store.remote(2);
    store.readGate = deferred<void>();
    const up2 = track(writer.catchUp());
    await turn();
    const b = track(writer.append(inputs('b', 1)));
    await turns(3);
    expect(store.commits).to.have.length(1);
    store.readGate.resolve();
    store.readGate = null;
    await turns(2);
    expect(up2.state).to.equal('fulfilled');
    expect(store.commits).to.have.length(2);
    expect(store.commits[1]!.tip.size).to.equal(6);
    store.release(1);
    await turn();
    expect([indices(b), ledger.size]).to.deep.equal([[6], 7]);
  });

  it("onRemoteAppend pulls other replicas' nodes in; a failed read there is swallowed and commits go on", async () => {
    const { ledger, store, writer, applied } = setup();
    store.remote(3);
    store.ping();
    await turns(2);
    expect(store.reads).to.deep.equal([[0, 500]]);
    expect([ledger.size, applied.every(([, own]) => !own)]).to.deep.equal([3, true]);
    const seen = await unhandledDuring(async () => {
      store.readError = new Error('connection reset');
      store.remote(1);
      store.ping();
      await turns(2);
    });
    expect(seen).to.deep.equal([]);
    expect(store.reads).to.deep.equal([[0, 500], [3, 500]]);
    expect(ledger.size).to.equal(3);
    store.readError = null;
    store.auto = true;
    const a = track(writer.append(inputs('a', 1)));
    await turns(2);
    expect(store.commits[0]!.tip.size).to.equal(3);
    expect(indices(a)).to.deep.equal([4]);
    expect(applied.slice(3)).to.deep.equal([[3, false], [4, true]]);
  });

  it('drain waits for queued appends and the batch in flight, committed or refused', async () => {
    const { store, writer } = setup();
    const idle = track(writer.drain());
    await turn();
    expect(idle.state).to.equal('fulfilled');
    const a = track(writer.append(inputs('a', 1)));
    const queued = track(writer.drain()); // called while the append is still queued
    await turn();
    const inFlight = track(writer.drain()); // called while its batch commits, nothing queued
    await turns(4);
    expect([queued.state, inFlight.state, a.state]).to.deep.equal(['pending', 'pending', 'pending']);
    const b = track(writer.append(inputs('b', 1)));
    store.release(0);
    await turn();
    store.fail(1, new Error('refused'));
    await Promise.all([queued.promise, inFlight.promise]);
    expect([a.state, b.state]).to.deep.equal(['fulfilled', 'rejected']);
  });
});
