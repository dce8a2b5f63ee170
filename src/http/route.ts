/**
 * One route = one declaration: method, path, joi schemas for query/path/body and the response,
 * handler. `mountRoutes` wires them into @koa/router with validation, body limits, content-type
 * checks and an AbortSignal tied to the client connection; the same table feeds /openapi.json.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Context } from 'koa';
import type { AnySchema, ObjectSchema, Schema } from 'joi';
import { Errors, type ValidationIssue } from './errors.js';
import { sendError } from './middleware.js';
import { bodyReader, parseJsonBody, utf8Text } from './body.js';
import { throwIfIssues, validatePart } from './validation.js';
import { RecentMemo } from '../lib/memo.js';
import type { ValueOf } from '../lib/params.js';
import type { Logger } from '../observability/logger.js';
import type { HtmlPolicy } from './csp.js';
import type { ComponentId } from '../introspection/components.js';
import { API } from '../isomorphic/api.js';

export type Method = 'GET' | 'POST';

export interface RouteInput<Q, P, B> {
  query: Q;
  params: P;
  body: B;
  ctx: Context;
  /** Aborted when the client disconnects before the response is written. */
  signal: AbortSignal;
  log: Logger;
}

/** `kernel`: work in the pool; `stream`: a long-lived response. */
export type CostClass = 'cheap' | 'kernel' | 'stream';

/** One named request body of the docs: a line saying what it shows, and the body itself. */
export interface RequestExample {
  summary: string;
  value: unknown;
}

export interface RouteDef<Q = unknown, P = unknown, B = unknown> {
  method: Method;
  /**
   * @koa/router path (`:name` for path parameters), relative to the API prefix (src/isomorphic/api.ts),
   * which is applied once when the app mounts its routes; absolute when `root` is set.
   */
  path: string;
  /** Served outside the API prefix (pages, /metrics, the khipu routes): `path` is absolute. */
  root?: true;
  summary: string;
  /** Longer text for the docs: rules the handler checks across parameters (422 `value_error`), formats. */
  description?: string;
  /** Feature area, used as the OpenAPI tag. */
  tag: string;
  query?: ObjectSchema;
  params?: ObjectSchema;
  /** Body schema for JSON bodies; `text` takes the raw body of one of `bodyTypes` as a string. */
  body?: ObjectSchema | 'text';
  bodyTypes?: readonly string[];
  bodyLimitBytes?: number;
  /** Named request bodies for the docs (OpenAPI `examples` of the request body), each one the server accepts. */
  examples?: Readonly<Record<string, RequestExample>>;
  /** A value for query and path parameters for the docs (each parameter's OpenAPI `example`), one the server accepts. */
  parameterExamples?: Readonly<Record<string, unknown>>;
  /** A real success body for the docs (the 200 response's OpenAPI `example`); it must match `response`. */
  responseExample?: unknown;
  /** Response media type for the docs (default application/json); several when the body's type varies (asset files). */
  produces?: string | readonly string[];
  /**
   * The success body, as joi (converted to JSON Schema for /openapi.json; the test app checks every
   * 2xx body a test receives against it). JSON routes describe their keys (see response-schema.ts);
   * HTML, XML, text, PEM and SSE routes a string of their `produces` media type.
   */
  response: Schema;
  /** Statuses besides 2xx whose body is the success body (a readiness probe's 503). */
  responseAlsoOn?: readonly number[];
  /** Error statuses this route can answer besides 422 (for the docs). */
  errors?: readonly number[];
  /** The kernel this route runs in the pool (its id), for per-kernel accounting. */
  kernel?: string;
  /** Served HTML, and the CSP it runs under (csp.ts): `ui` for our pages, `docs` for Swagger UI. */
  html?: HtmlPolicy;
  /** A write (appends, stores or refreshes state): needs the write token when configured, and is rate limited per client. */
  write?: boolean;
  /**
   * What the handler reaches: ids of src/introspection/components.ts (`validator` is implied by the
   * route's schemas). The security inventory, the attack surface and the wiring board's call counts
   * are derived from these declarations, so a new route states its reach where it is declared.
   */
  uses: readonly ComponentId[];
  /** Components whose state the route changes (the ledger, the scene buffer, CoT tracks); none when absent. */
  mutates?: readonly ComponentId[];
  /** Makes outbound requests (an ADS-B upstream fetch or probe). */
  egress?: boolean;
  /** Default: `kernel` when `kernel` is set, else `cheap`. */
  cost?: CostClass;
  /**
   * The validated query depends on the query string alone (no defaults from the clock or from
   * state) and the handler never mutates it: it is validated once per distinct query string and
   * reused while recent (a bounded memo: QUERY_MEMO_SIZE strings of at most QUERY_MEMO_KEY_MAX
   * characters).
   */
  pureQuery?: boolean;
  handler(input: RouteInput<Q, P, B>): unknown;
}

/** Every joi schema of a route table (query, path and JSON body). */
export function* routeSchemas(routes: readonly RouteDef[]): Generator<ObjectSchema> {
  for (const r of routes) {
    if (r.query) yield r.query;
    if (r.params) yield r.params;
    if (r.body && r.body !== 'text') yield r.body;
  }
}

/**
 * What a handler receives of a request part: the type its schema validates to (`objectOf`,
 * `typed`, or joi's own `Joi.object<T>`), a string for a text body, `unknown` for an untyped schema.
 */
export type PartOf<S> = S extends 'text' ? string : unknown extends ValueOf<S> ? JoiValue<S> : ValueOf<S>;

/** The type a joi schema states (`Joi.object<T>(…)`); `unknown` where joi says `any`. */
type JoiValue<S> = S extends AnySchema<infer T> ? (0 extends 1 & T ? unknown : T) : unknown;

/** A route as declared: the handler's input is typed by the route's own schemas (`objectOf`, `typed` in src/lib/params.ts). */
export type RouteDecl<QS, PS, BS> = Omit<RouteDef, 'query' | 'params' | 'body' | 'handler'> & {
  query?: QS;
  params?: PS;
  body?: BS;
  handler(input: RouteInput<PartOf<QS>, PartOf<PS>, PartOf<BS>>): unknown;
};

/** A route whose handler reads `query`, `params` and `body` as their schemas type them (`unknown` for an untyped schema). */
export function defineRoute<QS extends ObjectSchema | undefined = undefined, PS extends ObjectSchema | undefined = undefined, BS extends ObjectSchema | 'text' | undefined = undefined>(
  def: RouteDecl<QS, PS, BS>,
): RouteDef<PartOf<QS>, PartOf<PS>, PartOf<BS>> {
  return def;
}

/** The route as the app mounts it: the one place the API prefix is applied. */
export function atMountPath(def: RouteDef): RouteDef {
  return def.root ? def : { ...def, path: API + def.path };
}

export interface MountOptions {
  jsonLimitBytes: number;
  /** Longest a request body may take to arrive (408 after). */
  bodyTimeoutMs: number;
}

function hasBody(ctx: Context): boolean {
  const len = ctx.get('content-length');
  return (len !== '' && len !== '0') || ctx.get('transfer-encoding') !== '';
}

type Handler = (ctx: Context) => Promise<void>;

/** Distinct query strings whose validation a `pureQuery` route keeps, and the longest kept. */
export const QUERY_MEMO_SIZE = 256;
export const QUERY_MEMO_KEY_MAX = 1024;

/**
 * What a handler receives. A class, not an object literal with getters: measured with the literal
 * (two getter closures per request), each scavenge under load promoted ~3 MB (~11 KB a request) and
 * took 20-40 ms, 20-30 % of the main thread in GC; with the class the young generation is collected
 * whole (<1 ms) and the heap stays flat. Whatever V8 does with such a literal's objects, they
 * outlived the request and kept it alive.
 */
class Input implements RouteInput<unknown, unknown, unknown> {
  private controller: AbortController | undefined = undefined;

  constructor(
    readonly query: unknown,
    readonly params: unknown,
    readonly body: unknown,
    readonly ctx: Context,
  ) {}

  /** Made on first use: most handlers never wait on anything abortable. */
  get signal(): AbortSignal {
    if (!this.controller) {
      const c = (this.controller = new AbortController());
      const res = this.ctx.res;
      const gone = (): void => {
        if (!res.writableFinished) c.abort(Errors.clientClosed());
      };
      if (res.closed) gone();
      else res.once('close', gone);
    }
    return this.controller.signal;
  }

  get log(): Logger {
    return this.ctx.state.log as Logger;
  }
}

/** Compiles one declaration into a Koa handler: body parsing, validation, abort signal, result. */
function compile(def: RouteDef, opts: MountOptions): Handler {
  const accepted = def.bodyTypes ?? (def.body === 'text' ? ['text/plain'] : ['application/json']);
  const readBody = bodyReader(accepted, { limitBytes: def.bodyLimitBytes ?? opts.jsonLimitBytes, timeoutMs: opts.bodyTimeoutMs });
  const queryMemo = def.pureQuery && def.query ? new RecentMemo<ReturnType<typeof validatePart>>(QUERY_MEMO_SIZE, QUERY_MEMO_KEY_MAX) : null;
  const handler = async (ctx: Context): Promise<void> => {
    const validateQuery = () => validatePart(def.query, 'query', { ...ctx.query });
    let body: unknown;
    if (def.body && ctx.method === 'POST' && hasBody(ctx)) {
      if (!ctx.is(...accepted)) {
        ctx.set('Connection', 'close'); // the unread body stays on the socket
        throw Errors.unsupportedMediaType(ctx.get('content-type'), accepted);
      }
      const bytes = await readBody(ctx);
      body = def.body === 'text' ? utf8Text(bytes) : parseJsonBody(bytes);
    }
    const issues: ValidationIssue[] = [];
    const params = validatePart(def.params, 'path', ctx.params ?? {});
    const query = queryMemo ? queryMemo.get(ctx.querystring, validateQuery) : validateQuery();
    issues.push(...params.issues, ...query.issues);
    let bodyValue: unknown = body;
    if (def.body && def.body !== 'text') {
      if (body === undefined) issues.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null });
      else {
        const b = validatePart(def.body, 'body', body);
        issues.push(...b.issues);
        bodyValue = b.value;
      }
    } else if (def.body === 'text' && (body === undefined || body === '')) {
      issues.push({ type: 'missing', loc: ['body'], msg: 'Field required', input: null });
    }
    throwIfIssues(issues);

    if (def.html) ctx.state.html = def.html;
    const result = await def.handler(new Input(query.value, params.value, bodyValue, ctx));
    if (result !== undefined) ctx.body = result;
  };
  return handler;
}

const PARAM = /[:*{(]/;
/** One 404 for every unknown path (an error is only read when answered), serialised once. */
const NOT_FOUND = Errors.notFound();
const isStatic = (path: string): boolean => !PARAM.test(path);

/** RFC 9110 §9.3.7, §10.2.1: what a path serves; GET implies HEAD, and OPTIONS is always answered. */
export function allowHeader(methods: Iterable<string>): string {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  set.add('OPTIONS');
  return ['GET', 'HEAD', 'POST', 'OPTIONS'].filter((m) => set.has(m)).join(', ');
}

/**
 * One middleware for every route. Static paths (nearly every route) are dispatched by one Map
 * lookup; only parameterised paths go through @koa/router, whose per-layer regex matching halved
 * throughput at ~100 routes (measured), and only a path that starts with the literal head of a
 * parameterised path does (case-insensitively, as the router matches): an unknown path is answered
 * without a regex. What no route took is answered the same way for every path: a path served
 * under other methods is 405 JSON with its Allow (never 501, whatever the method), OPTIONS is 204
 * with Allow, and an unknown path is 404 JSON for every method. Those answers are written here
 * (sendError, as the error mapper would), not thrown through the chain.
 */
export function mountRoutes(router: Router, routes: readonly RouteDef[], opts: MountOptions): Koa.Middleware {
  const table = new Map<string, Map<string, Handler>>();
  const routerHeads: string[] = [];
  for (const def of routes) {
    const handler = compile(def, opts);
    if (isStatic(def.path)) {
      const byMethod = table.get(def.path) ?? new Map<string, Handler>();
      if (byMethod.has(def.method)) throw new Error(`route ${def.method} ${def.path} declared twice`);
      byMethod.set(def.method, handler);
      table.set(def.path, byMethod);
    } else {
      router.register(def.path, [def.method], handler as never, { name: def.path });
      const head = def.path.slice(0, def.path.search(PARAM)).toLowerCase();
      if (!routerHeads.includes(head)) routerHeads.push(head);
    }
  }
  const mayBeParameterised = (path: string): boolean => {
    const lower = path.toLowerCase();
    for (const head of routerHeads) if (lower.startsWith(head)) return true;
    return false;
  };
  const unmatched = (ctx: Context, methods: readonly string[]): void => {
    if (methods.length === 0) return sendError(ctx, NOT_FOUND);
    const allow = allowHeader(methods);
    if (ctx.method === 'OPTIONS') {
      ctx.status = 204;
      ctx.set('Allow', allow);
      return;
    }
    sendError(ctx, Errors.methodNotAllowed(allow));
  };
  return async function routeDispatch(ctx, next) {
    const path = ctx.path;
    const byMethod = table.get(path);
    if (byMethod) {
      const handler = byMethod.get(ctx.method === 'HEAD' ? 'GET' : ctx.method);
      if (!handler) return unmatched(ctx, [...byMethod.keys()]);
      ctx._matchedRoute = path;
      return handler(ctx);
    }
    if (!mayBeParameterised(path)) return unmatched(ctx, []);
    await next();
    if (ctx._matchedRoute !== undefined || ctx.body != null || ctx.status !== 404) return;
    // the router left the layers whose path matched (any method) in ctx.matched
    const layers = (ctx.matched ?? []) as { methods: string[] }[];
    unmatched(ctx, [...new Set(layers.flatMap((l) => l.methods))].filter((m) => m !== 'HEAD'));
  };
}
