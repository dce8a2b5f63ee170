/** Load scenarios. Each returns rows; a ratio compares with a baseline measured in the same run. */
import { get } from 'node:http';
import { availableParallelism } from 'node:os';
import { CONNECTIONS, describeStages, DURATION_S, load, minorGcSeconds, paced, scrapeMetrics, startKoaHello, startService, verdictStages, warm, type Server, type Summary, VERDICT_FRAME as FRAME } from './lib.js';
import { poolBaseline, servicePool, type BaselinePool } from './pool-baseline.js';
import { ATTACKS, healthDuring, retryingFlood, type RetryingFlood } from './hostile.js';

export interface Servers {
  koa: Server;
  bare: Server;
  svc: Server;
}

type Row = Summary & { ratio?: number; vs?: string };

/** A local scenario; its title and what it does against a target are in catalogue.ts. */
export interface Scenario {
  name: string;
  run(s: Servers): Promise<Row[]>;
}

const ratio = (row: Summary, base: Summary, vs: string): Row => ({ ...row, ratio: row.reqPerSec / base.reqPerSec, vs });
/** Like ratio(), counting only the 2xx answers: a refusal is quick and must not pass for throughput. */
const okRatio = (row: Summary, base: Summary, vs: string): Row => ({
  ...row,
  ratio: (row.reqPerSec * (1 - row.non2xx / Math.max(row.requests, 1))) / base.reqPerSec,
  vs: `2xx ${vs}`,
});
/** A row's p99 over a baseline's (a p99 of 0 counts as 1 µs). */
export const p99Ratio = (row: Summary, base: Summary, vs: string): Row => ({ ...row, ratio: row.p99 / Math.max(base.p99, 0.001), vs });

/**
 * A baseline measured before and after the rows compared with it (A-B-A): this machine's speed
 * drifts by a quarter from minute to minute, and a ratio to one side only measures the drift as
 * much as the service. Ratios use the mean of the two; both runs are listed.
 */
const bracketed = (before: Summary, after: Summary): Summary => ({ ...before, reqPerSec: (before.reqPerSec + after.reqPerSec) / 2 });

/** A load whose label also says what the service's /metrics moved by over it (scraped before and after). */
async function annotated(base: string, run: () => Promise<Summary>, describe: (before: Map<string, number>, after: Map<string, number>, r: Summary) => string): Promise<Summary> {
  const before = await scrapeMetrics(base);
  const r = await run();
  return { ...r, label: `${r.label} [${describe(before, await scrapeMetrics(base), r)}]` };
}

/** A verdict load, with what its verdicts waited for outside the main thread (the service's stage histograms). */
const stagesOf = (base: string, run: () => Promise<Summary>): Promise<Summary> => annotated(base, run, (a, b) => describeStages(verdictStages(a), verdictStages(b)));

/** A load, with the service's main-thread minor-GC time per answer over it. */
const minorGcOf = (base: string, run: () => Promise<Summary>): Promise<Summary> =>
  annotated(base, run, (a, b, r) => `minor GC ${(((minorGcSeconds(b) - minorGcSeconds(a)) * 1e6) / Math.max(1, r.requests)).toFixed(1)} µs a call`);

export const KERNEL = '/api/svc/v1/ssm/scan';
/** The http scenario's routes: the unknown path measures the middleware chain alone; /doctrine adds a static handler. */
export const ROUTES = [
  ['GET unknown path (404)', '/api/svc/v1/no-such-route', 'the 404'],
  ['GET /api/svc/v1/doctrine', '/api/svc/v1/doctrine', '/doctrine'],
  ['GET /api/svc/v1/health', '/api/svc/v1/health', '/health'],
] as const;
/** Headers Node or Koa set on any answer: the replayed answer gets its own. */
const SET_BY_SERVER = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type']);

/** One answer of the service, as the baseline server replays it: status, headers as sent (names in their case), body. */
function capture(url: string): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (!SET_BY_SERVER.has(res.rawHeaders[i]!.toLowerCase())) headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        }
        resolve({ status: res.statusCode!, headers, body });
      });
    }).on('error', reject);
  });
}

async function register(url: string, answer: Awaited<ReturnType<typeof capture>>): Promise<void> {
  const res = await fetch(url, { method: 'PUT', body: JSON.stringify(answer) });
  if (res.status !== 204) throw new Error(`registering ${url}: ${res.status}`);
}
/** Health probes per second in the overload scenario. */
export const HEALTH_RATE = 200;


/** The kernels scenario's routes: kernel id and path. */
export const KERNEL_ROUTES = [
  ['ssm/scan', KERNEL],
  ['ternary/quantize', '/api/svc/v1/ternary/quantize'],
  ['blt/entropy-patch', '/api/svc/v1/blt/entropy-patch'],
] as const;

/**
 * Two of the lightest kernels (where per-request overhead shows most) and one of median cost at
 * defaults in the README's kernel table, each over HTTP and against the same task in a bare pool
 * of `shape` (no HTTP) and behind a bare Koa route on such a pool, both bracketing the route.
 */
async function kernelRows(koa: Server, svc: Server, shape: BaselinePool, suffix: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [id, path] of KERNEL_ROUTES) {
    await warm(`${svc.base}${path}`);
    // the effective parameters the route runs with, so both baselines run exactly the same task
    const params = ((await (await fetch(`${svc.base}${path}`)).json()) as { params: Record<string, unknown> }).params;
    const koaPool = `${koa.base}/pool?task=${encodeURIComponent(JSON.stringify({ kind: 'kernel', id, params }))}`;
    await warm(koaPool);
    const bare1 = await poolBaseline(`baseline bare pool ${id}${suffix} (in-process, before)`, id, params, shape);
    const koa1 = await load(`baseline koa route on a bare pool, ${id}${suffix} (before)`, { url: koaPool });
    const http = await minorGcOf(svc.base, () => load(`GET ${path} (defaults)${suffix}`, { url: `${svc.base}${path}` }));
    const koa2 = await load(`baseline koa route on a bare pool, ${id}${suffix} (after)`, { url: koaPool });
    const bare2 = await poolBaseline(`baseline bare pool ${id}${suffix} (in-process, after)`, id, params, shape);
    rows.push(
      bare1,
      bare2,
      koa1,
      koa2,
      ratio(http, bracketed(bare1, bare2), 'vs bare pool (mean)'),
      ratio({ ...http, label: `↳ GET ${path}${suffix} against the Koa route` }, bracketed(koa1, koa2), 'vs koa + bare pool (mean)'),
    );
  }
  return rows;
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'http',
    async run({ koa, bare, svc }) {
      await warm(`${bare.base}/`);
      await warm(`${koa.base}/hello`);
      const b = await load('baseline node:http hello', { url: `${bare.base}/` });
      const k1 = await load('baseline koa+router hello (before)', { url: `${koa.base}/hello` });
      const rows: Row[] = [b, ratio(k1, b, 'vs node:http')];
      const measured: Summary[] = [];
      for (const [label, path] of ROUTES) {
        await warm(`${svc.base}${path}`);
        measured.push(await load(label, { url: `${svc.base}${path}` }));
      }
      const k2 = await load('baseline koa+router hello (after)', { url: `${koa.base}/hello` });
      const k = bracketed(k1, k2);
      rows.push(k2, ...measured.map((row) => ratio(row, k, 'vs koa+router (mean)')));
      // the hello answers 17 bytes and two headers of its own; the service's answers carry a
      // request id, a traceparent, five security headers and bodies up to 3 KB. The same answer
      // replayed by bare Koa tells what of the gap is the bytes (their headers set through Koa,
      // the loopback, the generator's parsing) and what is the service's code
      for (const [i, [, path, short]] of ROUTES.entries()) {
        await register(`${koa.base}/answer/${i}`, await capture(`${svc.base}${path}`));
        await warm(`${koa.base}/answer/${i}`);
        const same = await load(`baseline koa+router, ${short}'s bytes`, { url: `${koa.base}/answer/${i}` });
        rows.push(ratio(same, k, 'vs koa+router (mean)'), ratio({ ...measured[i]!, label: `↳ ${short} against the same bytes` }, same, 'vs same bytes'));
      }
      // every service above runs at warn; at the default level each answer is also a log line
      // (to /dev/null here: what the line costs the service, not what a disk or a pipe costs)
      const logged = await startService('service (LOG_LEVEL=info)', { LOG_LEVEL: 'info' });
      try {
        const url = `${logged.base}${ROUTES[0][1]}`;
        await warm(url);
        rows.push(ratio(await load('GET unknown path (404), access log on', { url }), measured[0]!, 'vs the 404 at warn'));
      } finally {
        await logged.stop();
      }
      return rows;
    },
  },
  {
    name: 'kernels',
    async run({ koa, svc }) {
      const rows = await kernelRows(koa, svc, servicePool(), '');
      // With as many kernel threads as cores, the HTTP front end and the load generator (on the
      // same machine) take their CPU from the kernels, which the in-process baseline never pays:
      // the ratio then measures the machine more than the service. One thread fewer, for the
      // service and both baselines alike, leaves them a core, so the ratio is what the service adds.
      const shape = { ...servicePool(), threads: Math.max(1, availableParallelism() - 1) };
      const spareKoa = await startKoaHello('koa-hello (pool one thread smaller)', shape);
      try {
        const spareSvc = await startService('service (pool one thread smaller)', { SVC_POOL_THREADS: String(shape.threads) });
        try {
          rows.push(...(await kernelRows(spareKoa, spareSvc, shape, `, ${shape.threads} of ${availableParallelism()} cores`)));
        } finally {
          await spareSvc.stop();
        }
      } finally {
        await spareKoa.stop();
      }
      return rows;
    },
  },
  {
    name: 'verdicts',
    async run({ koa, svc }) {
      const post = { url: `${svc.base}/api/svc/v1/verdict`, method: 'POST' as const, body: FRAME, headers: { 'content-type': 'application/json' } };
      await warm(post.url, post);
      const k1 = await load('baseline koa+router hello (before)', { url: `${koa.base}/hello` });
      const h = await load('GET /api/svc/v1/health', { url: `${svc.base}/api/svc/v1/health` });
      const v = await stagesOf(svc.base, () => load('POST /api/svc/v1/verdict', post));
      const k2 = await load('baseline koa+router hello (after)', { url: `${koa.base}/hello` });
      const k = bracketed(k1, k2);
      // a verdict's answer waits for its signing batch and its durable group commit: with more
      // clients the batches grow and cost less each, where the hello gains nothing
      const many = 4 * CONNECTIONS;
      const m1 = await load(`baseline koa+router hello, ${many} connections (before)`, { url: `${koa.base}/hello`, connections: many });
      const vm = await stagesOf(svc.base, () => load(`POST /api/svc/v1/verdict, ${many} connections`, { ...post, connections: many }));
      const m2 = await load(`baseline koa+router hello, ${many} connections (after)`, { url: `${koa.base}/hello`, connections: many });
      return [k1, k2, ratio(h, k, 'vs koa+router (mean)'), okRatio(v, k, 'vs koa+router (mean)'), m1, m2, okRatio(vm, bracketed(m1, m2), 'vs koa+router (mean)')];
    },
  },
  {
    name: 'saturation',
    async run({ svc, koa }) {
      // autocannon keeps whole milliseconds, and a closed loop of probes is a flood of its own:
      // the ratio is taken from paced probes (timed to the microsecond, as a health checker sends
      // them); the closed-loop rows are kept for throughput
      const probe = { url: `${svc.base}/api/svc/v1/health`, connections: 4 };
      const paced4 = { ...probe, ratePerS: HEALTH_RATE };
      const idle = await load('/health, idle (4 connections)', probe);
      const idlePaced = await paced(`/health, idle (${HEALTH_RATE}/s paced)`, paced4);
      const heavy = `${svc.base}${KERNEL}?seq_len=2048&state_dim=16`;
      const saturating = (label: string) => load(label, { url: heavy, connections: 32 });
      const [busy, kernel] = await Promise.all([load('/health, pool saturated (4 connections)', probe), saturating(`${KERNEL} 2048x16 saturating (32 conn)`)]);
      const [busyPaced] = await Promise.all([paced(`/health, pool saturated (${HEALTH_RATE}/s paced)`, paced4), saturating(`${KERNEL} 2048x16 saturating again (32 conn)`)]);
      // the same probes to the bare Koa hello (another process, nice 0) while the service's kernels
      // saturate the cores: what two busy cores cost any server's tail on this machine, the main
      // thread's work aside
      const koaPaced = { url: `${koa.base}/hello`, connections: 4, ratePerS: HEALTH_RATE };
      const koaIdle = await paced(`baseline koa hello, idle (${HEALTH_RATE}/s paced)`, koaPaced);
      const [koaBusy] = await Promise.all([paced(`baseline koa hello, service's pool saturated (${HEALTH_RATE}/s paced)`, koaPaced), saturating(`${KERNEL} 2048x16 saturating a third time (32 conn)`)]);
      // the probes timed from their send: the prober's own timer lateness (~0.5 ms at the median,
      // the same idle or busy) flattens the ratio from when they were due
      const sendTimed = (r: Summary, label: string): Summary => ({ ...r, label, ...r.fromSend!, fixedRate: { ...r.fixedRate!, latency: 'from-send' } });
      const idleSent = sendTimed(idlePaced, '↳ idle, timed from each send');
      return [
        idle,
        // a whole-millisecond p99 of 0 (a quiet machine) has no ratio
        idle.p99 >= 1 ? p99Ratio(busy, idle, 'p99 vs idle (whole ms)') : busy,
        kernel,
        idlePaced,
        p99Ratio(busyPaced, idlePaced, 'p99 vs idle'),
        idleSent,
        p99Ratio(sendTimed(busyPaced, '↳ pool saturated, timed from each send'), idleSent, 'p99 vs idle'),
        koaIdle,
        p99Ratio(koaBusy, koaIdle, 'p99 vs idle'),
        p99Ratio({ ...busyPaced, label: '↳ /health saturated against the koa hello under the same load' }, koaBusy, 'p99 vs koa'),
      ];
    },
  },
  {
    name: 'overload',
    async run({ svc }) {
      const heavy = `${svc.base}/api/svc/v1/mla/latent-compress?seq_len=256&n_heads=16&d_head=64&d_latent=256`;
      await warm(heavy, { connections: 2 });
      // /health is probed at a steady rate, as a health checker does: a closed loop of /health as
      // fast as it is answered is a second flood (the http scenario), which on two cores takes a
      // core from the kernels and measures CPU share, not how long a probe waits. Probes and the
      // flood are open-loop and evenly spaced (paced(): autocannon's rate limit sends in bursts)
      const health = { url: `${svc.base}/api/svc/v1/health`, connections: 4, ratePerS: HEALTH_RATE };
      const idle = await paced(`/health, idle (${HEALTH_RATE}/s, 4 conn)`, health);
      // capacity: as many in flight as there are kernel threads, nothing queued
      const cap = await load('worst-case mla, capacity (2 connections)', { url: heavy, connections: 2 });
      const capacity = (cap.status['200'] ?? 0) / DURATION_S;
      const rate = Math.max(1, Math.round(capacity * 4));
      const [over, busy] = await Promise.all([
        paced(`worst-case mla at 4x capacity (${rate}/s, 200 conn)`, { url: heavy, connections: 200, ratePerS: rate }),
        paced(`/health during the overload (${HEALTH_RATE}/s, 4 conn)`, health),
      ]);
      // capacity again right after: on a machine shared with other work it drifts between runs,
      // so the flood is compared with the mean of the runs either side of it
      const capAfter = await load('worst-case mla, capacity again (2 connections)', { url: heavy, connections: 2 });
      const capacityAfter = (capAfter.status['200'] ?? 0) / DURATION_S;
      const kept = (over.status['200'] ?? 0) / DURATION_S / Math.max((capacity + capacityAfter) / 2, 1e-9);
      const post = { url: `${svc.base}/api/svc/v1/verdict`, method: 'POST' as const, body: FRAME, headers: { 'content-type': 'application/json' }, connections: 4 };
      const [, verdicts] = await Promise.all([
        paced(`worst-case mla flood (${rate}/s, 200 conn)`, { url: heavy, connections: 200, ratePerS: rate }),
        load('POST /verdict during a kernel flood (4 connections)', post),
      ]);
      const describe = (r: Row, extra: string): Row => ({ ...r, label: `${r.label} [${extra}]` });
      const codes = (r: Summary) => Object.entries(r.status).map(([c, n]) => `${c}:${n}`).join(' ');
      const meanCapacity = Math.max((capacity + capacityAfter) / 2, 1e-9);
      // clients that resend a shed call at once, ignoring Retry-After: goodput against capacity
      const storms: Row[] = [];
      for (const clients of [16, 200]) {
        let flood: RetryingFlood | undefined;
        const h = await healthDuring(svc.base, HEALTH_RATE, `/health during ${clients} retrying clients (${HEALTH_RATE}/s)`, async () => (flood = await retryingFlood(heavy, clients)));
        const f = flood!;
        storms.push(describe({ ...h, ratio: f.goodputPer10s / 10 / meanCapacity, vs: 'goodput vs mean capacity' }, `${f.goodputPer10s.toFixed(0)} ok per 10 s, ${f.shed} shed, ${f.other} other`));
        storms.push(p99Ratio({ ...h, label: '↳ /health p99' }, idle, 'p99 vs idle'));
      }
      // the attacks the hostile-client tests bound, one at a time
      const attacks: Row[] = [];
      for (const attack of ATTACKS) {
        const h = await healthDuring(svc.base, HEALTH_RATE, `/health during: ${attack.name}`, () => attack.run(svc.base, DURATION_S));
        attacks.push(p99Ratio(h, idle, 'p99 vs idle'));
      }
      return [
        idle,
        describe(cap, `${capacity.toFixed(1)} ok/s`),
        describe({ ...over, ratio: kept, vs: 'ok/s vs mean capacity' }, codes(over)),
        p99Ratio(busy, idle, 'p99 vs idle'),
        describe(capAfter, `${capacityAfter.toFixed(1)} ok/s`),
        describe({ ...verdicts, ratio: verdicts.max / 1000, vs: 'max latency, s' }, codes(verdicts)),
        ...storms,
        ...attacks,
      ];
    },
  },
];
