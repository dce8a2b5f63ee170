/**
 * Request bodies. A body that came with its headers is taken from the parser's buffer (`arrived`);
 * otherwise koa-body reads it (co-body → inflation + raw-body: the size limit counted
 * after decompression, 413 from the declared length before a byte is read, gzip/deflate/br); this
 * module layers on what it does not give, so every failure is the client's status, never a 500:
 * - a deadline for the whole body (408, so a trickling client cannot hold a socket for Node's
 *   300 s requestTimeout): koa-body has no timeout;
 * - Content-Encoding checked and normalised first (case, `x-gzip`; anything else 415 in our words);
 * - corrupt gzip/deflate/br is 400 (raw-body passes zlib's error on without a status: a 500);
 * - bytes that are not UTF-8 are 400/422, never silently replaced by U+FFFD: koa-body decodes
 *   with a replacing decoder, so it is asked for latin1 (one character per byte, nothing lost)
 *   and the bytes are checked and decoded here;
 * - JSON is parsed here (strict, and nested deeper than any route takes is 422 before validation),
 *   from those checked bytes: koa-body's JSON path would decode them lossily first.
 */
import { isUtf8 } from 'node:buffer';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { AppError, Errors, type ValidationIssue } from './errors.js';

export const ENCODINGS = ['identity', 'gzip', 'deflate', 'br'] as const;

/** No route takes JSON nested anywhere near this deep; deeper bodies are refused before validation. */
export const MAX_JSON_DEPTH = 64;
/**
 * No route takes anywhere near this many object members (64 frames of a dozen keys is under 1,000);
 * more are refused before JSON.parse, which spent 12 ms building an object of 20,000 keys.
 */
export const MAX_JSON_MEMBERS = 4096;

/** Object members in JSON text (colons outside strings), counted up to `max + 1`, in one pass. */
export function countJsonMembers(text: string, max: number): number {
  let n = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // the escaped character cannot end the string
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x3a && ++n > max) return n;
  }
  return n;
}

export interface BodyLimits {
  limitBytes: number;
  timeoutMs: number;
}

/** The Content-Encoding as inflation expects it, or a 415 for one it cannot decode. */
function normaliseEncoding(ctx: Context): void {
  const raw = ctx.get('content-encoding');
  if (!raw) return;
  let encoding = raw.trim().toLowerCase();
  if (encoding === 'x-gzip') encoding = 'gzip';
  if (!(ENCODINGS as readonly string[]).includes(encoding)) throw Errors.unsupportedMediaType(`Content-Encoding ${encoding}`, ENCODINGS);
  ctx.req.headers['content-encoding'] = encoding;
}

/** What koa-body (raw-body, inflation, zlib) threw, as the client's error. */
function bodyError(err: unknown, ctx: Context, limitBytes: number): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; type?: string; code?: string };
  if (e.status === 413) return Errors.payloadTooLarge(limitBytes);
  if (e.type === 'request.aborted' || e.code === 'ECONNRESET' || e.code === 'ECONNABORTED') return Errors.clientClosed();
  if (e.status === 415) return Errors.unsupportedMediaType(`Content-Encoding ${ctx.get('content-encoding')}`, ENCODINGS);
  if (e.type === 'request.size.invalid') return Errors.badRequest('Request body length does not match Content-Length');
  // zlib's errors carry a code (Z_DATA_ERROR, ERR_BROTLI_…) and no status
  if (typeof e.code === 'string' && e.status === undefined) return Errors.badRequest(`Request body could not be decoded: corrupt ${ctx.get('content-encoding')} data`);
  return Errors.internal(err);
}

/**
 * A reader for one route's bodies: the whole body as bytes (decoded from its Content-Encoding),
 * or an AppError. Any failure sets `Connection: close`: the rest of the body is not read, so the
 * connection cannot carry another request.
 */
export function bodyReader(types: readonly string[], { limitBytes, timeoutMs }: BodyLimits): (ctx: Context) => Promise<Buffer> {
  const parse = koaBody({
    parsedMethods: [HttpMethodEnum.POST],
    json: false,
    urlencoded: false,
    multipart: false,
    text: true,
    textTypes: [...types],
    textLimit: limitBytes,
    encoding: 'latin1',
  });
  return async (ctx) => {
    try {
      normaliseEncoding(ctx);
      const whole = await arrived(ctx, limitBytes);
      if (whole) return whole;
      const read = parse(ctx, async () => {});
      let timer: NodeJS.Timeout | undefined;
      let onGone: (() => void) | undefined;
      try {
        await Promise.race([
          read,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(Errors.requestTimeout('Request body', timeoutMs)), timeoutMs);
          }),
          // raw-body reads the decompressing stream, which does not see the client leave
          new Promise<never>((_, reject) => {
            onGone = () => {
              if (!ctx.req.complete) reject(Errors.clientClosed());
            };
            ctx.req.once('close', onGone);
          }),
        ]);
      } finally {
        clearTimeout(timer);
        if (onGone) ctx.req.off('close', onGone);
        // after a deadline or a disconnect the read settles later (when the socket closes): ignored
        read.catch(() => {});
      }
      const text = ctx.request.body as unknown;
      return Buffer.from(typeof text === 'string' ? text : '', 'latin1');
    } catch (err) {
      ctx.set('Connection', 'close');
      throw bodyError(err, ctx, limitBytes);
    }
  };
}

/**
 * The body when the HTTP parser already holds all of it, or null for the streaming read. A small
 * body nearly always comes in the same TCP read as its headers, and the parser has pushed all of it
 * into the request stream one microtask after the route's handler starts. Taking the declared
 * Content-Length of bytes from the stream's buffer skips koa-body's stream plumbing, a timer and
 * three promises per request (~6 µs of a verdict's main thread). Only an identity-encoded body with
 * a Content-Length within the limit is taken; anything else (compressed, chunked, too large, still
 * arriving) goes through koa-body and its checks as before.
 */
async function arrived(ctx: Context, limitBytes: number): Promise<Buffer | null> {
  const req = ctx.req;
  const declared = req.headers['content-length'];
  if (declared === undefined || req.headers['content-encoding'] !== undefined) return null;
  const size = Number(declared);
  if (!(size > 0 && size <= limitBytes)) return null;
  if (req.readableLength < size) await undefined;
  // the parser frames the body by its Content-Length, so this many buffered bytes are all of it
  if (req.readableLength !== size || req.readableFlowing || req.readableEnded) return null;
  return req.read() as Buffer;
}

/** UTF-8 text, refusing invalid sequences (a replacement character would change what was signed or stored). */
export function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw Errors.badRequest('Request body is not valid UTF-8');
  return bytes.toString('utf8');
}

const jsonIssue = (error: string, pos = 0): ValidationIssue => ({ type: 'json_invalid', loc: ['body', pos], msg: 'JSON decode error', input: {}, ctx: { error } });

/** Strict JSON (an object or an array at the top, like koa-body's jsonStrict), depth-checked. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (!isUtf8(bytes)) throw Errors.validation([jsonIssue('body is not valid UTF-8')]);
  const text = bytes.toString('utf8');
  const first = /\S/.exec(text);
  if (!first || (first[0] !== '{' && first[0] !== '[')) throw Errors.validation([jsonIssue('Expected an object or an array', first?.index ?? 0)]);
  if (countJsonMembers(text, MAX_JSON_MEMBERS) > MAX_JSON_MEMBERS) {
    throw Errors.validation([
      { type: 'too_many_members', loc: ['body'], msg: `JSON body should have at most ${MAX_JSON_MEMBERS} object members`, input: null, ctx: { max_members: MAX_JSON_MEMBERS } },
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const message = (err as Error).message;
    const pos = /position (\d+)/.exec(message)?.[1];
    throw Errors.validation([jsonIssue(message.replace(/^.*?:\s*/, ''), pos ? Number(pos) : 0)]);
  }
  if (tooDeep(value, MAX_JSON_DEPTH)) throw Errors.validation([jsonIssue(`nested deeper than ${MAX_JSON_DEPTH} levels`)]);
  return value;
}

/** Iterative (no recursion, so no stack to overflow), stops at the first path deeper than `max`. */
export function tooDeep(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, d + 1]);
  }
  return false;
}
