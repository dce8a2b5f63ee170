/**
 * The scenarios against a running deployment (`--target`): nothing is started, every load goes to
 * the target's routes, writes carry the token, and the figures are absolute: the local baselines
 * are servers a local run starts, so no ratio to them is given.
 */
import type { Request } from 'autocannon';
import { scenarioInfo } from './catalogue.js';
import { CONNECTIONS, DURATION_S, paced, printTable, timedLoad, type Summary, type TimedLoadOptions } from './lib.js';
import { HEALTH_RATE, KERNEL, KERNEL_ROUTES, p99Ratio, ROUTES } from './scenarios.js';
import { describeSse, sseBench } from './sse.js';
import { encodeTileIndex, TILE_WIDTH } from '../src/lib/tlog-tiles.js';
import { SOURCES } from '../src/verdicts/telemetry.js';

export interface Target {
  /** Base URL, no trailing slash; may end in a path prefix. */
  base: string;
  token: string | null;
  /** Requests per second of every load, or null for closed loops of BENCH_CONNECTIONS. */
  rate: number | null;
}

type Rows = Summary[];
interface LedgerResult {
  rows: Rows;
  /** Entries under the target's newest checkpoint when the run began. */
  checkpointSize: number;
  notes: string[];
}

const API = '/api/svc/v1';
const WARM_S = Math.min(2, DURATION_S);

/**
 * Telemetry frames as a sensor feed sends them: 48 tracks circling the demo no-fly zone (some
 * inside it), each source in turn, with their own altitude, speed, signal and evidence, so the
 * verdicts vary as a deployment's do. Seeded: every run posts the same sequence.
 */
export function verdictFrames(count: number): string[] {
  let seed = 0x5eed;
  const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const round = (x: number, places: number): number => Math.round(x * 10 ** places) / 10 ** places;
  const tracks = Array.from({ length: 48 }, (_, i) => ({
    id: `trk-${i.toString(36).padStart(3, '0')}`,
    source: SOURCES[i % SOURCES.length]!,
    radius: 0.005 + random() * 0.04,
    phase: random() * 2 * Math.PI,
    speed: 4 + random() * 36,
    alt: 20 + random() * 380,
    authenticated: random() < 0.7,
  }));
  return Array.from({ length: count }, (_, k) => {
    const t = tracks[k % tracks.length]!;
    const angle = t.phase + Math.floor(k / tracks.length) * 0.05;
    // moving along the circle: north component cos, east component -sin
    const heading = round((((Math.atan2(-Math.sin(angle), Math.cos(angle)) * 180) / Math.PI) % 360 + 360) % 360, 1);
    return JSON.stringify({
      track_id: t.id,
      source: t.source,
      lat: round(36.2275 + t.radius * Math.sin(angle), 6),
      lon: round(-115.16 + 1.25 * t.radius * Math.cos(angle), 6),
      alt_m: round(t.alt + random() * 10 - 5, 1),
      speed_mps: round(t.speed * (0.9 + random() * 0.2), 1),
      heading_deg: heading >= 360 ? 0 : heading,
      rssi_dbm: round(-40 - random() * 55, 1),
      id_authenticated: t.authenticated,
      timestamp_skew_s: random() < 0.9 ? round(random() * 2 - 1, 2) : round(30 + random() * 60, 1),
      n_observations: 1 + Math.floor(random() * 1500),
    });
  });
}

/** A load of the target after a short discarded one: a closed loop, or the fixed --rate. */
async function hit(t: Target, label: string, opts: TimedLoadOptions): Promise<Summary> {
  const o: TimedLoadOptions = t.rate ? { ...opts, ratePerS: t.rate } : opts;
  await timedLoad('warm-up', { ...o, durationS: WARM_S });
  return timedLoad(label, o);
}

/** GET of a path drawn afresh for every request (the target's path prefix kept). */
function hitPaths(t: Target, label: string, path: () => string): Promise<Summary> {
  const prefix = new URL(t.base).pathname.replace(/\/$/, '');
  const requests: Request[] = [{ method: 'GET', setupRequest: (req) => ({ ...req, path: prefix + path() }) }];
  return hit(t, label, { url: t.base, requests });
}

const bearer = (t: Target): Record<string, string> => (t.token ? { authorization: `Bearer ${t.token}` } : {});

async function verdicts(t: Target): Promise<Rows> {
  const frames = verdictFrames(1024);
  let next = 0;
  const requests: Request[] = [{ method: 'POST', setupRequest: (req) => ({ ...req, body: frames[next++ % frames.length] }) }];
  const post: TimedLoadOptions = { url: `${t.base}${API}/verdict`, method: 'POST', headers: { 'content-type': 'application/json', ...bearer(t) }, requests };
  const rows = [await hit(t, `POST ${API}/verdict`, post)];
  // a closed loop also at four times the clients: the service's signing batches and group commits grow with them
  if (!t.rate) rows.push(await hit(t, `POST ${API}/verdict, ${4 * CONNECTIONS} connections`, { ...post, connections: 4 * CONNECTIONS }));
  return rows;
}

async function kernels(t: Target): Promise<Rows> {
  const rows: Rows = [];
  for (const [, path] of KERNEL_ROUTES) rows.push(await hit(t, `GET ${path} (defaults)`, { url: `${t.base}${path}` }));
  return rows;
}

async function http(t: Target): Promise<Rows> {
  const rows: Rows = [];
  for (const [label, path] of ROUTES) rows.push(await hit(t, label, { url: `${t.base}${path}` }));
  return rows;
}

/** The local scenario's service rows: its probes are paced at their own rate whatever --rate says. */
async function saturation(t: Target): Promise<Rows> {
  const probe = { url: `${t.base}${API}/health`, connections: 4 };
  const pacedProbe = { ...probe, ratePerS: HEALTH_RATE };
  const saturating = (label: string): Promise<Summary> => timedLoad(label, { url: `${t.base}${KERNEL}?seq_len=2048&state_dim=16`, connections: 32 });
  const idle = await timedLoad('/health, idle (4 connections)', probe);
  const idlePaced = await paced(`/health, idle (${HEALTH_RATE}/s paced)`, pacedProbe);
  const [busy, kernel] = await Promise.all([timedLoad('/health, pool saturated (4 connections)', probe), saturating(`${KERNEL} 2048x16 saturating (32 conn)`)]);
  const [busyPaced] = await Promise.all([paced(`/health, pool saturated (${HEALTH_RATE}/s paced)`, pacedProbe), saturating(`${KERNEL} 2048x16 saturating again (32 conn)`)]);
  return [idle, p99Ratio(busy, idle, 'p99 vs idle'), kernel, idlePaced, p99Ratio(busyPaced, idlePaced, 'p99 vs idle')];
}

/** The ledger's read routes: checkpoint, receipt export, and proofs and tiles under the newest checkpoint. */
async function ledger(t: Target): Promise<LedgerResult> {
  const res = await fetch(`${t.base}${API}/ledger/checkpoint`);
  const checkpointSize = res.ok ? Number((await res.text()).split('\n')[1]) || 0 : 0;
  const random = (n: number): number => Math.floor(Math.random() * n);
  const notes: string[] = [];
  const rows = [await hit(t, 'GET /ledger/checkpoint', { url: `${t.base}${API}/ledger/checkpoint` }), await hit(t, 'GET /receipt/export (newest)', { url: `${t.base}${API}/receipt/export` })];
  if (checkpointSize > 0) {
    // indices under the checkpoint only: a newer one's proof waits for the next checkpoint
    rows.push(await hitPaths(t, 'GET /receipt/export?index=<random>', () => `${API}/receipt/export?index=${random(checkpointSize)}`));
    rows.push(await hitPaths(t, 'GET /receipt/proof?index=<random>', () => `${API}/receipt/proof?index=${random(checkpointSize)}`));
  } else {
    notes.push(`no signed checkpoint covers an entry (GET /ledger/checkpoint: ${res.status}): no proofs, exports by index or tiles`);
  }
  const fullTiles = Math.floor(checkpointSize / TILE_WIDTH);
  if (fullTiles > 0) rows.push(await hitPaths(t, 'GET /ledger/tile/0/<random full tile>', () => `${API}/ledger/tile/0/${encodeTileIndex(random(fullTiles))}`));
  else if (checkpointSize > 0) notes.push(`${checkpointSize} entries under the checkpoint, fewer than a full tile (${TILE_WIDTH}): no tile load`);
  return { rows, checkpointSize, notes };
}

const RUNNERS: Record<string, (t: Target) => Promise<Rows | LedgerResult>> = { http, kernels, verdicts, saturation, ledger };

/** Runs `chosen` (none refused: the arguments were checked) against the target into `scenarios`. */
export async function runTarget(t: Target, chosen: readonly string[], scenarios: Record<string, unknown>): Promise<void> {
  const health = await fetch(`${t.base}${API}/health`).catch((e: Error) => e);
  if (health instanceof Error) throw new Error(`the target ${t.base} does not answer: ${String(health.cause ?? health.message)}`);
  const how = t.rate ? `every load at ${t.rate} requests/s` : `closed loops of ${CONNECTIONS} connections`;
  console.log(`target ${t.base} (/health ${health.status})${t.token ? ', bearer token on writes' : ''}: ${how}, ${DURATION_S} s each`);
  for (const name of chosen) {
    const info = scenarioInfo(name);
    if (info.target.mode === 'refused') throw new Error(`${name} cannot run against a target`);
    if (name === 'sse') {
      const r = await sseBench({ base: t.base }, undefined, undefined, bearer(t));
      console.log(`\n## sse (target): ${r.viewers} viewers on one stream`);
      console.log(describeSse(r));
      if (r.events === 0) console.log('no event arrived: the simulated flight runs while somebody watches (with write tokens set, only a viewer bearing one: --token), unless stream.flight is off');
      scenarios.sse = r;
      continue;
    }
    const result = await RUNNERS[name]!(t);
    printTable(`${name} (target): ${info.target.what}`, Array.isArray(result) ? result : result.rows);
    if (!Array.isArray(result)) for (const note of result.notes) console.log(note);
    if (info.target.mode === 'absolute') console.log('baseline ratio: not available against a target (the baselines are servers a local run starts); absolute figures only');
    scenarios[name] = result;
  }
}
