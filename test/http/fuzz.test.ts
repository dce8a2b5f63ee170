import { expect } from 'chai';
import fc from 'fast-check';
import type { ObjectSchema } from 'joi';
import { withTestApp } from '../helpers/app.js';
import { loopBlockDuring } from '../helpers/loop-block.js';
import type { RouteDef } from '../../src/http/route.js';

// Valid and invalid requests for every route of the route table, for a bounded time. Asserts no 5xx
// (503 only where a route declares a capacity answer), well-formed bounded error bodies, no hung
// request, and a main thread (the app's) that never blocks long enough to keep /health waiting.
const FUZZ_MS = Number(process.env.FUZZ_MS ?? 8_000);
const MAX_ERROR_BODY = 64 * 1024;
// a request unanswered this long has hung (one that hangs ends the run), however loaded the machine
const HUNG_MS = 60_000;

type Described = { keys?: Record<string, unknown> };
const keysOf = (schema: ObjectSchema | 'text' | undefined): string[] =>
  schema && schema !== 'text' ? Object.keys((schema.describe() as Described).keys ?? {}) : [];

const scalar = fc.oneof(
  fc.integer({ min: -5, max: 70_000 }).map(String),
  fc.constantFrom('0', '1', '-1', '1e3', '1.5', ' 5', 'NaN', 'Infinity', 'true', 'yes', '', '4294967296', '99999999999999999999'),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

const jsonValue = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue({ maxDepth: 4 }),
  fc.integer({ min: 1, max: 80 }).map((n) => Array.from({ length: n * 100 }, () => ({}))),
  fc.integer({ min: 60, max: 200 }).map((d) => JSON.parse('['.repeat(d) + ']'.repeat(d)) as unknown),
);

function request(def: RouteDef) {
  const queryKeys = keysOf(def.query);
  const bodyKeys = keysOf(def.body);
  const pathParams = [...def.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  return fc.record({
    params: fc.tuple(...pathParams.map(() => fc.oneof(fc.constantFrom('mar-001', 'svc-track-mar-001', '0', 'x'), fc.string({ minLength: 1, maxLength: 30 })))),
    query: fc.dictionary(fc.oneof(fc.constantFrom(...(queryKeys.length ? queryKeys : ['q'])), fc.constantFrom('__proto__', 'sed', 'x')), scalar, { maxKeys: 4 }),
    body: def.body === 'text'
      ? fc.oneof(fc.string({ maxLength: 200 }), fc.constantFrom('<event/>', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>', '<event version="2.0"'))
      : fc.oneof(fc.dictionary(fc.constantFrom(...(bodyKeys.length ? bodyKeys : ['k']), 'extra'), jsonValue, { maxKeys: 5 }), jsonValue),
  });
}

describe('fuzz: every route of the route table', function () {
  this.timeout(FUZZ_MS + 2 * HUNG_MS + 60_000);
  const app = withTestApp();
  before(() => app().services.pool.ready());

  it(`no 5xx, bounded well-formed error bodies, /health responsive, for ${FUZZ_MS / 1000} s`, async () => {
    const routes = app().routes.filter((r) => !r.path.startsWith('/docs'));
    const healthMs: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        await fetch(`${app().baseUrl}/api/svc/v1/health`).then((r) => r.arrayBuffer());
        healthMs.push(performance.now() - started);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    let runs = 0;
    const failures: string[] = [];
    const { blockMs } = await loopBlockDuring(() => fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes).chain((def) => request(def).map((req) => ({ def, req }))), async ({ def, req }) => {
        runs++;
        let path = def.path;
        for (const p of req.params) path = path.replace(/:\w+/, encodeURIComponent(p));
        const qs = new URLSearchParams(Object.entries(req.query)).toString();
        const url = `${app().baseUrl}${path}${qs ? `?${qs}` : ''}`;
        const init: RequestInit = { method: def.method, signal: AbortSignal.timeout(HUNG_MS) };
        if (def.method === 'POST') {
          init.body = typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
          init.headers = { 'content-type': def.body === 'text' ? 'application/xml' : 'application/json' };
        }
        let res: Response;
        try {
          res = await fetch(url, init);
        } catch (err) {
          failures.push(`${def.method} ${url.slice(0, 200)}: ${(err as Error).name === 'TimeoutError' ? `no answer within ${HUNG_MS / 1000} s` : String(err)}`);
          return false;
        }
        const where = `${def.method} ${url.slice(0, 200)} -> ${res.status}`;
        if (res.ok && res.headers.get('content-type')?.startsWith('text/event-stream')) {
          // a stream never ends by itself: its first event is the check, then the viewer leaves
          // (waiting for the end would spend the whole time budget on one request)
          const reader = res.body!.getReader();
          const first = new TextDecoder().decode((await reader.read()).value);
          await reader.cancel();
          if (!first.startsWith('retry: ')) failures.push(`${where}: stream opened with ${JSON.stringify(first.slice(0, 100))}`);
          return failures.length === 0;
        }
        const text = await res.text();
        const capacity = res.status === 503 && (def.errors?.includes(503) || /readiness|health/.test(def.path));
        if (res.status >= 500 && !capacity) failures.push(`${where}: ${text.slice(0, 200)}`);
        if (res.status >= 400) {
          if (text.length > MAX_ERROR_BODY) failures.push(`${where}: error body of ${text.length} bytes`);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            failures.push(`${where}: error body is not JSON: ${text.slice(0, 100)}`);
          }
          if (body !== undefined && !(body && typeof body === 'object' && 'detail' in body)) failures.push(`${where}: no detail`);
        }
        return failures.length === 0;
      }),
      { numRuns: 1_000_000, interruptAfterTimeLimit: FUZZ_MS, markInterruptAsFailure: false, endOnFailure: true },
    ).catch((err: unknown) => failures.push(String(err).slice(0, 2000))));
    polling = false;
    await poller;
    expect(failures).to.deep.equal([]);
    // ~1,000 in 8 s on a quiet machine, a few dozen on a loaded one; a hung request fails above
    expect(runs).to.be.greaterThan(0);
    healthMs.sort((a, b) => a - b);
    const p95 = healthMs[Math.floor(healthMs.length * 0.95)]!;
    console.log(`      fuzz: ${runs} requests over ${routes.length} routes; longest main-thread stretch ${blockMs.toFixed(1)} ms of CPU; /health p50 ${healthMs[Math.floor(healthMs.length / 2)]!.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (wall, for information)`);
    // what /health waits for at most is the longest stretch of main-thread work (the fuzzing client's
    // included), in CPU time so a loaded machine does not count; a blocking route shows as seconds
    expect(blockMs, 'longest main-thread stretch, ms of CPU').to.be.below(500);
  });
});
