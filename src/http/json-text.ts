/**
 * JSON serialised once and answered many times (the doctrine; /health within its cache window):
 * the same bytes and headers, in the same order, as Koa gives the object it serialises on every
 * answer. Koa sets Content-Length for an object when it responds, after the context middleware
 * has added the Content-Security-Policy; for a string it would set it at once, so the length is
 * held back here and set by the context middleware after the policy (RequestState.jsonText).
 */
import type { Context } from 'koa';
import type { RequestState } from './middleware.js';

export interface JsonText {
  text: string;
  bytes: number;
}

export function jsonText(value: unknown): JsonText {
  const text = JSON.stringify(value);
  return { text, bytes: Buffer.byteLength(text) };
}

/** What Koa's `ctx.type = 'application/json'` sets, without its per-call MIME lookup. */
export const JSON_TYPE = 'application/json; charset=utf-8';

export function sendJsonText(ctx: Context, body: JsonText): void {
  ctx.res.setHeader('Content-Type', JSON_TYPE);
  ctx.body = body.text;
  ctx.remove('Content-Length');
  (ctx.state as RequestState).jsonText = body;
}
