/**
 * The right to write (issue 17 item 3): the write routes (the ones declared `write: true`: new
 * verdicts, edge batches, CoT ingest, refreshes) may require a bearer token, and every client's
 * writes are rate limited.
 *
 * - Tokens come from `guard.writeTokens` (`SVC_WRITE_TOKENS`, comma-separated). Only their SHA-256
 *   digests are kept; a presented token is hashed and compared with every digest in constant time
 *   (`timingSafeEqual` on equal-length digests, no early exit). Without tokens configured, writes
 *   are open (the development default) and only rate limited.
 * - A token bucket per client (the token's digest when one is presented, else the remote address):
 *   `guard.writeRatePerS` sustained, `guard.writeBurst` at once; 429 + `Retry-After` beyond it.
 *   At most MAX_CLIENTS buckets are kept (least recently used forgotten first).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { GuardConfig } from './guard.config.js';
import { AppError } from './errors.js';
import type { RouteDef } from './route.js';

const MAX_CLIENTS = 10_000;

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export function parseTokens(list: string): Buffer[] {
  return list
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map(digest);
}

export function tokenMatches(presented: string, digests: readonly Buffer[]): boolean {
  const d = digest(presented);
  let ok = false;
  for (const known of digests) ok = timingSafeEqual(d, known) || ok; // every digest compared, always
  return ok;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class WriteRateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** 0 when allowed (one write taken), else seconds until one would be. */
  take(client: string): number {
    if (this.ratePerS <= 0) return 0;
    const now = this.now();
    let b = this.buckets.get(client);
    if (b) {
      this.buckets.delete(client);
      b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerS);
      b.at = now;
    } else {
      b = { tokens: this.burst, at: now };
      if (this.buckets.size >= MAX_CLIENTS) this.buckets.delete(this.buckets.keys().next().value!);
    }
    this.buckets.set(client, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.ratePerS;
  }
}

export function writeGuard(cfg: Pick<GuardConfig, 'writeTokens' | 'writeRatePerS' | 'writeBurst'>, routes: readonly RouteDef[]) {
  const writes = new Set(routes.filter((r) => r.write).map((r) => `${r.method} ${r.path}`));
  const writePaths = new Set(routes.filter((r) => r.write).map((r) => r.path));
  const digests = parseTokens(cfg.writeTokens);
  const limiter = new WriteRateLimiter(cfg.writeRatePerS, cfg.writeBurst);
  const guard = async (ctx: Context, next: Next): Promise<void> => {
    let client = `addr:${ctx.req.socket.remoteAddress ?? 'unknown'}`;
    if (digests.length) {
      const m = /^Bearer ([\x21-\x7e]{1,512})$/.exec(ctx.get('authorization'));
      if (!m || !tokenMatches(m[1]!, digests)) {
        throw new AppError('UNAUTHORIZED', 401, 'Not authenticated: this route needs a write token (Authorization: Bearer …)', { 'WWW-Authenticate': 'Bearer realm="svc-write"' });
      }
      client = `token:${digest(m[1]!).toString('hex').slice(0, 16)}`;
    }
    const waitS = limiter.take(client);
    if (waitS > 0) {
      throw new AppError('RATE_LIMITED', 429, 'Too many write requests from this client, retry later', { 'Retry-After': String(Math.max(1, Math.ceil(waitS))) });
    }
    return next();
  };
  // not async itself: every request passes here, and one that is no write goes on with no promise
  // of its own (a Set lookup on the path first, no string built)
  return function writeGuardMiddleware(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path;
    if (!writePaths.has(path)) return next();
    return writes.has(`${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${path}`) ? guard(ctx, next) : next();
  };
}
