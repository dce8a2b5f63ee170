/**
 * POST /verdict with every TAK output on against all off, in one run: the off service, then the on
 * service with Mesh SA sending to loopback, the streaming listener (plain TCP on loopback) holding
 * one client that never reads, and the TAK Server client pointed at a closed port. Prints req/s, p50/p99 and the on/off ratio per round; rounds alternate off and on
 * (BENCH_TAK_ROUNDS, default 2), so a machine whose load drifts during the run weighs on both.
 * Run: `node --import tsx bench/tak-outputs.ts`.
 */
import { connect } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, printTable, SERVICE_LOAD_ENV, startServer, warm, type Summary } from './lib.js';

const VERDICT = JSON.stringify({ track_id: 'BENCH01', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 0, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 100000 });
const LISTENER_PORT = Number(process.env.BENCH_TAK_LISTENER_PORT ?? 18089);
/** Nothing listens here: the TAK Server client connects, fails and backs off for the whole load. */
const CLOSED_PORT = Number(process.env.BENCH_TAK_CLOSED_PORT ?? 18087);

async function run(label: string, env: Record<string, string>, slowClient: boolean): Promise<Summary> {
  const server = await startServer(label, ['--import', 'tsx', 'src/main.ts'], '/api/svc/v1/health', { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-tak-')), SVC_STREAM_FLIGHT: 'off', ...SERVICE_LOAD_ENV, ...env });
  // a TAK client that connects and never reads: the listener must drop it, never wait for it
  const slow = slowClient ? connect(LISTENER_PORT, '127.0.0.1') : null;
  slow?.on('error', () => {});
  slow?.pause();
  try {
    const url = `${server.base}/api/svc/v1/verdict`;
    const opts = { url, method: 'POST' as const, body: VERDICT, headers: { 'content-type': 'application/json' } };
    await warm(url, opts);
    return await load(label, opts);
  } finally {
    slow?.destroy();
    await server.stop();
  }
}

const ON_ENV = {
  SVC_TAK_MESH_ENABLED: 'true',
  SVC_TAK_MESH_GROUP: '239.2.3.1',
  SVC_TAK_MESH_INTERFACE: '127.0.0.1',
  SVC_TAK_LISTENER_ENABLED: 'true',
  SVC_TAK_LISTENER_TRANSPORT: 'tcp',
  SVC_TAK_LISTENER_HOST: '127.0.0.1',
  SVC_TAK_LISTENER_PORT: String(LISTENER_PORT),
  SVC_TAK_SERVER_ENABLED: 'true',
  SVC_TAK_SERVER_HOST: '127.0.0.1',
  SVC_TAK_SERVER_PORT: String(CLOSED_PORT),
  SVC_TAK_SERVER_TLS: 'false',
};
const rounds = Number(process.env.BENCH_TAK_ROUNDS ?? 2);
const rows: (Summary & { ratio?: number; vs?: string })[] = [];
const ratios: number[] = [];
for (let r = 1; r <= rounds; r++) {
  const off = await run(`round ${r}: TAK outputs off`, {}, false);
  const on = await run(`round ${r}: TAK outputs on`, ON_ENV, true);
  ratios.push(on.reqPerSec / off.reqPerSec);
  rows.push(off, { ...on, ratio: on.reqPerSec / off.reqPerSec, vs: off.label });
}
printTable('POST /verdict: TAK outputs on against off', rows);
ratios.sort((a, b) => a - b);
const mid = ratios.length / 2;
const median = ratios.length % 2 ? ratios[Math.floor(mid)]! : (ratios[mid - 1]! + ratios[mid]!) / 2;
console.log(`on/off req/s ratio per round: ${ratios.map((x) => x.toFixed(2)).join(', ')}; median ${median.toFixed(2)}`);
