/**
 * The query string, parsed once in linear time with a bound on its parameter count. Koa's own
 * parser calls URLSearchParams.getAll() once per key, which is quadratic in repeated keys: 32,000
 * `a&` cost 25 s of main-thread CPU.
 */
import { Errors } from './errors.js';

/** More parameters than any route declares, by far; above it the request is refused unparsed. */
export const MAX_QUERY_PARAMS = 128;

export type Query = Record<string, string | string[]>;

/** Non-empty `&`-separated pieces, counted without allocating (URLSearchParams skips empty ones). */
export function countQueryParams(qs: string): number {
  let n = 0;
  let pieceStart = 0;
  for (let i = 0; i <= qs.length; i++) {
    if (i === qs.length || qs.charCodeAt(i) === 0x26) {
      if (i > pieceStart) n++;
      pieceStart = i + 1;
    }
  }
  return n;
}

/**
 * A null-prototype object of the query's values; a repeated key gives an array in order. Throws
 * 422 `too_many_parameters` above `max`, before any piece is decoded.
 */
export function parseQuery(qs: string, max = MAX_QUERY_PARAMS): Query {
  const out = Object.create(null) as Query;
  if (qs === '') return out;
  const count = countQueryParams(qs);
  if (count > max) {
    throw Errors.validation([
      { type: 'too_many_parameters', loc: ['query'], msg: `Query should have at most ${max} parameters, not ${count}`, input: null, ctx: { max_parameters: max, actual: count } },
    ]);
  }
  for (const [key, value] of new URLSearchParams(qs)) {
    const held = out[key];
    if (held === undefined) out[key] = value;
    else if (typeof held === 'string') out[key] = [held, value];
    else held.push(value);
  }
  return out;
}

const PARSED = Symbol('parsedQuery');

/** Makes `ctx.query` (and `ctx.request.query`) of every request of `app` the bounded linear parse. */
export function useBoundedQuery(app: { request: object }): void {
  Object.defineProperty(app.request, 'query', {
    configurable: true,
    get(this: { querystring: string; [PARSED]?: { qs: string; query: Query } }): Query {
      const qs = this.querystring;
      const held = this[PARSED];
      if (held !== undefined && held.qs === qs) return held.query;
      const query = parseQuery(qs);
      this[PARSED] = { qs, query };
      return query;
    },
  });
}
