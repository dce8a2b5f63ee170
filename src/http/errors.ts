/**
 * The error catalogue. Every failure a route can produce is an AppError with a stable code; the
 * mapper in middleware turns it into the FastAPI-shaped body `{"detail": ...}`, which clients of
 * the FastAPI original already parse.
 */
import { sliceCodePoints } from '../lib/code-points.js';
import type { ServiceError } from '../lib/service-error.js';
import type { IngestUnavailableError } from '../cot/shared-store.js';
import type { LedgerFullError } from '../ledger/ledger.js';
import type { StoreUnavailableError } from '../ledger/store/store.js';
import { jsonText, type JsonText } from './json-text.js';

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** At most this many issues are reported per request part (the body says how many were left out). */
export const MAX_ISSUES = 32;
/** Echoed inputs are cut to these bounds (strings in characters), so an error body stays small whatever was sent. */
const INPUT_MAX_STRING = 256;
const INPUT_MAX_ITEMS = 8;
const INPUT_MAX_DEPTH = 3;

/** A bounded copy of an echoed input: long strings cut, arrays and objects shortened, depth capped. */
export function boundInput(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    const head = sliceCodePoints(value, INPUT_MAX_STRING);
    return head.length < value.length ? `${head}…` : value;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= INPUT_MAX_DEPTH) return Array.isArray(value) ? `[array of ${value.length}]` : '{object}';
  if (Array.isArray(value)) {
    const head = value.slice(0, INPUT_MAX_ITEMS).map((v) => boundInput(v, depth + 1));
    if (value.length > INPUT_MAX_ITEMS) head.push(`… ${value.length - INPUT_MAX_ITEMS} more`);
    return head;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value);
  for (const k of keys.slice(0, INPUT_MAX_ITEMS)) out[k.length > INPUT_MAX_STRING ? `${k.slice(0, INPUT_MAX_STRING)}…` : k] = boundInput((value as Record<string, unknown>)[k], depth + 1);
  if (keys.length > INPUT_MAX_ITEMS) out['…'] = `${keys.length - INPUT_MAX_ITEMS} more keys`;
  return out;
}

/** Bounds a list of issues: at most MAX_ISSUES, each input bounded; a final issue counts the rest. */
export function boundIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const real = issues.filter((i) => i.type !== 'too_many_errors');
  let hidden = issues.filter((i) => i.type === 'too_many_errors').reduce((n, i) => n + Number(i.ctx?.total ?? 0) - Number(i.ctx?.shown ?? 0), 0);
  const kept = real.slice(0, MAX_ISSUES).map((i) => ({ ...i, input: boundInput(i.input) }));
  hidden += real.length - kept.length;
  if (hidden > 0) kept.push(tooMany(kept.length, kept.length + hidden));
  return kept;
}

export const tooMany = (shown: number, total: number): ValidationIssue => ({
  type: 'too_many_errors',
  loc: [],
  msg: `${total - shown} more issues not shown`,
  input: null,
  ctx: { shown, total },
});


export type ErrorCode =
  | 'NOT_FOUND'
  | 'ITEM_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'VALIDATION'
  | 'BAD_REQUEST'
  | 'REQUEST_TIMEOUT'
  | 'HEADERS_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'RATE_LIMITED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'QUEUE_FULL'
  | 'CAPACITY'
  | 'DEADLINE'
  | 'CLIENT_CLOSED'
  | 'INTERNAL';

/** Codes that mean "shed under load", not "broken": counted, and logged as one summary per interval. */
export const SHED_CODES: ReadonlySet<ErrorCode> = new Set(['QUEUE_FULL', 'CAPACITY', 'DEADLINE', 'RATE_LIMITED']);

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    // an answer, not a bug: only an error that is logged (a 5xx other than shedding) keeps its
    // stack; capturing one cost ~9 µs, the largest single cost of a 404
    const stackLimit = Error.stackTraceLimit;
    if (status < 500 || SHED_CODES.has(code)) Error.stackTraceLimit = 0;
    super(typeof detail === 'string' ? detail : `${code}: ${detail.length} validation issue(s)`, options);
    Error.stackTraceLimit = stackLimit;
    this.name = 'AppError';
  }

  /** 5xx details are fixed strings, never internals; 4xx details are safe to show. */
  get body(): { detail: string | ValidationIssue[] } {
    return { detail: this.detail };
  }

  #json: JsonText | undefined;

  /** The body serialised, once per error: a shared error (route.ts's 404) is serialised once. */
  get json(): JsonText {
    return (this.#json ??= jsonText(this.body));
  }
}

export const Errors = {
  notFound: () => new AppError('NOT_FOUND', 404, 'Not Found'),
  itemNotFound: (kind: string, id: string) => new AppError('ITEM_NOT_FOUND', 404, `${kind} '${id}' not found`),
  methodNotAllowed: (allow: string) => new AppError('METHOD_NOT_ALLOWED', 405, 'Method Not Allowed', { Allow: allow }),
  validation: (issues: ValidationIssue[]) => new AppError('VALIDATION', 422, boundIssues(issues)),
  badRequest: (detail: string) => new AppError('BAD_REQUEST', 400, detail),
  requestTimeout: (what: string, ms: number) => new AppError('REQUEST_TIMEOUT', 408, `${what} not received within ${ms} ms`),
  headersTooLarge: (limitBytes: number) =>
    new AppError('HEADERS_TOO_LARGE', 431, `Request line and headers too large: the limit is ${limitBytes} bytes`),
  payloadTooLarge: (limitBytes: number) => new AppError('PAYLOAD_TOO_LARGE', 413, `Request body too large: the limit is ${limitBytes} bytes`),
  unsupportedMediaType: (got: string, allowed: readonly string[]) =>
    new AppError('UNSUPPORTED_MEDIA_TYPE', 415, `Unsupported media type '${got || 'none'}': send ${allowed.join(', ')}`),
  queueFull: (retryAfterS: number) =>
    new AppError('QUEUE_FULL', 503, 'Worker pool queue is full, retry later', { 'Retry-After': String(retryAfterS) }),
  capacity: (what: string, retryAfterS: number) => new AppError('CAPACITY', 503, `${what}, retry later`, { 'Retry-After': String(retryAfterS) }),
  deadline: (budgetMs: number) => new AppError('DEADLINE', 504, `Computation exceeded its time budget of ${budgetMs} ms`),
  clientClosed: () => new AppError('CLIENT_CLOSED', 499, 'Client closed the request'),
  internal: (cause?: unknown) => new AppError('INTERNAL', 500, 'Internal Server Error', {}, { cause }),
};

/**
 * A domain error's HTTP answer, decided by its code: the one place a domain error becomes an
 * AppError. `retryAfterS` is the Retry-After of a refusal whose error names none (the smallest
 * pool.retryAfterS by default); a code without an HTTP meaning of its own is a 500 that keeps the
 * error as its cause, for the log.
 */
export function fromServiceError(err: ServiceError, retryAfterS = 1): AppError {
  switch (err.code) {
    case 'SVC_LEDGER_FULL':
      return Errors.capacity(`Ledger is full (${(err as LedgerFullError).maxNodes} nodes); nothing is evicted`, retryAfterS);
    case 'SVC_STORE_UNAVAILABLE':
      return Errors.capacity(`Ledger store unavailable: ${err.message}`, (err as StoreUnavailableError).retryAfterS);
    case 'SVC_INGEST_UNAVAILABLE':
      return Errors.capacity('CoT ingest store (PostgreSQL) unavailable', (err as IngestUnavailableError).retryAfterS);
    default:
      return Errors.internal(err);
  }
}
