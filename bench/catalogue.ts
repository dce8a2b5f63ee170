/**
 * Every scenario `npm run bench` knows: its name, its one-line title, and what it does against a
 * running deployment (`--target`). Kept free of imports so `--help` and argument errors answer
 * before anything heavy loads.
 */

/**
 * Against a target: `full` runs as it does locally; `absolute` runs the service's rows only (its
 * local baselines need servers of ours, so no ratio); `refused` cannot run remotely at all.
 */
export type TargetSupport = { mode: 'full' | 'absolute'; what: string } | { mode: 'refused'; why: string };

export interface ScenarioInfo {
  name: string;
  title: string;
  target: TargetSupport;
  /** Runs only when named (too long for a run of everything). */
  onlyWhenNamed?: boolean;
}

export const CATALOGUE: readonly ScenarioInfo[] = [
  {
    name: 'http',
    title: 'an unknown path (404), /doctrine and /health against bare node:http, bare Koa + @koa/router and bare Koa sending the same bytes; the 404 with the access log on',
    target: { mode: 'absolute', what: 'GET of the 404, /doctrine and /health' },
  },
  {
    name: 'kernels',
    title: "kernels at defaults over HTTP, against the same task in a bare pool (no HTTP) and behind a bare Koa route on a bare pool; at the service's pool size, then with one core kept for HTTP and the load generator",
    target: { mode: 'absolute', what: 'GET of three kernel routes at their defaults' },
  },
  {
    name: 'verdicts',
    title: 'POST /verdict (evaluate, sign in the pool, append, answer with proof) against the Koa hello and GET /health; again at four times the connections',
    target: { mode: 'absolute', what: 'POST /verdict with varied frames, at BENCH_CONNECTIONS and four times as many' },
  },
  {
    name: 'saturation',
    title: '/health latency idle vs while a heavy kernel saturates the pool (the main thread must stay responsive), and a bare Koa hello probed the same way',
    target: { mode: 'absolute', what: '/health idle and while a heavy kernel saturates the pool; no Koa hello' },
  },
  {
    name: 'overload',
    title: 'the worst-case kernel at 4x its capacity: successes kept, the rest shed with 503; /health p99; verdicts during the flood; retry storms and hostile clients',
    target: { mode: 'refused', why: 'it floods at four times capacity and runs hostile clients; run it against a local service' },
  },
  {
    name: 'sse',
    title: 'BENCH_SSE_VIEWERS viewers (default 2000) on one /stream/verdicts: event age at arrival, fan-out spread, missed deliveries, the service RSS',
    target: { mode: 'full', what: 'the same viewers on the target stream (RSS and server fan-out only when its /metrics answers)' },
  },
  {
    name: 'ledger',
    title: 'POST /verdict by ledger mode (memory, file, postgres) in one run, and the start-up replay of a BENCH_LEDGER_NODES-node file ledger',
    target: { mode: 'absolute', what: 'the ledger routes instead: receipt export, receipt proof, checkpoint, hash tiles' },
  },
  {
    name: 'ledger-memory',
    title: 'bytes of memory per ledger node in memory mode (in this process)',
    target: { mode: 'refused', why: 'it measures a ledger in the bench process, not a deployment' },
  },
  {
    name: 'ledger-scale',
    title: 'the file ledger at LEDGER_SCALE_ENTRIES entries against an empty log: start-up, memory, verdicts, proofs, tiles, fsck (only when named; builds take minutes)',
    target: { mode: 'refused', why: 'it builds data directories and starts services on them' },
    onlyWhenNamed: true,
  },
  {
    name: 'warmup',
    title: 'start-up to ready with pool.warmup on and off, and the first call of each kernel in a fresh thread against its warm calls',
    target: { mode: 'refused', why: 'it times services it starts, and threads in the bench process' },
  },
  {
    name: 'admission',
    title: "admission efficiency: spin tasks at 4x a 2-thread pool's capacity, in this process",
    target: { mode: 'refused', why: 'it measures a pool in the bench process, not a deployment' },
  },
  {
    name: 'signing',
    title: 'signatures per second: the batched pool signer against a plain crypto.sign loop, in this process',
    target: { mode: 'refused', why: 'it measures signing in the bench process, not a deployment' },
  },
];

export const NAMES: readonly string[] = CATALOGUE.map((s) => s.name);

export function scenarioInfo(name: string): ScenarioInfo {
  const info = CATALOGUE.find((s) => s.name === name);
  if (!info) throw new Error(`no scenario ${name}`);
  return info;
}

/** The environment variables the benches read, with what each sets. */
export const ENV_VARS: readonly (readonly [string, string])[] = [
  ['BENCH_DURATION', 'seconds per load (default 10)'],
  ['BENCH_CONNECTIONS', 'autocannon connections per load (default 50)'],
  ['BENCH_RESULTS_DIR', 'where the JSON report goes (default bench/results)'],
  ['BENCH_SSE_VIEWERS', 'sse: viewers on the stream (default 2000)'],
  ['BENCH_LEDGER_NODES', 'ledger: nodes of the replayed file ledger (default 100000)'],
  ['BENCH_WARMUP_ROUNDS', 'warmup: fresh threads per measurement (default 3)'],
  ['BENCH_SIGNATURES', 'signing: signatures per measurement (default 20000)'],
  ['SVC_TEST_DATABASE_URL', 'ledger: a PostgreSQL to use instead of the embedded one'],
  ['LEDGER_SCALE_ENTRIES', 'ledger-scale: sizes, comma-separated (default 10000,10000000)'],
  ['LEDGER_SCALE_DIR', 'ledger-scale: where the built directories are kept (default <tmpdir>/svc-ledger-scale)'],
  ['LEDGER_SCALE_REBUILD_BELOW', 'ledger-scale: grown directories under this size are rebuilt (default 1000000)'],
  ['LEDGER_SCALE_START_TIMEOUT_S', 'ledger-scale: seconds a start may take (default 1800)'],
  ['LEDGER_SCALE_BACKGROUND_FSCK', 'ledger-scale: 1 keeps the check at start on (default off)'],
  ['LEDGER_SCALE_FSCK', 'ledger-scale: 0 skips the offline fsck'],
];
