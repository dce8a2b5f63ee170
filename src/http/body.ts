/**
 * Request bodies, read by hand so every failure is the client's status, not a 500: a size limit
 * counted after decompression (413), a deadline for the whole body (408, so a trickling client
 * cannot hold a socket for Node's 300 s requestTimeout), corrupt gzip/deflate/br (400), unknown
 * encodings (415), bytes that are not UTF-8 (400, never silently replaced by U+FFFD), and JSON
 * nested deeper than any route takes (422 before validation).
 */
import { isUtf8 } from 'node:buffer';
import type { Context } from 'koa';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable, Transform } from 'node:stream';
import { AppError, Errors, type ValidationIssue } from './errors.js';

export const ENCODINGS = ['identity', 'gzip', 'deflate', 'br'] as const;

/** No route takes JSON nested anywhere near this deep; deeper bodies are refused before validation. */
export const MAX_JSON_DEPTH = 64;

export interface BodyLimits {
  limitBytes: number;
  timeoutMs: number;
}

function decoder(encoding: string): Transform | null {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return null;
  }
}

/** The whole body as bytes (decoded from its Content-Encoding), or an AppError. */
export function readBody(ctx: Context, { limitBytes, timeoutMs }: BodyLimits): Promise<Buffer> {
  const req = ctx.req;
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  const declared = Number(ctx.get('content-length') || NaN);
  if (encoding === 'identity' && Number.isFinite(declared) && declared > limitBytes) {
    ctx.set('Connection', 'close');
    return Promise.reject(Errors.payloadTooLarge(limitBytes));
  }
  let source: Readable = req;
  if (encoding !== 'identity') {
    const d = decoder(encoding);
    if (!d) return Promise.reject(Errors.unsupportedMediaType(`Content-Encoding ${encoding}`, ENCODINGS));
    source = req.pipe(d);
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: AppError | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      source.off('data', onData);
      if (err) {
        // the rest of the body is not read: this connection cannot carry another request
        ctx.set('Connection', 'close');
        if (source !== req) source.destroy();
        req.unpipe();
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const timer = setTimeout(() => finish(Errors.requestTimeout('Request body', timeoutMs)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limitBytes) finish(Errors.payloadTooLarge(limitBytes));
      else chunks.push(chunk);
    };
    source.on('data', onData);
    source.once('end', () => finish(null));
    source.once('error', (err: NodeJS.ErrnoException) => {
      if (source !== req && err.code !== 'ECONNRESET') finish(Errors.badRequest(`Request body could not be decoded: corrupt ${encoding} data`));
      else finish(Errors.clientClosed());
    });
    req.once('aborted', () => finish(Errors.clientClosed()));
    if (source !== req) req.once('error', () => finish(Errors.clientClosed()));
  });
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
