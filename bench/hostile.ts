/**
 * Hostile clients for the overload scenario: clients that retry a shed kernel call at once, and the
 * attacks the hostile-client tests hold to a bound (a 64 KB query, bodies of thousands of unknown
 * keys, idle sockets from one address, SSE viewers that never read). Each runs while /health is
 * probed at a steady rate, so its row says what the attack costs everyone else.
 */
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { DURATION_S, paced, type Summary } from './lib.js';

export interface RetryingFlood {
  clients: number;
  ok: number;
  shed: number;
  other: number;
  /** Successes per 10 s, as the hostile-client report states goodput. */
  goodputPer10s: number;
}

/** `clients` closed loops that resend at once whatever a 503 told them: the retry storm. */
export async function retryingFlood(url: string, clients: number, durationS = DURATION_S): Promise<RetryingFlood> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const end = performance.now() + durationS * 1000;
  const out = { ok: 0, shed: 0, other: 0 };
  const once = (): Promise<void> =>
    new Promise((resolve) => {
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.once('end', () => {
          if (res.statusCode === 200) out.ok++;
          else if (res.statusCode === 503) out.shed++;
          else out.other++;
          resolve();
        });
      });
      req.once('error', () => {
        out.other++;
        resolve();
      });
      req.end();
    });
  const client = async (): Promise<void> => {
    while (performance.now() < end) await once();
  };
  await Promise.all(Array.from({ length: clients }, client));
  agent.destroy();
  return { clients, ...out, goodputPer10s: (out.ok * 10) / durationS };
}

/** Requests at a steady rate whose answers are read and dropped (paced() with a method and body). */
function pacedSend(url: string, ratePerS: number, durationS: number, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const started = performance.now();
  const sends: Promise<void>[] = [];
  return new Promise((resolve) => {
    let i = 0;
    const tick = (): void => {
      const now = performance.now();
      for (; started + (i * 1000) / ratePerS <= now && i < ratePerS * durationS; i++) {
        sends.push(
          new Promise((done) => {
            const req = request(url, { agent, method: init.method ?? 'GET', headers: init.headers }, (res) => {
              res.resume();
              res.once('end', done);
            });
            req.once('error', () => done());
            req.end(init.body);
          }),
        );
      }
      if (i < ratePerS * durationS) setTimeout(tick, 1);
      else void Promise.all(sends).then(() => (agent.destroy(), resolve()));
    };
    tick();
  });
}

/** Sockets from `localAddress` that send `head` (or nothing) and never read: held open for the run. */
async function heldSockets(base: string, count: number, localAddresses: readonly string[], head: string | null): Promise<Socket[]> {
  const { hostname, port } = new URL(base);
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const s = connect({ host: hostname, port: Number(port), localAddress: localAddresses[i % localAddresses.length] });
    s.on('error', () => {});
    s.pause(); // never read: what the server sends stays in the buffers between
    await new Promise<void>((resolve) => {
      s.once('connect', resolve);
      s.once('error', () => resolve());
      s.once('close', () => resolve());
    });
    if (head !== null && !s.destroyed) s.write(head);
    sockets.push(s);
  }
  return sockets;
}

export interface Attack {
  name: string;
  /** Runs the attack for `durationS`. */
  run(base: string, durationS: number): Promise<void>;
}

const unknownKeys = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));
const FRAME = { track_id: 'a1b2c3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, rssi_dbm: -45, id_authenticated: true, n_observations: 800 };

export const ATTACKS: readonly Attack[] = [
  {
    name: 'GET /health with a 64 KB query of 32,000 keys, 50/s',
    run: (base, s) => pacedSend(`${base}/api/svc/v1/health?${'a&'.repeat(32_000)}`, 50, s),
  },
  {
    name: 'POST /verdict with 20,938 unknown keys, 50/s',
    run: (base, s) => pacedSend(`${base}/api/svc/v1/verdict`, 50, s, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...FRAME, ...unknownKeys(20_938) }) }),
  },
  {
    name: 'POST /verdict with 4,000 unknown keys, 50/s',
    run: (base, s) => pacedSend(`${base}/api/svc/v1/verdict`, 50, s, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...FRAME, ...unknownKeys(4_000) }) }),
  },
  {
    name: '1,000 idle sockets from 127.0.0.2',
    async run(base, s) {
      const sockets = await heldSockets(base, 1_000, ['127.0.0.2'], null);
      await new Promise((r) => setTimeout(r, s * 1000));
      for (const k of sockets) k.destroy();
    },
  },
  {
    name: '1,000 SSE viewers that never read, from 127.0.0.10-19',
    async run(base, s) {
      const addresses = Array.from({ length: 10 }, (_, i) => `127.0.0.${10 + i}`);
      const { host } = new URL(base);
      const sockets = await heldSockets(base, 1_000, addresses, `GET /api/svc/v1/stream/verdicts HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\n\r\n`);
      await new Promise((r) => setTimeout(r, s * 1000));
      for (const k of sockets) k.destroy();
    },
  },
];

/** /health probed at `rate` while `attack` runs. */
export async function healthDuring(base: string, rate: number, label: string, attack: () => Promise<unknown>): Promise<Summary> {
  const [r] = await Promise.all([paced(label, { url: `${base}/api/svc/v1/health`, connections: 4, ratePerS: rate }), attack()]);
  return r;
}
