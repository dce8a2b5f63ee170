/**
 * `npm run bench -- ledger-scale` (only when named: a 10-million-entry build takes many minutes):
 * the file ledger at LEDGER_SCALE_ENTRIES entries (default 10,000 and 10,000,000) against a
 * service on an empty data directory, in the same run. Each size's directory is built once under
 * LEDGER_SCALE_DIR (default <tmpdir>/svc-ledger-scale) by bench/tools/build-ledger.ts and reused
 * while its checkpoint holds that many entries; the verdicts a run appends stay (directories under
 * LEDGER_SCALE_REBUILD_BELOW, default 1,000,000, are rebuilt once grown), so every figure is given
 * with the size the service found. Per directory: start-up to a ready ledger (median of
 * 3), memory after start and after the loads, POST /verdict, an inclusion proof (tlog-proof and
 * the DAG view), lookups by key (POST /khipu/verify of a receipt's envelope, the DAG view of a
 * node named by digest prefix) and a full tile at random indices (the tile columns read into the page cache
 * first), and `npm run ledger:fsck` with the service down.
 */
import autocannon, { type Request } from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CONNECTIONS, cpuSeconds, DURATION_S, load, printTable, scrapeMetrics, SERVICE_LOAD_ENV, summarize, VERDICT_FRAME, type Summary } from './lib.js';
import { encodeTileIndex, TILE_WIDTH } from '../src/lib/tlog-tiles.js';

const API = '/api/svc/v1';
const STARTS = 3;
const START_TIMEOUT_S = Number(process.env.LEDGER_SCALE_START_TIMEOUT_S ?? 1800);
const MB = 2 ** 20;
const REBUILD_BELOW = Number(process.env.LEDGER_SCALE_REBUILD_BELOW ?? 1_000_000);
/**
 * The check of the whole log a start from a checkpoint schedules (ledger.fsckAtStart) is off
 * unless LEDGER_SCALE_BACKGROUND_FSCK=1: at 10 million entries it runs for many minutes, and the
 * loads would measure it rather than the ledger. The offline fsck is run unless LEDGER_SCALE_FSCK=0.
 */
const BACKGROUND_FSCK = process.env.LEDGER_SCALE_BACKGROUND_FSCK === '1';
const OFFLINE_FSCK = process.env.LEDGER_SCALE_FSCK !== '0';

type Row = Summary & { ratio?: number; vs?: string; entries: number; mainCpuUsPerReq: number | null };

interface Started {
  child: ChildProcess;
  base: string;
  listeningMs: number;
  readyMs: number;
  /** The service's `ledger replayed` line: nodes opened, how long, and what else it says (where it started reading). */
  replay: Record<string, unknown> | null;
}

interface Memory {
  rssMb: number;
  heapUsedMb: number;
  externalMb: number;
}

/** Entries the directory's checkpoint names (0: none yet). */
function checkpointSize(dir: string): number {
  try {
    return Number(readFileSync(join(dir, 'checkpoint'), 'utf8').split('\n')[1]) || 0;
  } catch {
    return 0;
  }
}

/**
 * Builds (or resumes) `dir` to `entries` unless its checkpoint already holds them. A directory
 * below REBUILD_BELOW entries that earlier runs' verdicts have grown is built afresh (seconds), so
 * the reference size stays what it says; a large one is reused as it is.
 */
async function ensureBuilt(dir: string, entries: number): Promise<Record<string, unknown>> {
  if (entries < REBUILD_BELOW && checkpointSize(dir) > entries) rmSync(dir, { recursive: true, force: true });
  const had = checkpointSize(dir);
  if (had >= entries) return { dir, entries: had, reused: true };
  console.log(`\nledger-scale: building ${dir} to ${entries.toLocaleString('en-US')} entries (${had.toLocaleString('en-US')} there)`);
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/tools/build-ledger.ts', '--dir', dir, '--entries', String(entries)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let result: Record<string, unknown> | null = null;
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('build-ledger result ')) result = JSON.parse(line.slice('build-ledger result '.length)) as Record<string, unknown>;
    else console.log(line);
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0 || !result) throw new Error(`build-ledger exited with ${code}`);
  return { ...(result as Record<string, unknown>), reused: false };
}

/** Starts the built service on `dir`, timed from the spawn to its `listening` line and to a ready ledger. */
async function startOn(dir: string): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    // port 0: the `listening` line names the port (info level: the service logs no line per request)
    env: { ...process.env, ...SERVICE_LOAD_ENV, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir, SVC_LEDGER_FSCK_AT_START: String(BACKGROUND_FSCK) },
    stdio: ['ignore', 'pipe', 'inherit'],
    // its own session, as bench/lib.ts starts servers (the scheduler shares the CPU by session)
    detached: true,
  });
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  child.once('exit', () => process.off('exit', orphanGuard));
  const seen: { port: number | null; listeningMs: number; replay: Started['replay'] } = { port: null, listeningMs: NaN, replay: null };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const rec = JSON.parse(line) as { msg?: string; port?: number; level?: number; time?: number; pid?: number; hostname?: string; name?: string };
      if (rec.msg === 'listening') {
        seen.listeningMs = performance.now() - t0;
        seen.port = rec.port ?? null;
      }
      if (rec.msg === 'ledger replayed') {
        const { level: _l, time: _t, pid: _p, hostname: _h, name: _n, msg: _m, ...fields } = rec;
        seen.replay = fields;
      }
    } catch {
      // not a log line
    }
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service on ${dir} exited before its ledger was ready`);
    if (performance.now() - t0 > START_TIMEOUT_S * 1000) {
      child.kill('SIGKILL');
      throw new Error(`the service on ${dir} had no ready ledger within ${START_TIMEOUT_S} s`);
    }
    const ok =
      seen.port !== null &&
      (await fetch(`http://127.0.0.1:${seen.port}${API}/ledger/readiness`).then(
        (r) => r.ok,
        () => false,
      ));
    if (ok) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const readyMs = performance.now() - t0;
  // the replay line comes before readiness can pass; a moment for the pipe
  for (let i = 0; i < 20 && !seen.replay; i++) await new Promise((r) => setTimeout(r, 25));
  return { child, base: `http://127.0.0.1:${seen.port}`, listeningMs: seen.listeningMs, readyMs, replay: seen.replay };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** Until /health passes (the kernel threads warmed up), so the loads measure a settled service. */
async function healthy(base: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (await fetch(`${base}${API}/health`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} did not pass /health within 300 s`);
}

async function memory(base: string, pid: number): Promise<Memory> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  const m = await scrapeMetrics(base);
  // prom-client's heap figures are the main thread's isolate only (worker threads have their own)
  return { rssMb: kb / 1024, heapUsedMb: (m.get('nodejs_heap_size_used_bytes') ?? NaN) / MB, externalMb: (m.get('nodejs_external_memory_bytes') ?? NaN) / MB };
}

/** autocannon on GET paths drawn afresh for every request (a random index each). */
async function loadPaths(label: string, base: string, path: () => string, durationS = DURATION_S): Promise<Summary> {
  const requests: Request[] = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: path() }) }];
  return summarize(label, await autocannon({ url: base, connections: CONNECTIONS, duration: durationS, requests }));
}

/** autocannon POSTing JSON bodies drawn afresh for every request. */
async function loadBodies(label: string, base: string, path: string, bodies: string[], durationS = DURATION_S): Promise<Summary> {
  const requests: Request[] = [{ method: 'POST', path, headers: { 'content-type': 'application/json' }, setupRequest: (req) => ({ ...req, body: bodies[random(bodies.length)]! }) }];
  return summarize(label, await autocannon({ url: base, connections: CONNECTIONS, duration: durationS, requests }));
}

/** Receipts at `count` random indices below `size`: their DSSE envelopes and node digests, for lookups by key. */
async function sampleReceipts(base: string, size: number, count: number): Promise<{ dsse: unknown; node_digest: string }[]> {
  const out: { dsse: unknown; node_digest: string; node_index: number }[] = [];
  for (let k = 0; k < count; k++) out.push((await (await fetch(`${base}${API}/receipt/export?index=${random(size)}`)).json()) as (typeof out)[number]);
  // the load must measure lookups that find their node: the first receipt is checked once
  const first = (await (await fetch(`${base}/khipu/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dsse: out[0]!.dsse }) })).json()) as { verified: boolean; ledger: { node_index: number } };
  if (!first.verified || first.ledger.node_index !== out[0]!.node_index) throw new Error(`ledger-scale: /khipu/verify of receipt ${out[0]!.node_index} answered ${JSON.stringify(first).slice(0, 200)}`);
  return out;
}

/** A load with the main thread's CPU per request read from /proc around it (robust on a shared machine). */
async function measured(pid: number, entries: number, run: () => Promise<Summary>): Promise<Row> {
  const before = cpuSeconds(pid);
  const r = await run();
  const after = cpuSeconds(pid);
  const answered = r.requests - r.errors;
  return { ...r, entries, mainCpuUsPerReq: before && after && answered > 0 ? ((after.main - before.main) * 1e6) / answered : null };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const random = (n: number): number => Math.floor(Math.random() * n);
const n = (x: number): string => x.toLocaleString('en-US');

interface SizeResult {
  label: string;
  built: number;
  /** Nodes the service found at the measured start. */
  entries: number;
  starts: { listeningMs: number; readyMs: number; replay: Started['replay'] }[];
  listeningMedianMs: number;
  readyMedianMs: number;
  memoryAfterStart: Memory;
  /** After the verdict load (the empty log had the same). */
  memoryAfterLoad: Memory;
  /** After the proof and tile loads too (the empty log has none to serve). */
  memoryAfterReads: Memory;
  rows: Record<string, Row>;
}

/** Everything measured on one directory; the service is stopped when it returns. */
async function measureDir(label: string, dir: string, built: number): Promise<SizeResult> {
  const starts: SizeResult['starts'] = [];
  let svc: Started | null = null;
  try {
    for (let k = 0; k < STARTS; k++) {
      svc = await startOn(dir);
      starts.push({ listeningMs: svc.listeningMs, readyMs: svc.readyMs, replay: svc.replay });
      console.log(`ledger-scale: ${label}: start ${k + 1}: listening ${svc.listeningMs.toFixed(0)} ms, ledger ready ${svc.readyMs.toFixed(0)} ms after spawn; ledger replayed ${JSON.stringify(svc.replay)}`);
      if (k < STARTS - 1) await stop(svc.child);
    }
    const s = svc!;
    const pid = s.child.pid!;
    await healthy(s.base);
    await new Promise((r) => setTimeout(r, 1000));
    const memoryAfterStart = await memory(s.base, pid);
    const readiness = (await (await fetch(`${s.base}${API}/ledger/readiness`)).json()) as { integrity: { nodes: number } };
    const entries = readiness.integrity.nodes;
    // proofs only below the newest checkpoint: a newer index would wait for the next one
    const signed = Number((await (await fetch(`${s.base}${API}/ledger/checkpoint`)).text()).split('\n')[1]) || 0;
    const rows: Record<string, Row> = {};
    // the verdict load first: memory after it compares with the empty log's after the same load
    const post = { url: `${s.base}${API}/verdict`, method: 'POST' as const, body: VERDICT_FRAME, headers: { 'content-type': 'application/json' } };
    await load('warm-up', { ...post, durationS: 2 });
    rows.verdict = await measured(pid, entries, () => load(`POST /verdict, ${label}`, post));
    await new Promise((r) => setTimeout(r, 1000));
    const memoryAfterLoad = await memory(s.base, pid);
    if (signed > 0) {
      const warmed = warmTiles(dir);
      console.log(`ledger-scale: ${label}: tile columns read into the page cache first (${warmed.mb.toFixed(0)} MB in ${warmed.ms.toFixed(0)} ms)`);
      const proof = (): string => `${API}/receipt/proof?index=${random(signed)}`;
      await loadPaths('warm-up', s.base, proof, 2);
      rows.proof = await measured(pid, entries, () => loadPaths(`GET /receipt/proof, ${label}`, s.base, proof));
      rows.dag = await measured(pid, entries, () => loadPaths(`GET /khipu/dag proof, ${label}`, s.base, () => `/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify({ node: random(signed), proof: true }))}`));
      // lookups by key: the PAE digest index (verify) and the node-digest index (a DAG focus named by prefix)
      const receipts = await sampleReceipts(s.base, signed, 200);
      const verifyBodies = receipts.map((r) => JSON.stringify({ dsse: r.dsse }));
      rows.verify = await measured(pid, entries, () => loadBodies(`POST /khipu/verify, ${label}`, s.base, '/khipu/verify', verifyBodies));
      const prefixes = receipts.map((r) => `/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify({ node: r.node_digest.slice(0, 16), depth: 1 }))}`);
      rows.dagPrefix = await measured(pid, entries, () => loadPaths(`GET /khipu/dag by digest prefix, ${label}`, s.base, () => prefixes[random(prefixes.length)]!));
    }
    const fullTiles = Math.floor(signed / TILE_WIDTH);
    if (fullTiles > 0) rows.tile = await measured(pid, entries, () => loadPaths(`GET /ledger/tile/0/<N>, ${label}`, s.base, () => `${API}/ledger/tile/0/${encodeTileIndex(random(fullTiles))}`));
    const memoryAfterReads = await memory(s.base, pid);
    return { label, built, entries, starts, listeningMedianMs: median(starts.map((x) => x.listeningMs)), readyMedianMs: median(starts.map((x) => x.readyMs)), memoryAfterStart, memoryAfterLoad, memoryAfterReads, rows };
  } finally {
    if (svc) await stop(svc.child);
  }
}

interface FsckResult {
  ran: boolean;
  why?: string;
  exit?: number | null;
  seconds?: number;
  entries?: number;
  entriesPerSecond?: number;
  output?: string;
}

/**
 * Reads the tile and tile-interior columns once, so the proof and tile loads measure their computation rather than
 * the disk: right after a build most of it is out of the page cache (this VM reclaims cold pages).
 * The records (khipu.jsonl, which the DAG view reads) are left as they are.
 */
function warmTiles(dir: string): { mb: number; ms: number } {
  const t0 = performance.now();
  const buf = Buffer.allocUnsafe(16 * MB);
  let bytes = 0;
  const columns = ['tile', 'interior'].flatMap((sub) => (existsSync(join(dir, 'tlog', sub)) ? readdirSync(join(dir, 'tlog', sub)).map((name) => join(dir, 'tlog', sub, name)) : []));
  for (const path of columns) {
    const fd = openSync(path, 'r');
    try {
      for (let got = readSync(fd, buf, 0, buf.length, null); got > 0; got = readSync(fd, buf, 0, buf.length, null)) bytes += got;
    } finally {
      closeSync(fd);
    }
  }
  return { mb: bytes / MB, ms: performance.now() - t0 };
}

/** `npm run ledger:fsck` on a stopped directory, when the script exists. */
function fsck(dir: string, entries: number): FsckResult {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  if (!scripts['ledger:fsck']) return { ran: false, why: 'package.json has no ledger:fsck script yet' };
  if (!OFFLINE_FSCK) return { ran: false, why: 'LEDGER_SCALE_FSCK=0' };
  const t0 = performance.now();
  const r = spawnSync('npm', ['run', '-s', 'ledger:fsck', '--', dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * MB });
  const seconds = (performance.now() - t0) / 1000;
  const out = (r.stdout ?? '').trim();
  // its own figures when it prints them (the log may have grown past the checkpoint)
  const figure = (re: RegExp): number | null => {
    const m = re.exec(out)?.[1];
    return m ? Number(m.replace(/,/g, '')) : null;
  };
  const checked = figure(/: ([\d,]+) entries,/) ?? entries;
  return { ran: true, exit: r.status, seconds, entries: checked, entriesPerSecond: figure(/([\d,]+) entries\/s/) ?? checked / seconds, output: out.split('\n').slice(-3).join('\n') };
}

export async function ledgerScaleBench(): Promise<Record<string, unknown>> {
  const sizes = (process.env.LEDGER_SCALE_ENTRIES ?? '10000,10000000').split(',').map((s) => Number(s.trim().replace(/_/g, '')));
  if (sizes.some((s) => !Number.isSafeInteger(s) || s < 1)) throw new Error('LEDGER_SCALE_ENTRIES: positive whole numbers, comma-separated');
  const root = process.env.LEDGER_SCALE_DIR ?? join(tmpdir(), 'svc-ledger-scale');
  const builds: Record<string, unknown>[] = [];
  for (const size of sizes) builds.push(await ensureBuilt(join(root, String(size)), size));

  const empty = mkdtempSync(join(tmpdir(), 'svc-ledger-scale-empty-'));
  const results: SizeResult[] = [];
  try {
    results.push(await measureDir('empty log', empty, 0));
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
  for (const size of sizes) results.push(await measureDir(`${n(size)} entries`, join(root, String(size)), size));
  const fscks = sizes.map((size) => ({ size, ...fsck(join(root, String(size)), checkpointSize(join(root, String(size)))) }));

  const [base, ref] = [results[0]!, results[1]!];
  const rows: Row[] = [];
  const lines: string[] = [];
  for (const kind of ['verdict', 'proof', 'dag', 'verify', 'dagPrefix', 'tile'] as const) {
    for (const r of results) {
      const row = r.rows[kind];
      if (!row) continue;
      const against = r === ref || r === base ? undefined : ref.rows[kind];
      rows.push(against ? { ...row, ratio: row.reqPerSec / against.reqPerSec, vs: `vs ${ref.label}` } : row);
      const lat = against ? `; p50 ${(row.p50 / against.p50).toFixed(2)}x, p99 ${(row.p99 / against.p99).toFixed(2)}x, CPU ${row.mainCpuUsPerReq !== null && against.mainCpuUsPerReq ? (row.mainCpuUsPerReq / against.mainCpuUsPerReq).toFixed(2) : '?'}x ${ref.label}` : '';
      lines.push(`  ${row.label.padEnd(52)} ${row.mainCpuUsPerReq === null ? '?' : row.mainCpuUsPerReq.toFixed(0).padStart(5)} µs/req${lat}`);
    }
  }
  printTable(`ledger-scale: the file ledger at ${sizes.map(n).join(' and ')} entries against an empty log (same run; ${DURATION_S} s, ${CONNECTIONS} connections; background fsck at start ${BACKGROUND_FSCK ? 'on' : 'off'})`, rows);
  console.log('main-thread CPU per request (/proc), and latency against the first size:');
  for (const l of lines) console.log(l);
  for (const r of results) {
    const d = (a: Memory, b: Memory): string => `RSS ${a.rssMb.toFixed(0)} MB (${a.rssMb - b.rssMb >= 0 ? '+' : ''}${(a.rssMb - b.rssMb).toFixed(0)} MB, ${(a.rssMb / b.rssMb).toFixed(2)}x the empty log), main heap ${a.heapUsedMb.toFixed(0)} MB (${a.heapUsedMb - b.heapUsedMb >= 0 ? '+' : ''}${(a.heapUsedMb - b.heapUsedMb).toFixed(0)}) + external ${a.externalMb.toFixed(0)} MB`;
    console.log(`${r.label} (${n(r.entries)} at start): start-up median of ${STARTS}: listening ${r.listeningMedianMs.toFixed(0)} ms, ledger ready ${r.readyMedianMs.toFixed(0)} ms (${r.starts.map((s) => s.readyMs.toFixed(0)).join(', ')}); ledger opened in ${r.starts.map((s) => String(s.replay?.ms ?? '?')).join(', ')} ms`);
    console.log(`  memory after start: ${d(r.memoryAfterStart, base.memoryAfterStart)}`);
    console.log(`  memory after the verdict load: ${d(r.memoryAfterLoad, base.memoryAfterLoad)}`);
    if (r !== base) console.log(`  memory after the proof and tile loads too: RSS ${r.memoryAfterReads.rssMb.toFixed(0)} MB, main heap ${r.memoryAfterReads.heapUsedMb.toFixed(0)} MB + external ${r.memoryAfterReads.externalMb.toFixed(0)} MB`);
  }
  for (const f of fscks) console.log(f.ran ? `ledger:fsck on the ${n(f.size)} directory (${n(f.entries ?? 0)} entries): exit ${String(f.exit)}, ${n(f.entriesPerSecond ?? 0)} entries/s, ${(f.seconds ?? 0).toFixed(1)} s with npm: ${f.output ?? ''}` : `ledger:fsck on the ${n(f.size)} directory: not run (${f.why ?? ''})`);
  return { sizes, root, backgroundFsck: BACKGROUND_FSCK, builds, results, rows, fsck: fscks };
}
