/**
 * Every response a test receives from a test app is checked against its route's declared
 * `response` (RouteDef), as /openapi.json documents it: the joi schema converted to JSON Schema by
 * the same code, validated with Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1). A 2xx body
 * (or one on a status of `responseAlsoOn`) that does not match, or that arrives under another
 * media type than the route declares, is recorded and replaced by a 500 naming the mismatch, so
 * the test that made the request fails where it reads it; a root `after` hook fails the run with
 * any mismatch no test took. Validators are compiled once per schema object, on first use.
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { newAjv } from '../../src/docs/ajv.js';
import type Koa from 'koa';
import type { Schema } from 'joi';
import { Readable } from 'node:stream';
import { toJsonSchema } from '../../src/docs/joi-to-json-schema.js';
import type { RouteDef } from '../../src/http/route.js';


const ajv = newAjv({ strict: true, allErrors: true });

const validators = new WeakMap<Schema, ValidateFunction>();

/** The Ajv validator of a route's response schema (compiled once per schema object). */
export function responseValidator(schema: Schema): ValidateFunction {
  let v = validators.get(schema);
  if (!v) validators.set(schema, (v = ajv.compile(toJsonSchema(schema))));
  return v;
}

export interface ResponseMismatch {
  request: string;
  route: string;
  status: number;
  problems: string[];
}

const mismatches: ResponseMismatch[] = [];

/** Removes and returns what was recorded (the checker's own tests; the root hook uses it too). */
export function takeResponseMismatches(): ResponseMismatch[] {
  return mismatches.splice(0, mismatches.length);
}

export function describeMismatches(list: readonly ResponseMismatch[]): string {
  return list.map((m) => `${m.request} → ${m.status} (route ${m.route}):\n    ${m.problems.join('\n    ')}`).join('\n  ');
}

function mediaTypes(def: RouteDef): readonly string[] {
  const p = def.produces ?? 'application/json';
  return typeof p === 'string' ? [p] : p;
}

const isJsonType = (t: string): boolean => t === 'application/json' || t.endsWith('+json');

/** The body as it goes on the wire (Koa serialises objects with JSON.stringify), or undefined for streams. */
function wireText(body: unknown): string | undefined {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (body instanceof Readable) return undefined;
  return JSON.stringify(body);
}

/** Checks one finished response against its route; returns the problems (empty when it matches). */
export function checkResponse(def: RouteDef, type: string, body: unknown): string[] {
  const declared = mediaTypes(def);
  if (!declared.includes(type)) return [`media type ${type || '(none)'} is not the declared ${declared.join(' or ')}`];
  const text = wireText(body);
  if (text === undefined) return [];
  let value: unknown = text;
  if (isJsonType(type)) {
    try {
      value = JSON.parse(text);
    } catch {
      return [`the ${type} body is not JSON`];
    }
  }
  const validate = responseValidator(def.response);
  if (validate(value)) return [];
  return (validate.errors ?? []).slice(0, 8).map((e) => `${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''}`);
}

/** Koa middleware for the test app (outermost): matches the request to its route and checks what it sends. */
export function responseChecker(routes: readonly RouteDef[]): Koa.Middleware {
  const byKey = new Map(routes.map((r) => [`${r.method} ${r.path}`, r]));
  return async (ctx, next) => {
    await next();
    if (ctx.method === 'HEAD' || ctx.method === 'OPTIONS') return;
    const template = (ctx as unknown as { _matchedRoute?: unknown })._matchedRoute;
    if (typeof template !== 'string') return;
    const def = byKey.get(`${ctx.method} ${template}`);
    if (!def) return;
    const status = ctx.status;
    const success = status >= 200 && status < 300 && status !== 204;
    if (!success && !def.responseAlsoOn?.includes(status)) return;
    if (ctx.body == null) return; // SSE: the hub writes the response itself
    const problems = checkResponse(def, ctx.type, ctx.body);
    if (!problems.length) return;
    const mismatch = { request: `${ctx.method} ${ctx.url}`, route: `${def.method} ${def.path}`, status, problems };
    mismatches.push(mismatch);
    // the test that made the request sees a failure where it reads the response
    ctx.status = MISMATCH_STATUS;
    ctx.type = 'application/json';
    ctx.body = { detail: `response does not match its route's declared schema: ${describeMismatches([mismatch])}` };
  };
}

/** What a test receives instead of a response that does not match its schema. */
export const MISMATCH_STATUS = 500;

// Under mocha: a root `after` hook fails the run with every mismatch no test took, so a test that
// ignored the 500 it got still cannot pass the suite (an afterEach failure would stop every later
// test; registered once, when the first test file imports the test app helper).
if (typeof after === 'function') {
  after(() => {
    const found = takeResponseMismatches();
    if (found.length) throw new Error(`responses did not match their routes' declared schemas:\n  ${describeMismatches(found)}`);
  });
}
