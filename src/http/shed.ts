/**
 * How a shed request is answered. A shed is the service saying "not now", so its answer must cost
 * nearly nothing and must not invite an instant retry:
 * - the answer is serialised once per distinct (code, detail, Retry-After) and reused;
 * - `Retry-After` grows with the shed rate: one second more per `retryStepPerS` sheds in the last
 *   second, up to `retryAfterMaxS`, never below what the error said (rate limits keep their exact wait);
 * - a client that comes back before the Retry-After it was given and is shed again gets its answer
 *   only after the rest of that wait, at most `holdMaxMs`: a client that retries at once then
 *   costs a timer per hold instead of a loop of answers on the main thread.
 */
import { AppError } from './errors.js';

export interface ShedPolicy {
  /** Longest a shed answer to an early retry is held (0: never held). */
  holdMaxMs: number;
  /** Sheds per second that add one second to Retry-After. */
  retryStepPerS: number;
  retryAfterMaxS: number;
}

export const DEFAULT_SHED_POLICY: ShedPolicy = { holdMaxMs: 2000, retryStepPerS: 100, retryAfterMaxS: 30 };

/** Clients whose last Retry-After is remembered; the oldest is forgotten first. */
const MAX_CLIENTS = 65_536;
/** Distinct answers kept serialised. */
const MAX_ANSWERS = 256;

export interface ShedAnswer {
  err: AppError;
  /** How long to wait before sending it. */
  holdMs: number;
}

export class ShedGovernor {
  private windowStart = 0;
  private inWindow = 0;
  private previousWindow = 0;
  /** Per client: when its last Retry-After runs out (ms since the epoch). */
  private readonly notBefore = new Map<string, number>();
  private readonly answers = new Map<string, AppError>();

  constructor(private readonly policy: ShedPolicy = DEFAULT_SHED_POLICY) {}

  /** Sheds counted over the last whole second and the current one, whichever is more. */
  rate(now: number): number {
    this.roll(now);
    return Math.max(this.previousWindow, this.inWindow);
  }

  private roll(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < 1000) return;
    this.previousWindow = elapsed < 2000 ? this.inWindow : 0;
    this.inWindow = 0;
    this.windowStart = now;
  }

  /** The answer to give `client` for `err` (a shed code), and how long to hold it. */
  answer(err: AppError, client: string, now = Date.now()): ShedAnswer {
    this.roll(now);
    this.inWindow++;
    const given = Number(err.headers['Retry-After'] ?? 1);
    // never below what the error said; only the growth is capped
    const retryAfterS = err.code === 'RATE_LIMITED' ? given : Math.max(given, Math.min(this.policy.retryAfterMaxS, given + Math.floor(this.rate(now) / this.policy.retryStepPerS)));
    const due = this.notBefore.get(client);
    const holdMs = due !== undefined && due > now ? Math.min(due - now, this.policy.holdMaxMs) : 0;
    this.notBefore.delete(client); // re-inserted last: the map's order is least recently shed first
    this.notBefore.set(client, now + holdMs + retryAfterS * 1000);
    if (this.notBefore.size > MAX_CLIENTS) this.notBefore.delete(this.notBefore.keys().next().value!);
    return { err: this.serialised(err, retryAfterS), holdMs };
  }

  private serialised(err: AppError, retryAfterS: number): AppError {
    const detail = typeof err.detail === 'string' ? err.detail : '';
    const key = `${err.code}\0${retryAfterS}\0${detail}`;
    let cached = this.answers.get(key);
    if (cached === undefined) {
      if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
      cached = new AppError(err.code, err.status, err.detail, { ...err.headers, 'Retry-After': String(retryAfterS) });
      void cached.json; // serialised now, once
      this.answers.set(key, cached);
    }
    return cached;
  }
}
