/**
 * postgres mode against a hung database: a server that accepts bytes and never answers (the
 * embedded PostgreSQL stopped with SIGSTOP, or a proxy that holds its answers back). Writes are
 * answered 503 + Retry-After within the client-side bounds, readiness says DEGRADED within seconds,
 * a batch whose COMMIT went unanswered is settled before anything is acknowledged again, and
 * everything resumes by itself once the server answers again.
 */
import { expect } from 'chai';
import { createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import { nodeDigest, ZERO_DIGEST, type AppendInput, type LedgerNode } from '../../src/ledger/ledger.js';
import { PostgresStore } from '../../src/ledger/store/postgres-store.js';
import { StoreUnavailableError } from '../../src/ledger/store/store.js';
import { SHUTDOWN_MARGIN_MS } from '../../src/shutdown.js';
import { createDatabase, postVerdict, usePostgres, type TestDatabase, type VerdictAnswer as Answer } from '../helpers/postgres.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';

async function until<T>(what: string, ms: number, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, last?: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve()
      .then(probe)
      .catch(() => null);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}${last ? `; ${last()}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The pids of the PostgreSQL server behind `url`: its postmaster first, then every child process. */
async function serverPids(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const ppid = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1]);
  let postmaster: number;
  try {
    // read while the backend still runs: it ends with its connection
    postmaster = ppid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
  } finally {
    await c.end();
  }
  const children: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (ppid(Number(name)) === postmaster) children.push(Number(name));
    } catch {
      // the process ended while the table was read
    }
  }
  return [postmaster, ...children];
}

/** SIGSTOP on every process of the server; the returned function resumes them (idempotent). */
async function freeze(url: string): Promise<() => void> {
  const pids = await serverPids(url);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGSTOP');
    } catch {
      // a backend that ended after the table was read
    }
  }
  let thawed = false;
  return () => {
    if (thawed) return;
    thawed = true;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone already
      }
    }
  };
}

/**
 * A TCP proxy in front of the database that can turn into a server that never answers: once
 * `stallAfterCommit` has seen a COMMIT go through, every byte in both directions (and every new
 * connection's) is held back until `resume()`, as by a stopped server process.
 */
class Staller {
  private server: Server | null = null;
  private readonly pairs = new Set<{ down: Socket; up: Socket }>();
  private stalled = false;
  private held: (() => void)[] = [];
  stallAfterCommit = false;

  async start(target: URL): Promise<string> {
    this.server = createServer((down) => {
      const up = connect(Number(target.port), target.hostname);
      const pair = { down, up };
      this.pairs.add(pair);
      for (const s of [down, up]) {
        s.on('error', () => {});
        s.on('close', () => {
          this.pairs.delete(pair);
          down.destroy();
          up.destroy();
        });
      }
      const pass = (from: Socket, to: Socket, d: Buffer): void => {
        if (this.stalled) this.held.push(() => to.write(d));
        else to.write(d);
        if (from === down && this.stallAfterCommit && d.includes('COMMIT')) {
          this.stallAfterCommit = false;
          this.stalled = true;
        }
      };
      up.on('data', (d: Buffer) => pass(up, down, d));
      down.on('data', (d: Buffer) => pass(down, up, d));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const u = new URL(target.toString());
    u.port = String((this.server!.address() as { port: number }).port);
    return u.toString();
  }

  resume(): void {
    this.stalled = false;
    for (const f of this.held.splice(0)) f();
  }

  async stop(): Promise<void> {
    this.resume();
    for (const p of this.pairs) p.down.destroy();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

function input(k: number): AppendInput {
  const payload = Buffer.from(JSON.stringify({ n: k }));
  const paeBytes = pae(PAYLOAD_TYPE, payload);
  return { kind: 'test', tsUtc: new Date(1_700_000_000_000 + k).toISOString(), payload, paeSha256: sha256(paeBytes), sig: sign('sha256', paeBytes, privateKey), keyid: 'k1', simulated: false };
}

const tipOf = (nodes: LedgerNode[]) => ({ size: nodes.length, head: nodes.at(-1)?.nodeDigest ?? ZERO_DIGEST });

interface Readiness {
  status: number;
  body: { durability_state: string; adapter_state: string; recovery: { attempts: number; retry_after_s: number } };
}

async function readiness(base: string): Promise<Readiness> {
  const res = await fetch(`${base}/api/svc/v1/ledger/readiness`);
  return { status: res.status, body: (await res.json()) as Readiness['body'] };
}

/** The stored chain, checked link by link and signature by signature. */
async function auditChain(url: string, pub: KeyObject): Promise<{ idx: number; payload: Buffer }[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query<{ idx: string; prev: Buffer; digest: Buffer; pae_sha256: Buffer; payload: Buffer; sig: Buffer }>('SELECT idx, prev, digest, pae_sha256, payload, sig FROM ledger_node ORDER BY idx');
  await c.end();
  let prev: Buffer = ZERO_DIGEST;
  rows.forEach((r, i) => {
    expect(Number(r.idx), 'contiguous indices').to.equal(i);
    expect(r.prev.equals(prev), `node ${i} links to node ${i - 1}`).to.equal(true);
    const paeBytes = pae(PAYLOAD_TYPE, r.payload);
    expect(nodeDigest(i, prev, sha256(paeBytes)).equals(r.digest), `node ${i} digest`).to.equal(true);
    expect(verify('sha256', paeBytes, pub, r.sig), `node ${i} signature`).to.equal(true);
    prev = r.digest;
  });
  return rows.map((r) => ({ idx: Number(r.idx), payload: r.payload }));
}

describe('hostile: a hung PostgreSQL (postgres mode timeouts)', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  let db: TestDatabase;
  let thaw: (() => void) | null = null;
  before(async () => {
    db = await usePostgres();
  });
  afterEach(() => thaw?.());
  after(async () => {
    thaw?.();
    await db?.release();
  });

  it('store: a COMMIT whose answer never comes is refused 503 as unknown, and nothing is acknowledged until the batch is looked up; it then joins the chain', async () => {
    const target = new URL(await createDatabase(db, `hung_store_${process.pid}`));
    const staller = new Staller();
    const url = await staller.start(target);
    const store = await PostgresStore.open({ url, retryAfterS: 1, replicaId: 'hung', pollMs: 60_000, statementTimeoutMs: 500, queryTimeoutMs: 1000, connectTimeoutMs: 500, recoveryBaseMs: 50, recoveryMaxMs: 300 });
    try {
      const nodes: LedgerNode[] = [];
      await store.replay({ apply: (n) => nodes.push(n), verifySignatures: () => Promise.resolve(null) });
      nodes.push(...(await store.commit([input(0), input(1)], tipOf(nodes))));

      // the COMMIT reaches the server (the batch becomes durable) and its answer never comes back
      staller.stallAfterCommit = true;
      const t0 = Date.now();
      const lost = await Promise.race([
        store.commit([input(2), input(3)], tipOf(nodes)).then(
          () => null,
          (e: unknown) => e,
        ),
        new Promise((resolve) => setTimeout(() => resolve(new Error('the commit was still waiting after 15 s')), 15_000).unref()),
      ]);
      const ms = Date.now() - t0;
      expect(lost).to.be.instanceOf(StoreUnavailableError);
      expect((lost as Error).message).to.match(/outcome unknown/);
      expect((lost as Error).message, 'a batch that may be durable is not said to be absent').to.not.match(/nothing was appended/);
      // COMMIT's query timeout, then one more looking it up, plus slack for a busy machine
      expect(ms, 'the refusal comes within the client-side bounds').to.be.below(1000 + 1000 + 3000);
      expect(store.status().state).to.equal('UNAVAILABLE');

      // the server answers again: until the lost batch is settled, nothing is acknowledged
      const refused = await store.commit([input(4)], tipOf(nodes)).then(
        () => null,
        (e: unknown) => e,
      );
      expect(refused, 'refused while the lost batch is unsettled').to.be.instanceOf(StoreUnavailableError);
      staller.resume();
      await until('the store to settle the batch and take appends again', 10_000, () => store.status().state === 'READY', () => JSON.stringify(store.status()));
      // the lost batch was durable: it is in the chain, where a catch-up finds it
      const caught = await store.readFrom(nodes.length, 100);
      expect(caught.map((n) => n.payload.toString()), 'the durable batch joins the chain').to.deep.equal([input(2).payload.toString(), input(3).payload.toString()]);
      nodes.push(...caught);
      const next = await store.commit([input(5)], tipOf(nodes));
      expect(next.map((n) => n.index), 'appends continue after it').to.deep.equal([4]);
    } finally {
      await store.close();
      await staller.stop();
    }
  });

  describe('a service process whose PostgreSQL is stopped (SIGSTOP) under load', () => {
    let keyDir: string;
    let keyFile: string;
    let pub: KeyObject;
    let url: string;
    let svc: ServiceProcess | undefined;
    // ends a test's load loops when it fails before ending them itself
    let stopLoads = (): void => undefined;
    before(async () => {
      keyDir = mkdtempSync(join(tmpdir(), 'svc-pg-hung-key-'));
      keyFile = join(keyDir, 'signing-key.pem');
      const key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
      writeFileSync(keyFile, key.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      pub = createPublicKey(key);
      url = await createDatabase(db, `hung_service_${process.pid}`);
      // default timeouts: what is measured is what a deployment gets
      svc = await startService({ SVC_LEDGER_MODE: 'postgres', SVC_DATABASE_URL: url, SVC_SIGNING_KEY_FILE: keyFile, SVC_KERNEL_DEADLINE_MS: '20000' });
    });
    afterEach(() => stopLoads());
    after(async () => {
      thaw?.();
      if (svc && svc.child.exitCode === null && svc.child.signalCode === null) {
        const exited = new Promise((resolve) => svc!.child.once('exit', resolve));
        svc.child.kill('SIGKILL');
        await exited;
      }
      rmSync(keyDir, { recursive: true, force: true });
    });

    it('writes get 503 + Retry-After within the query timeout, readiness says DEGRADED within seconds, and both recover by themselves after SIGCONT', async () => {
      const base = svc!.base;
      const answers: Answer[] = [];
      // when each loop sent the write it still waits on
      const waiting = new Map<number, number>();
      let stop = false;
      let k = 0;
      const load = async (loop: number): Promise<void> => {
        while (!stop) {
          waiting.set(loop, Date.now());
          const a = await postVerdict(base, k++);
          waiting.delete(loop);
          answers.push(a);
          if (a.status !== 200) await new Promise((r) => setTimeout(r, 100));
        }
      };
      const loads = Array.from({ length: 4 }, (_, loop) => load(loop));
      stopLoads = () => (stop = true);
      // the query timeout (3 s), one more for the look-up of an unanswered COMMIT, the shed hold of a
      // client that resends before Retry-After (guard.shedHoldMaxMs, 2 s), and slack for a busy machine
      const bound = 3000 + 3000 + 2000 + 4000;
      try {
        await until('appends before the stop', 20_000, () => answers.filter((a) => a.status === 200).length >= 40);
        expect((await readiness(base)).body.durability_state).to.equal('DURABLE');

        thaw = await freeze(url);
        const stoppedAt = Date.now();
        let seen: Readiness | null = null;
        const degraded = await until(
          'readiness to say DEGRADED',
          15_000,
          async () => {
            seen = await readiness(base);
            return seen.status === 503 && seen.body.durability_state === 'DEGRADED' && seen.body.adapter_state === 'UNAVAILABLE' ? Date.now() - stoppedAt : null;
          },
          () => `last readiness: ${JSON.stringify(seen)}`,
        );
        // writes sent after the stop are answered, not held: 503 with Retry-After
        const refusals = await until('503s for writes sent after the stop', 15_000, () => {
          const r = answers.filter((a) => a.sentAt > stoppedAt && a.status === 503);
          return r.length >= 8 ? r : null;
        });
        for (const a of refusals) expect(Number(a.retryAfter), 'Retry-After').to.be.at.least(1);
        // the server stays stopped past the bound, so a write held until it answers again would show
        await until('the stop to outlast the bound', bound + 5000, () => Date.now() - stoppedAt > bound + 1000);
        const oldestWaiting = Math.max(0, ...[...waiting.values()].map((sentAt) => Date.now() - sentAt));
        const slowest = Math.max(...answers.map((a) => a.ms));
        // in CI logs: how soon readiness turned and how long the slowest write waited
        console.log(`      readiness DEGRADED ${degraded} ms after SIGSTOP; slowest write ${slowest} ms; ${refusals.length} refusals while stopped`);
        expect(oldestWaiting, 'no write still waits on the hung server past the bound').to.be.below(bound);
        expect(slowest, 'no write was answered only after the bound').to.be.below(bound);
        expect(degraded, 'DEGRADED within seconds').to.be.below(10_000);
      } finally {
        thaw?.();
      }
      const resumedAt = Date.now();
      await until('appends to resume by themselves', 30_000, () => answers.filter((a) => a.sentAt > resumedAt && a.status === 200).length >= 20);
      const ready = await until('readiness to say DURABLE again', 10_000, async () => {
        const r = await readiness(base);
        return r.status === 200 && r.body.durability_state === 'DURABLE' ? r : null;
      });
      expect(ready.body.adapter_state).to.equal('READY');
      stop = true;
      await Promise.all(loads);

      expect([...new Set(answers.map((a) => a.status))].sort(), 'only 200 and 503, never a 500 or a cut connection').to.deep.equal([200, 503]);
      const rows = await auditChain(url, pub);
      const seenIndex = new Set<number>();
      for (const a of answers.filter((x) => x.status === 200)) {
        expect(seenIndex.has(a.index!), `index ${a.index} answered twice`).to.equal(false);
        seenIndex.add(a.index!);
        expect(rows[a.index!]?.payload.toString('base64'), `node ${a.index} holds the answered receipt`).to.equal(a.payload);
      }
    });

    it('SIGTERM while the database is stopped under load: exit 0 within server.shutdownTimeoutMs + SHUTDOWN_MARGIN_MS', async () => {
      const base = svc!.base;
      let stop = false;
      let k = 100_000;
      const load = async (): Promise<void> => {
        while (!stop) await postVerdict(base, k++);
      };
      const loads = Array.from({ length: 4 }, () => load());
      try {
        thaw = await freeze(url);
        // writes are waiting on the stopped server when the signal comes
        await new Promise((r) => setTimeout(r, 500));
        const t0 = Date.now();
        const exited = new Promise<number | null>((resolve) => svc!.child.once('exit', (code) => resolve(code)));
        svc!.child.kill('SIGTERM');
        const code = await exited;
        const ms = Date.now() - t0;
        console.log(`      exit ${ms} ms after SIGTERM with the database stopped: ${svc!.lines.filter((l) => /"msg":"(stopped|shutdown deadline[^"]*)"/.test(l)).join(' ')}`);
        expect(code, svc!.stderr().slice(-2000)).to.equal(0);
        expect(ms, `exit took ${ms} ms`).to.be.below(4000 + SHUTDOWN_MARGIN_MS + 1500);
      } finally {
        stop = true;
        thaw?.();
      }
      await Promise.all(loads);
    });
  });
});
