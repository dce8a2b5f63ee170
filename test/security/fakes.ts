/** Fakes for the views' inputs that other features publish: ADS-B status and an upstream. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AdsbStatus } from '../../src/adsb/feed.js';
import type { HealthStatus } from '../../src/platform/health.js';

export interface FakeUpstream {
  url: string;
  /** Requests received so far. */
  hits(): number;
  setStatus(code: number): void;
  close(): Promise<void>;
}

/** A loopback HTTP server answering every request with `status` (default 500) and counting them. */
export async function fakeUpstream(status = 500): Promise<FakeUpstream> {
  let hits = 0;
  let code = status;
  const server: Server = createServer((_req, res) => {
    hits++;
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(code === 200 ? '{"ac":[],"now":0}' : '{"error":"down"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v2/mil`,
    hits: () => hits,
    setStatus: (c) => {
      code = c;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** ADS-B status as the feature publishes it after every provider failed (live=false, no snapshot). */
export function adsbDown(urls: string[]): () => AdsbStatus {
  return () => ({
    live: false,
    snapshotAgeS: null,
    aircraft: 0,
    providers: urls.map((url, i) => ({ name: `fake-${i}`, url, breaker: 'closed', consecutiveFailures: 3, lastOkAt: null, lastError: 'HTTP 500', lastStatus: 500 })),
  });
}


export function worstOf(statuses: HealthStatus[]): HealthStatus {
  return statuses.includes('fail') ? 'fail' : statuses.includes('warn') ? 'warn' : 'pass';
}

export const frame = { track_id: 'a1b2c3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };
