/**
 * The right to write: the write routes (the ones declared `write: true`: new verdicts, edge
 * batches, CoT ingest, refreshes) may require a bearer token, and every client's writes are
 * metered by what they append.
 *
 * - Tokens come from `guard.writeTokens` (`SVC_WRITE_TOKENS`, comma-separated). Only their SHA-256
 *   digests are kept; a presented token is hashed and compared with every digest in constant time
 *   (`timingSafeEqual` on equal-length digests, no early exit). Without tokens configured, writes
 *   are open (the development default). `Authorization` is read as RFC 9110/6750 allow: the scheme
 *   in any case, one or more spaces or tabs before the token.
 * - Quotas count ledger nodes: a verdict costs 1, an edge batch its frame count (known from the
 *   validated body, before any work: `chargedPerNode`), a write that appends none 1. Each write
 *   token has its own bucket (`guard.writeRatePerS`, `guard.writeBurst`, keyed by its digest);
 *   a write without a token is counted per client address (`guard.addressWriteRatePerS`,
 *   `guard.addressWriteBurst`; behind a trusted proxy, the address it forwards). A write whose cost
 *   exceeds what is left gets 429 + `Retry-After` for the deficit, and nothing is taken.
 *   At most MAX_CLIENTS buckets are kept (least recently used forgotten first).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { GuardConfig } from './guard.config.js';
import { AppError } from './errors.js';
import type { RouteDef } from './route.js';
import { ClientAddresses } from './client-address.js';

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

const BEARER = /^bearer[ \t]+([\x21-\x7e]{1,512})$/i;

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  // Node trims the value's outer whitespace; the scheme is case-insensitive (RFC 9110 §11.1)
  return header ? (BEARER.exec(header)?.[1] ?? null) : null;
}

/** The configured write tokens, as digests. */
export class WriteTokens {
  private readonly digests: Buffer[];

  constructor(list: string) {
    this.digests = parseTokens(list);
  }

  /** True when writes need a token. */
  get required(): boolean {
    return this.digests.length > 0;
  }

  /** The bucket key of the presented token when it is one of ours, else null. */
  match(authorization: string | undefined): string | null {
    const token = bearerToken(authorization);
    if (token === null || !tokenMatches(token, this.digests)) return null;
    return `token:${digest(token).toString('hex')}`;
  }
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

  get enabled(): boolean {
    return this.ratePerS > 0;
  }

  private bucket(client: string): Bucket {
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
    return b;
  }

  /**
   * 0 when allowed (`cost` taken), else seconds until it would be (nothing taken). A cost above the
   * burst is allowed from a full bucket and leaves it in debt, so no write is refused forever and
   * the sustained rate still holds.
   */
  take(client: string, cost = 1): number {
    if (this.ratePerS <= 0) return 0;
    const b = this.bucket(client);
    const need = Math.min(cost, this.burst);
    if (b.tokens >= need) {
      b.tokens -= cost;
      return 0;
    }
    return (need - b.tokens) / this.ratePerS;
  }

  /** Seconds until the cheapest write (1) would be allowed; nothing taken. */
  wait(client: string): number {
    if (this.ratePerS <= 0) return 0;
    const b = this.bucket(client);
    return b.tokens >= 1 ? 0 : (1 - b.tokens) / this.ratePerS;
  }
}

const rateLimited = (waitS: number): AppError =>
  new AppError('RATE_LIMITED', 429, 'Too many writes from this client, retry later', { 'Retry-After': String(Math.max(1, Math.ceil(waitS))) });

/** Routes whose cost is read from their validated body, by handler (what survives mounting). */
const bodyCosts = new WeakMap<RouteDef['handler'], true>();

/** Pending charges of requests on such routes, made when the guard let them in. */
const pendingCharges = new WeakMap<Context, (cost: number) => void>();

/**
 * A write route charged per ledger node, the count read from its validated body before the
 * handler does any work; the guard only checks beforehand that the client has room for one.
 */
export function chargedPerNode<Q, P, B>(def: RouteDef<Q, P, B>, nodes: (body: B) => number): RouteDef<Q, P, B> {
  const inner = def.handler;
  const handler: RouteDef<Q, P, B>['handler'] = (input) => {
    pendingCharges.get(input.ctx)?.(nodes(input.body));
    return inner(input);
  };
  bodyCosts.set(handler as RouteDef['handler'], true);
  return { ...def, handler };
}

export type WriteGuardConfig = Pick<GuardConfig, 'writeTokens' | 'writeRatePerS' | 'writeBurst' | 'addressWriteRatePerS' | 'addressWriteBurst' | 'trustProxy'>;

export function writeGuard(cfg: WriteGuardConfig, routes: readonly RouteDef[]) {
  const writeRoutes = routes.filter((r) => r.write);
  const writes = new Set(writeRoutes.map((r) => `${r.method} ${r.path}`));
  const writePaths = new Set(writeRoutes.map((r) => r.path));
  const perNode = new Set(writeRoutes.filter((r) => bodyCosts.has(r.handler)).map((r) => `${r.method} ${r.path}`));
  const tokens = new WriteTokens(cfg.writeTokens);
  const perToken = new WriteRateLimiter(cfg.writeRatePerS, cfg.writeBurst);
  const perAddress = new WriteRateLimiter(cfg.addressWriteRatePerS, cfg.addressWriteBurst);
  const addresses = new ClientAddresses(cfg.trustProxy);
  const guard = async (ctx: Context, next: Next, key: string): Promise<void> => {
    // the route is known here: an answer given by the guard is counted under it, not as unmatched
    ctx._matchedRoute = ctx.path;
    let limiter = perAddress;
    let client: string | null = null;
    if (tokens.required) {
      client = tokens.match(ctx.get('authorization'));
      if (client === null) {
        throw new AppError('UNAUTHORIZED', 401, 'Not authenticated: this route needs a write token (Authorization: Bearer …)', { 'WWW-Authenticate': 'Bearer realm="svc-write"' });
      }
      limiter = perToken;
      ctx.state.writer = client; // the token's identity, for routes whose records remember their writer (CoT ingest)
    }
    if (!limiter.enabled) return next();
    client ??= `addr:${addresses.of(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'] as string | undefined)}`;
    if (!perNode.has(key)) {
      const waitS = limiter.take(client, 1);
      if (waitS > 0) throw rateLimited(waitS);
      return next();
    }
    // the cost is known once the body is validated; a client with no room at all is refused before it is read
    const waitS = limiter.wait(client);
    if (waitS > 0) throw rateLimited(waitS);
    const owner = client;
    pendingCharges.set(ctx, (cost) => {
      const deficitS = limiter.take(owner, cost);
      if (deficitS > 0) throw rateLimited(deficitS);
    });
    return next();
  };
  // not async itself: every request passes here, and one that is no write goes on with no promise
  // of its own (a Set lookup on the path first, no string built)
  return function writeGuardMiddleware(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path;
    if (!writePaths.has(path)) return next();
    const key = `${ctx.method === 'HEAD' ? 'GET' : ctx.method} ${path}`;
    return writes.has(key) ? guard(ctx, next, key) : next();
  };
}
