/**
 * One attempt against one provider: global fetch with AbortSignal.timeout covering connect,
 * headers and body; the body is streamed and cut past a byte cap; every way it can go wrong maps
 * to one bounded `AdsbOutcome`. Never throws.
 */
import type { AdsbOutcome } from '../isomorphic/wire/adsb.js';
import { parseRetryAfter } from './breaker.js';
import { BadPayload, parseSnapshot, type ParsedSnapshot } from './normalise.js';
import { ServiceError } from '../lib/service-error.js';

export interface AttemptResult {
  outcome: AdsbOutcome;
  httpStatus: number | null;
  ms: number;
  /** Short, safe description (never the upstream body). */
  error: string | null;
  retryAfterMs: number | null;
  snapshot: ParsedSnapshot | null;
}

export interface FetchOptions {
  provider: string;
  url: string;
  timeoutMs: number;
  maxBodyBytes: number;
  maxPositionAgeS: number;
  userAgent: string;
  now: () => number;
}

export class TooLarge extends ServiceError {
  readonly code = 'SVC_ADSB_TOO_LARGE';
}

async function readCapped(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new TooLarge(`body over ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function statusOutcome(status: number): AdsbOutcome {
  if (status === 429 || status === 420) return 'rate_limited';
  if (status === 403) return 'forbidden';
  if (status >= 500) return 'server_error';
  return 'client_error';
}

/** undici reports DNS, refused and reset connections as TypeError("fetch failed") with a coded cause. */
function errorOutcome(err: unknown, phase: 'connect' | 'body'): { outcome: AdsbOutcome; error: string } {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return { outcome: 'timeout', error: `no complete answer within the timeout (${phase})` };
  const detail = e.cause?.code ?? e.cause?.message ?? e.message ?? 'unknown error';
  return phase === 'body' ? { outcome: 'truncated', error: `body cut short: ${detail}` } : { outcome: 'network', error: `connection failed: ${detail}` };
}

export async function attemptProvider(o: FetchOptions): Promise<AttemptResult> {
  const started = performance.now();
  const done = (r: Omit<AttemptResult, 'ms'>): AttemptResult => ({ ...r, ms: Math.round((performance.now() - started) * 10) / 10 });
  const signal = AbortSignal.timeout(o.timeoutMs);
  let res: Response;
  try {
    res = await fetch(o.url, { signal, headers: { accept: 'application/json', 'accept-encoding': 'gzip', 'user-agent': o.userAgent } });
  } catch (err) {
    return done({ ...errorOutcome(err, 'connect'), httpStatus: null, retryAfterMs: null, snapshot: null });
  }
  if (res.status !== 200) {
    await res.body?.cancel().catch(() => {});
    const outcome = statusOutcome(res.status);
    const retryAfterMs = outcome === 'rate_limited' ? parseRetryAfter(res.headers.get('retry-after'), o.now()) : null;
    return done({ outcome, httpStatus: res.status, error: `HTTP ${res.status}`, retryAfterMs, snapshot: null });
  }
  let text: string;
  try {
    text = await readCapped(res, o.maxBodyBytes);
  } catch (err) {
    if (err instanceof TooLarge) return done({ outcome: 'too_large', httpStatus: 200, error: err.message, retryAfterMs: null, snapshot: null });
    return done({ ...errorOutcome(err, 'body'), httpStatus: 200, retryAfterMs: null, snapshot: null });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return done({ outcome: 'bad_payload', httpStatus: 200, error: 'body is not JSON', retryAfterMs: null, snapshot: null });
  }
  try {
    const snapshot = parseSnapshot(json, o.provider, o.maxPositionAgeS, o.now());
    return done({ outcome: 'ok', httpStatus: 200, error: null, retryAfterMs: null, snapshot });
  } catch (err) {
    if (err instanceof BadPayload) return done({ outcome: 'bad_payload', httpStatus: 200, error: err.message, retryAfterMs: null, snapshot: null });
    throw err;
  }
}
