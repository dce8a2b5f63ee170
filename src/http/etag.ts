/**
 * Conditional GET, one implementation for every route that sends an ETag (RFC 9110 §13.1.2):
 * `If-None-Match` uses the weak comparison (a `W/` prefix is ignored on either side), entity-tags
 * keep their quotes (an unquoted value is not an entity-tag and matches nothing), and `*` matches
 * any current representation.
 */
import type { Context } from 'koa';

export function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  // one substring search first: a long list that does not hold the tag costs no split
  if (!header.includes(opaque)) return false;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === opaque);
}

/** Sets ETag and Cache-Control; true (and 304) when the client already holds these bytes. */
export function notModified(ctx: Context, etag: string, cacheControl: string): boolean {
  ctx.set('ETag', etag);
  ctx.set('Cache-Control', cacheControl);
  const inm = ctx.get('if-none-match');
  if (inm && etagMatches(inm, etag)) {
    ctx.status = 304;
    return true;
  }
  return false;
}
