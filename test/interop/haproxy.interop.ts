/**
 * Interop: two postgres-mode replicas behind a real HAProxy (Debian package `haproxy`): HTTP mode,
 * round robin, no stickiness, active checks on /health. Through the balancer, concurrent verdicts
 * form one chain; both replicas serve byte-identical stream events and edge scenes; a viewer whose
 * replica is SIGKILLed resumes on the other one with no gap and no duplicate; replicas ride out a
 * database outage and return to service by themselves. Run by `npm run test:interop` (not by
 * `npm test`: it needs haproxy).
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { nodeDigest, ZERO_DIGEST } from '../../src/ledger/ledger.js';
import { merkleRoot } from '../../src/lib/merkle.js';
import { haproxyVersion, SERVED_BY, startHaproxy, type Haproxy, type ServerStat } from '../helpers/haproxy.js';
import { loadFrame, usePostgres, type TestDatabase } from '../helpers/postgres.js';
import { killService, startService, type ServiceProcess } from '../helpers/service-process.js';
import { viewSse, type SseViewer, type ViewerEvent } from '../helpers/sse-viewer.js';
import { until } from '../helpers/until.js';

const API = '/api/svc/v1';
const STREAM = `${API}/stream/verdicts`;
/** haproxy's checks: every 200 ms, down after 2 failures, up after 2 passes. */
const CHECK = { interMs: 200, fall: 2, rise: 2 };

type Name = 'a' | 'b';

interface Answer {
  status: number;
  retryAfter: string | null;
  /** The server haproxy picked (null for a replica reached directly, or an answer of haproxy's own). */
  servedBy: string | null;
  index?: number;
  payload?: string;
  sentAt: number;
  /** Why the request failed without an answer. */
  error?: string;
}

/** POST /verdict of `loadFrame(k)`; status 0 when the connection itself failed. */
async function post(base: string, k: number): Promise<Answer> {
  const sentAt = Date.now();
  try {
    const res = await fetch(`${base}${API}/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(loadFrame(k)) });
    const text = await res.text();
    let body: { ledger?: { index: number }; receipt?: { payload_b64: string } } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // haproxy's own error pages are HTML
    }
    return { status: res.status, retryAfter: res.headers.get('retry-after'), servedBy: res.headers.get(SERVED_BY), index: body.ledger?.index, payload: body.receipt?.payload_b64, sentAt };
  } catch (err) {
    return { status: 0, retryAfter: null, servedBy: null, sentAt, error: String((err as Error).cause ?? err) };
  }
}

interface Readiness {
  status: number;
  state: string;
  nodes: number;
  root: string | null;
}

async function readiness(base: string): Promise<Readiness> {
  const res = await fetch(`${base}${API}/ledger/readiness`);
  const body = (await res.json()) as { adapter_state: string; integrity: { nodes: number; root: string | null } };
  return { status: res.status, state: body.adapter_state, nodes: body.integrity.nodes, root: body.integrity.root };
}

/** Both replicas at one size of at least `min` and one root. */
function settled(bases: string[], min: number): Promise<Readiness> {
  return until(`both replicas to hold the same ledger of at least ${min} nodes`, async () => {
    const r = await Promise.all(bases.map((b) => readiness(b)));
    return r.every((x) => x.nodes >= min && x.nodes === r[0]!.nodes && x.root === r[0]!.root) ? r[0]! : null;
  });
}

const countBy = <T>(xs: T[], key: (x: T) => string): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const x of xs) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
};

/** JSON paths where `a` and `b` differ (array positions written `[]`, so events can be tallied together). */
function differingPaths(a: unknown, b: unknown, path = '', out = new Set<string>()): Set<string> {
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) out.add(`${path}[] (length)`);
      for (let i = 0; i < Math.min(a.length, b.length); i++) differingPaths(a[i], b[i], `${path}[]`, out);
    } else {
      const ra = a as Record<string, unknown>;
      const rb = b as Record<string, unknown>;
      for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
        const p = path ? `${path}.${k}` : k;
        if (!(k in ra) || !(k in rb)) out.add(`${p} (${k in ra ? 'only on the first' : 'only on the second'})`);
        else differingPaths(ra[k], rb[k], p, out);
      }
      // same keys and values in another order are other bytes too
      if (out.size === 0 && JSON.stringify(Object.keys(ra)) !== JSON.stringify(Object.keys(rb))) out.add(`${path || '(top)'} (key order)`);
    }
  } else if (JSON.stringify(a) !== JSON.stringify(b)) out.add(path || '(top)');
  return out;
}

interface Comparison {
  what: string;
  compared: number;
  differing: number;
  /** Differing field -> in how many of the compared bodies it differs. */
  fields: Record<string, number>;
}

/** Compares two bodies per key, byte for byte; where they differ, names the JSON fields that do. */
function compareBodies(what: string, left: Map<number, string>, right: Map<number, string>, json: (s: string) => unknown): Comparison {
  const c: Comparison = { what, compared: 0, differing: 0, fields: {} };
  for (const [key, l] of left) {
    const r = right.get(key);
    if (r === undefined) continue;
    c.compared++;
    if (l === r) continue;
    c.differing++;
    let paths: Set<string>;
    try {
      paths = differingPaths(json(l), json(r));
    } catch {
      paths = new Set(['(not JSON)']);
    }
    if (paths.size === 0) paths.add('(framing outside the data line)');
    for (const p of paths) c.fields[p] = (c.fields[p] ?? 0) + 1;
  }
  return c;
}

const describeComparison = (c: Comparison): string =>
  c.differing === 0
    ? `${c.what}: ${c.compared} compared, all byte-identical`
    : `${c.what}: ${c.differing} of ${c.compared} differ; fields (bodies differing): ${Object.entries(c.fields).map(([f, n]) => `${f} (${n})`).join(', ')}`;

/** The JSON of an SSE event block's data line(s). */
const eventJson = (raw: string): unknown => JSON.parse(raw.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'));

const verdictEvents = (v: SseViewer): ViewerEvent[] => v.events.filter((e) => e.event === 'verdict');

/** The raw verdict events (id `from` to `to`) a replica replays to a viewer resuming at `from - 1`. */
async function resumeRange(base: string, from: number, to: number): Promise<Map<number, string>> {
  const v = viewSse(`${base}${STREAM}`, { lastEventId: String(from - 1) });
  try {
    await until(`${base} to replay events ${from}..${to}`, () => (v.failed ? Promise.reject(new Error(v.failed)) : verdictEvents(v).some((e) => Number(e.id) >= to)));
  } finally {
    v.close();
  }
  return new Map(verdictEvents(v).filter((e) => Number(e.id) <= to).map((e) => [Number(e.id), e.raw]));
}

describe('interop: two postgres-mode replicas behind haproxy (round robin, no stickiness, /health checks)', function () {
  this.timeout(120_000);
  let dir: string;
  let db: TestDatabase | undefined;
  const replicas: Partial<Record<Name, ServiceProcess>> = {};
  let lb: Haproxy | undefined;
  const figures: string[] = [];
  const base = (n: Name): string => replicas[n]!.base;
  const servers = async (): Promise<Record<string, ServerStat>> => Object.fromEntries((await lb!.servers()).map((s) => [s.name, s]));

  before(async () => {
    figures.push(`balancer: ${haproxyVersion()}`);
    dir = mkdtempSync(join(tmpdir(), 'svc-haproxy-'));
    const keyFile = join(dir, 'signing-key.pem');
    writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    db = await usePostgres();
    const env = (name: Name): Record<string, string> => ({
      SVC_LEDGER_MODE: 'postgres',
      SVC_DATABASE_URL: db!.url,
      SVC_SIGNING_KEY_FILE: keyFile,
      SVC_DATA_DIR: mkdtempSync(join(dir, `data-${name}-`)),
      // the signing pool's deadline is not under test, and this machine's 2 cores are shared
      SVC_KERNEL_DEADLINE_MS: '20000',
      // the simulated flight never ticks within the run: the ledger holds exactly the test's verdicts
      SVC_STREAM_TICK_MS: '60000',
      // the viewers read in this busy process: being dropped as slow is tested in test/stream
      SVC_STREAM_SEND_BUFFER_BYTES: String(64 * 1024 * 1024),
    });
    // each kept as soon as it runs, so `after` stops it even when the other one fails to start
    await Promise.all((['a', 'b'] as const).map(async (n) => (replicas[n] = await startService(env(n)))));
    lb = await startHaproxy({ dir, servers: { a: base('a'), b: base('b') }, healthPath: `${API}/health`, ...CHECK });
    await until('haproxy to see both replicas UP', async () => Object.values(await servers()).filter((s) => s.status === 'UP').length === 2);
  });

  after(async () => {
    await lb?.stop();
    await Promise.all(Object.values(replicas).map((r) => (r.child.exitCode === null && r.child.signalCode === null ? killService(r) : undefined)));
    await db?.release();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // in the order of the brief's parts (the kill runs last: it leaves one replica)
    const part = (f: string): number => Number(/^(\d+)\./.exec(f)?.[1] ?? 0);
    console.log(`\n      ${figures.sort((x, y) => part(x) - part(y)).join('\n      ')}\n`);
  });

  it('2 x 200 concurrent verdicts through haproxy: every answer 200, one chain 0..N-1 on both replicas, one root', async () => {
    const N = 400;
    const started = performance.now();
    const client = (from: number): Promise<Answer[]> => Promise.all(Array.from({ length: N / 2 }, (_, k) => post(lb!.base, from + k)));
    const answers = (await Promise.all([client(0), client(N / 2)])).flat();
    const ms = performance.now() - started;
    expect(answers.filter((x) => x.status !== 200).map((x) => `${x.status} via ${x.servedBy}`), 'every verdict answered 200').to.deep.equal([]);
    const via = countBy(answers, (x) => String(x.servedBy));
    expect(Object.keys(via).sort(), 'round robin reached both replicas').to.deep.equal(['a', 'b']);
    expect(answers.map((x) => x.index!).sort((p, q) => p - q), 'the answered indices are 0..N-1, each once').to.deep.equal(Array.from({ length: N }, (_, i) => i));
    figures.push(`1. verdicts through haproxy: ${N} (2 clients x ${N / 2} concurrent) in ${Math.round(ms)} ms = ${Math.round((N / ms) * 1000)} req/s; served by a: ${via.a}, b: ${via.b}`);

    const ready = await settled([base('a'), base('b')], N);
    expect(ready.nodes, 'nothing but the test\'s verdicts was appended').to.equal(N);
    // the stored chain, recomputed independently: contiguous, linked, and the root both replicas report
    const c = new pg.Client({ connectionString: db!.url });
    await c.connect();
    const { rows } = await c.query<{ idx: string; prev: Buffer; digest: Buffer; pae_sha256: Buffer; payload: Buffer }>('SELECT idx, prev, digest, pae_sha256, payload FROM ledger_node ORDER BY idx').finally(() => c.end());
    expect(rows.map((r) => Number(r.idx))).to.deep.equal(Array.from({ length: N }, (_, i) => i));
    let prev: Buffer = ZERO_DIGEST;
    rows.forEach((r, i) => {
      expect(r.prev.equals(prev) && nodeDigest(i, prev, r.pae_sha256).equals(r.digest), `node ${i} links to node ${i - 1}`).to.equal(true);
      prev = r.digest;
    });
    expect(merkleRoot(rows.map((r) => r.digest)).toString('hex'), 'both replicas report the recomputed root').to.equal(ready.root);
    for (const x of answers) expect(rows[x.index!]!.payload.toString('base64'), `node ${x.index} holds the receipt its answer carried`).to.equal(x.payload);
    // each replica serves the same leaves at the same indices (C2SP entry bundles: one full, one partial)
    for (const tile of ['entries/000', `entries/001.p/${N - 256}`]) {
      const [ta, tb] = await Promise.all([base('a'), base('b')].map(async (b) => Buffer.from(await (await fetch(`${b}${API}/ledger/tile/${tile}`)).arrayBuffer())));
      expect(ta!.length, `${tile} size`).to.be.greaterThan(0);
      expect(ta!.equals(tb!), `${tile} is the same on both replicas`).to.equal(true);
    }
    figures.push(`1. one chain: indices 0..${N - 1} on both replicas, root ${ready.root!.slice(0, 16)}..., entry bundles byte-identical`);
  });

  it('stream events (resumed and live) and GET /edge/3d are byte-identical whichever replica answers', async () => {
    const start = (await settled([base('a'), base('b')], 0)).nodes;
    const burst = (from: number): Promise<Answer[]> => Promise.all(Array.from({ length: 100 }, (_, k) => post(lb!.base, 1000 + from + k)));

    // the same range resumed with Last-Event-ID from each replica: verdicts nobody watched as they were appended
    const quiet = await burst(start);
    expect(quiet.filter((x) => x.status !== 200).length, 'verdicts answered 200').to.equal(0);
    await settled([base('a'), base('b')], start + 100);
    const [ra, rb] = await Promise.all([resumeRange(base('a'), start, start + 99), resumeRange(base('b'), start, start + 99)]);
    expect([ra.size, rb.size], 'every event of the range replayed by each replica').to.deep.equal([100, 100]);
    const resumed = compareBodies(`SSE events ${start}..${start + 99} resumed with Last-Event-ID`, ra, rb, eventJson);

    // live: a viewer straight on each replica while verdicts go through the balancer
    const viewers = [viewSse(`${base('a')}${STREAM}`), viewSse(`${base('b')}${STREAM}`)];
    let live: Comparison;
    try {
      await until('both direct viewers to be attached', () => viewers.every((v) => v.connections[0]?.status === 200));
      const next = start + 100;
      const loud = await burst(next);
      expect(loud.filter((x) => x.status !== 200).length, 'verdicts answered 200').to.equal(0);
      await until('both direct viewers to receive the burst', () => viewers.every((v) => verdictEvents(v).filter((e) => Number(e.id) >= next).length >= 100));
      const [la, lb2] = viewers.map((v) => new Map(verdictEvents(v).filter((e) => Number(e.id) >= next).map((e) => [Number(e.id), e.raw])));
      live = compareBodies(`SSE events ${next}..${next + 99} live`, la!, lb2!, eventJson);
    } finally {
      for (const v of viewers) v.close();
    }

    // the edge scene once both replicas hold the same ledger
    const size = (await settled([base('a'), base('b')], start + 200)).nodes;
    const scenes = await Promise.all([base('a'), base('b')].map(async (b) => (await fetch(`${b}${API}/edge/3d`)).text()));
    const edge = compareBodies(`GET /edge/3d at ledger size ${size}`, new Map([[0, scenes[0]!]]), new Map([[0, scenes[1]!]]), JSON.parse);

    const all = [resumed, live, edge];
    for (const c of all) figures.push(`2. ${describeComparison(c)}`);
    expect(all.map(describeComparison), 'replicas answer the same bytes').to.deep.equal(all.map((c) => `${c.what}: ${c.compared} compared, all byte-identical`));
  });

  it('a database outage: appends are refused while it lasts, and both replicas return to service in haproxy by themselves', async () => {
    const pids = [replicas.a!.child.pid, replicas.b!.child.pid];
    const during: Answer[] = [];
    let health: string[] = [];
    let healthOk: boolean[] = [];
    let lbView: Record<string, ServerStat> = {};
    const downsBefore = await servers();
    await db!.stopServer();
    try {
      await until('both replicas to report the store UNAVAILABLE', async () => (await Promise.all([base('a'), base('b')].map((b) => readiness(b)))).every((r) => r.status === 503 && r.state === 'UNAVAILABLE'));
      // what /health answers while the store is unavailable, straight from each replica
      const probes = await Promise.all([base('a'), base('b')].map(async (b) => {
        const res = await fetch(`${b}${API}/health`);
        const body = (await res.json()) as { status: string; checks: Record<string, { status: string; output?: string }> };
        return { code: res.status, text: `HTTP ${res.status} ${body.status} (ledger:store ${body.checks['ledger:store']?.status}: ${body.checks['ledger:store']?.output})` };
      }));
      health = probes.map((p) => p.text);
      healthOk = probes.map((p) => p.code === 200);
      if (healthOk.some((ok) => !ok)) {
        // the checks fail: haproxy takes the failing replicas out of service
        await until('haproxy to mark the replicas whose /health fails DOWN', async () => {
          lbView = await servers();
          return healthOk.every((ok, i) => ok || lbView[i === 0 ? 'a' : 'b']?.status === 'DOWN');
        });
      }
      // appends through the balancer are refused (503) while the database is away, from whichever replica stays in service
      await until('appends through haproxy to be refused during the outage', async () => {
        during.push(...(await Promise.all([1, 2, 3, 4].map((k) => post(lb!.base, 5000 + during.length + k)))));
        const from = countBy(during.filter((x) => x.status === 503 && x.servedBy), (x) => x.servedBy!);
        return healthOk.every((ok, i) => !ok || (from[i === 0 ? 'a' : 'b'] ?? 0) > 0);
      });
      lbView = await servers();
    } finally {
      await db!.startServer();
    }
    const backAt = Date.now();
    const statuses = countBy(during, (x) => String(x.status));
    expect(Object.keys(statuses), `answers through haproxy during the outage: ${JSON.stringify(statuses)}`).to.deep.equal(['503']);
    for (const x of during.filter((y) => y.servedBy)) expect(Number(x.retryAfter), 'a replica\'s 503 says when to retry').to.be.above(0);

    // back: both replicas serve appends through the balancer again, with no restart
    const recovered: Partial<Record<Name, number>> = {};
    let k = 6000;
    await until('both replicas to answer 200 through haproxy and be UP in it', async () => {
      const batch = await Promise.all([0, 1, 2, 3].map(() => post(lb!.base, k++)));
      for (const x of batch) if (x.status === 200 && (x.servedBy === 'a' || x.servedBy === 'b')) recovered[x.servedBy] ??= Date.now() - backAt;
      const up = Object.values(await servers()).filter((s) => s.status === 'UP').length;
      return recovered.a !== undefined && recovered.b !== undefined && up === 2;
    }, 30_000);
    const recoveryMs = Date.now() - backAt;
    expect([replicas.a!.child.pid, replicas.b!.child.pid], 'the same processes, never restarted').to.deep.equal(pids);
    expect([replicas.a!.child.exitCode, replicas.b!.child.exitCode]).to.deep.equal([null, null]);
    const ready = await settled([base('a'), base('b')], 0);
    expect(ready.state).to.equal('READY');
    figures.push(`4. /health during the outage: a: ${health[0]}; b: ${health[1]}`);
    figures.push(`4. haproxy during the outage: ${Object.values(lbView).map((s) => `${s.name} ${s.status} (last check ${s.checkStatus}, went DOWN ${s.downs - (downsBefore[s.name]?.downs ?? 0)} times)`).join(', ')}; appends through it: ${JSON.stringify(statuses)} (from ${JSON.stringify(countBy(during, (x) => String(x.servedBy)))})`);
    figures.push(`4. outage recovery: both replicas UP and appending through haproxy ${recoveryMs} ms after PostgreSQL was back (first 200 from a after ${recovered.a} ms, from b after ${recovered.b} ms), no restart`);
  });

  it('a viewer on the balancer whose replica is SIGKILLed resumes on the survivor with Last-Event-ID: no gap, no duplicate', async () => {
    const viewer = viewSse(`${lb!.base}${STREAM}`, { tagHeader: SERVED_BY });
    const answers: Answer[] = [];
    let stop = false;
    let load: Promise<void> = Promise.resolve();
    try {
      await until('the viewer to be attached through haproxy', () => (viewer.failed ? Promise.reject(new Error(viewer.failed)) : viewer.connections[0]?.status === 200));
      const first = viewer.connections[0]!.tag as Name;
      expect(first, 'haproxy names the replica it picked').to.be.oneOf(['a', 'b']);
      const survivor: Name = first === 'a' ? 'b' : 'a';
      let k = 100_000;
      load = (async () => {
        while (!stop) answers.push(...(await Promise.all(Array.from({ length: 8 }, () => post(lb!.base, k++)))));
      })();
      await until('the viewer to receive verdicts before the kill', () => verdictEvents(viewer).length >= 30);
      const retryMs = viewer.retryMs;
      const killedAt = Date.now();
      await killService(replicas[first]!);
      const killedBy = Date.now();
      await until('the viewer to resume through haproxy and receive verdicts again', () =>
        viewer.failed ? Promise.reject(new Error(`the viewer gave up: ${viewer.failed}`)) : verdictEvents(viewer).some((e) => e.connection > 0),
      );
      const resumed = viewer.connections[1]!;
      const gapMs = verdictEvents(viewer).find((e) => e.connection > 0)!.at - killedAt;
      await until('verdicts answered 200 after the resume', () => answers.filter((x) => x.status === 200 && x.sentAt > resumed.openedAt).length >= 40);
      stop = true;
      await load;
      const answered = answers.filter((x) => x.status === 200);
      const last = Math.max(...answered.map((x) => x.index!));
      await until(`the viewer to receive the last answered verdict ${last}`, () =>
        viewer.failed ? Promise.reject(new Error(`the viewer gave up: ${viewer.failed}`)) : verdictEvents(viewer).some((e) => Number(e.id) >= last),
      );
      viewer.close();

      const events = verdictEvents(viewer);
      const ids = events.map((e) => Number(e.id));
      let gaps = 0;
      let duplicates = 0;
      for (let i = 1; i < ids.length; i++) {
        if (ids[i]! <= ids[i - 1]!) duplicates++;
        else if (ids[i]! > ids[i - 1]! + 1) gaps += ids[i]! - ids[i - 1]! - 1;
      }
      const lastBefore = events.filter((e) => e.connection === 0).at(-1)!;
      const firstAfter = events.find((e) => e.connection > 0)!;
      const statuses = countBy(answers, (x) => String(x.status));
      const lost = answers.filter((x) => x.status !== 200);
      figures.push(
        `3. failover: SIGKILLed ${first}, the replica of a viewer on the balancer; it resumed on ${resumed.tag} with Last-Event-ID ${resumed.lastEventId} ` +
          `after retry: ${retryMs} ms, its first event after the kill ${gapMs} ms later, then caught up over ${viewer.connections.length - 2} more resumes ` +
          `(a replay ends at its byte budget with event: catchup); ids ${ids[0]}..${ids.at(-1)}: gap ${gaps}, duplicates ${duplicates}`,
      );
      figures.push(
        `3. verdicts posted through haproxy meanwhile: ${answers.length}, answers ${JSON.stringify(statuses)}` +
          (lost.length ? `; the ${lost.length} not answered 200 were in flight on ${first} when it died (${[...new Set(lost.map((x) => (x.status ? `HTTP ${x.status}` : x.error)))].join(', ')})` : ''),
      );
      expect(duplicates, 'event ids received twice').to.equal(0);
      expect(gaps, 'event ids never received').to.equal(0);
      expect(viewer.connections.slice(1).map((c) => `${c.status} ${c.tag}`), 'every later connection went to the survivor').to.deep.equal(viewer.connections.slice(1).map(() => `200 ${survivor}`));
      expect(resumed.lastEventId, 'it resumed from the last id it had').to.equal(lastBefore.id);
      expect(Number(firstAfter.id), 'the survivor carried on at the next id').to.equal(Number(lastBefore.id) + 1);
      const seen = new Set(ids);
      expect(answered.filter((x) => x.index! >= ids[0]! && !seen.has(x.index!)).map((x) => x.index), 'every verdict answered 200 reached the viewer').to.deep.equal([]);
      // a request in flight on the killed replica loses its answer (haproxy's 502, or the connection
      // closed without one, as the replica's own would be); once it is dead, every request succeeds
      expect(lost.filter((x) => x.sentAt > killedBy || (x.status !== 502 && x.status !== 0)).map((x) => `${x.status || x.error} sent ${x.sentAt - killedAt} ms after the kill`), 'failed answers').to.deep.equal([]);
    } finally {
      stop = true;
      await load;
      viewer.close();
    }
  });
});
