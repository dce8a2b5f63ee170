/**
 * A fake readsb/jv2 `/v2/mil` upstream on 127.0.0.1 for the ADS-B tests. `mode` decides every
 * following answer: a good payload, slowly, 429/420 + Retry-After, 403, 500, garbage, an HTML block
 * page, a truncated body, or no answer at all (the socket is held open until close()).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FakeMode = 'ok' | 'empty' | 'slow' | 'rate_limited' | 'enhance_calm' | 'forbidden' | 'error' | 'garbage' | 'html' | 'truncated' | 'hang';

export interface FakeUpstream {
  url: string;
  mode: FakeMode;
  /** Entries served by `ok` and `slow` (readsb field names; anything goes, the feed must filter). */
  aircraft: Record<string, unknown>[];
  /** Retry-After sent with 429/420 (null: none). */
  retryAfter: string | null;
  delayMs: number;
  /** Requests received so far. */
  requests: number;
  /** Upstream `now` in jv2 milliseconds. */
  nowMs: number;
  close(): Promise<void>;
}

/** Military, positioned, current: all three must be served. */
export const GOOD_AIRCRAFT: Record<string, unknown>[] = [
  { hex: 'ae01c5', type: 'adsb_icao', flight: 'RCH123  ', r: '05-5140', t: 'C17', desc: 'BOEING C-17A Globemaster 3', dbFlags: 1, alt_baro: 32000, alt_geom: 32575, gs: 450.2, track: 87.1, baro_rate: -64, squawk: '1234', category: 'A5', lat: 38.5, lon: -77.1, nac_p: 9, seen_pos: 0.5, seen: 0.2 },
  { hex: '~ae0002', type: 'tisb_icao', tisb: ['lat', 'lon'], flight: 'TOPCAT1 ', dbFlags: 1, alt_baro: 'ground', lat: 36.1, lon: -115.2, seen_pos: 3.1, seen: 1 },
  { hex: '43c6f1', type: 'mlat', mlat: ['lat', 'lon', 'gs'], r: 'ZZ336', t: 'A332', dbFlags: 3, alt_baro: 21000, lat: 52.1, lon: -1.2, seen_pos: 10, seen: 2 },
];

/** Must never be served: no position, only a receiver guess or an old fix, stale, or not military. */
export const BAD_AIRCRAFT: Record<string, unknown>[] = [
  { hex: 'ae0003', flight: 'NOPOS   ', dbFlags: 1, alt_baro: 15000 },
  { hex: 'ae0004', flight: 'ROUGH   ', dbFlags: 1, rr_lat: 39, rr_lon: -76 },
  { hex: 'ae0005', flight: 'OLDFIX  ', dbFlags: 1, lastPosition: { lat: 40, lon: -75, seen_pos: 400 } },
  { hex: 'ae0006', flight: 'STALE   ', dbFlags: 1, lat: 41, lon: -74, seen_pos: 61 },
  { hex: 'a12345', flight: 'UAL1    ', lat: 40.5, lon: -73.9, seen_pos: 0.1 },
  { hex: 'a12346', flight: 'DAL2    ', dbFlags: 2, lat: 40.6, lon: -73.8, seen_pos: 0.1 },
];

export async function startFakeUpstream(initial: Partial<Pick<FakeUpstream, 'mode' | 'aircraft' | 'retryAfter' | 'delayMs'>> = {}): Promise<FakeUpstream> {
  const sockets = new Set<Socket>();
  const fake: FakeUpstream = {
    url: '',
    mode: initial.mode ?? 'ok',
    aircraft: initial.aircraft ?? [...GOOD_AIRCRAFT, ...BAD_AIRCRAFT],
    retryAfter: initial.retryAfter ?? '120',
    delayMs: initial.delayMs ?? 300,
    requests: 0,
    nowMs: Date.now(),
    close: async () => {},
  };
  const payload = (ac: Record<string, unknown>[]) => JSON.stringify({ ac, msg: 'No error', now: fake.nowMs, total: ac.length, ctime: fake.nowMs, ptime: 1 });
  const json = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
    res.end(body);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    fake.requests++;
    const retry: Record<string, string> = fake.retryAfter === null ? {} : { 'retry-after': fake.retryAfter };
    switch (fake.mode) {
      case 'ok':
        return json(res, 200, payload(fake.aircraft));
      case 'empty':
        return json(res, 200, payload([]));
      case 'slow': {
        const t = setTimeout(() => json(res, 200, payload(fake.aircraft)), fake.delayMs);
        res.on('close', () => clearTimeout(t));
        return;
      }
      case 'rate_limited':
        return json(res, 429, '{"message":"Too Many Requests"}', retry);
      case 'enhance_calm':
        return json(res, 420, '{"message":"Enhance your calm"}', retry);
      case 'forbidden':
        return json(res, 403, '{"message":"Please contact us"}');
      case 'error':
        return json(res, 500, '{"message":"internal"}');
      case 'garbage':
        return json(res, 200, '{"ac": [ {"hex": "ae01c5", "lat": 38.5,, }');
      case 'html':
        res.writeHead(200, { 'content-type': 'text/html' });
        return res.end('<!DOCTYPE html><html><body>Attention Required! | Cloudflare</body></html>');
      case 'truncated': {
        // promise a full body, send half of it, then drop the connection
        const body = payload(fake.aircraft);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.write(body.slice(0, Math.floor(body.length / 2)));
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      case 'hang':
        return; // never answers; the socket is closed by close()
    }
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/mil`;
  fake.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return fake;
}

/** A URL on 127.0.0.1 where nothing listens: connections are refused at once. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v2/mil`;
}
