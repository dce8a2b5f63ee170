/**
 * The error catalogue. Every failure a route can produce is an AppError with a stable code; the
 * mapper in middleware turns it into the FastAPI-shaped body `{"detail": ...}` (design section 2).
 */

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export type ErrorCode =
  | 'NOT_FOUND'
  | 'ITEM_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'VALIDATION'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'QUEUE_FULL'
  | 'CAPACITY'
  | 'DEADLINE'
  | 'CLIENT_CLOSED'
  | 'BAD_GATEWAY'
  | 'INTERNAL';

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly detail: string | ValidationIssue[],
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(typeof detail === 'string' ? detail : `${code}: ${detail.length} validation issue(s)`, options);
    this.name = 'AppError';
  }

  /** 5xx details are fixed strings, never internals; 4xx details are safe to show. */
  get body(): { detail: string | ValidationIssue[] } {
    return { detail: this.detail };
  }
}

export const Errors = {
  notFound: () => new AppError('NOT_FOUND', 404, 'Not Found'),
  itemNotFound: (kind: string, id: string) => new AppError('ITEM_NOT_FOUND', 404, `${kind} '${id}' not found`),
  methodNotAllowed: (allow: string) => new AppError('METHOD_NOT_ALLOWED', 405, 'Method Not Allowed', { Allow: allow }),
  validation: (issues: ValidationIssue[]) => new AppError('VALIDATION', 422, issues),
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
