/**
 * `npm run docs:examples`: writes src/docs/operation-examples.json
 * (src/docs/operation-examples.ts) from a fresh app with a memory ledger: each operation without
 * examples of its own (kernels bring theirs) is called once with its example parameters and body, and its JSON answer, cut short,
 * becomes the response example. A development script: it needs ajv, a devDependency.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { newAjv } from './ajv.js';
import { buildApp } from '../app.js';
import { loadConfig, projectRoot } from '../config/load.js';
import type { RequestExample, RouteDef } from '../http/route.js';
import { toJsonSchema, type JsonSchema } from './joi-to-json-schema.js';
import { isTextType, OPERATION_EXAMPLES_FILE, shortened, textExcerpt, type OperationExample } from './operation-examples.js';
import { documentedRoutes } from './openapi.js';

const ajv = newAjv({ strict: false });
const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** Whether `value` matches a part of `root`: the part is compiled with the root's `$defs`, which its references name. */
function matcher(root: JsonSchema): (schema: JsonSchema, value: unknown) => boolean {
  return (schema, value) => {
    let v = compiled.get(schema);
    if (!v) compiled.set(schema, (v = ajv.compile(root.$defs && schema !== root ? { ...schema, $defs: root.$defs } : schema)));
    return v(value);
  };
}

const FRAME = { track_id: 'EX-EDGE-1', source: 'ADS-B', lat: 36.2, lon: -115.1, alt_m: 120, speed_mps: 12, heading_deg: 90, rssi_dbm: -60, id_authenticated: true, timestamp_skew_s: 0, n_observations: 40 };
const COT_EVENT =
  '<event version="2.0" uid="EX-COT-1" type="a-f-A-M-F-Q" how="m-g" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2026-01-01T00:05:00Z">' +
  '<point lat="36.2" lon="-115.2" hae="1200.5" ce="10" le="5"/><detail><contact callsign="RAVEN"/><track course="90.5" speed="42.1"/></detail></event>';

interface Call {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: Record<string, RequestExample>;
  /** Not called (a stream): only its parameters are documented. */
  noCall?: true;
}

/** The requests of the operations that take parameters or a body, from what the first calls returned. */
function calls(found: { keyid: string; dsse: unknown; asset: string; jackin: string; shared: string }): Record<string, Call> {
  return {
    'GET /api/svc/v1/ledger/tile/*tile': { params: { tile: '0/000.p/1' } },
    'GET /api/svc/v1/receipt/proof': { query: { index: 0 } },
    'GET /api/svc/v1/receipt/export': { query: { index: 0 } },
    'GET /api/svc/v1/edge/pubkey.pem': { query: { keyid: found.keyid } },
    'POST /khipu/verify': { body: { dsse: { summary: 'the DSSE envelope of a verdict receipt (verified: true)', value: { dsse: found.dsse } } } },
    'GET /api/svc/khipu/dag': { query: { request: '{"node":0,"proof":true}' } },
    'GET /api/svc/v1/stream/verdicts': { query: { last_event_id: '0' }, noCall: true },
    'POST /api/svc/v1/edge/3d': { body: { one_frame: { summary: 'a batch of one telemetry frame', value: { frames: [FRAME] } } } },
    'GET /api/svc/v1/adsb': { query: { lat_min: 30, lat_max: 40, lon_min: -120, lon_max: -110 } },
    'GET /api/svc/v1/cot/export/:track_id': { params: { track_id: 'mar-001' } },
    'POST /api/svc/v1/cot/ingest': { body: { event: { summary: 'a CoT 2.0 event of a friendly aircraft', value: COT_EVENT } } },
    'GET /api/svc/v1/evidence/research/:claim_id/live': { params: { claim_id: 'ledger-hash-chain-intact' } },
    'GET /api/svc/v1/evidence/research/:claim_id/sources/live': { params: { claim_id: 'ledger-hash-chain-intact' } },
    'GET /api/svc/v1/readiness/:section_id/live': { params: { section_id: 'ledger' } },
    'GET /api/svc/v1/elite/wiring/health': { query: { probe: true } },
    'GET /jackin/:jk_path': { params: { jk_path: found.jackin } },
    'GET /shared/:fname': { params: { fname: found.shared } },
    'GET /api/svc/v1/assets/:key': { params: { key: found.asset } },
    'GET /docs/assets/:file': { params: { file: 'swagger-ui.css' } },
    // the genesis of the snapshot chain (src/energy/chain.ts): any view's `hash` continues it
    'GET /api/svc/v1/energy/receipt': { query: { prev_hash: '0'.repeat(64) } },
  };
}

const concrete = (path: string, params: Record<string, string> = {}): string => path.replace(/[:*]([A-Za-z_]\w*)/g, (_, name: string) => params[name] ?? name);

/** The parameters' values: the call's, else each parameter's default. */
function parameterValues(r: RouteDef, call: Call): Record<string, unknown> {
  const out: Record<string, unknown> = { ...call.params };
  const query = r.query ? (toJsonSchema(r.query).properties as Record<string, JsonSchema>) : {};
  for (const [name, s] of Object.entries(query)) {
    if (call.query && name in call.query) out[name] = call.query[name];
    else if (s.default !== undefined) out[name] = s.default;
  }
  return out;
}

async function main(): Promise<void> {
  const built = await buildApp(loadConfig({ env: { NODE_ENV: 'test' } }));
  await built.services.pool.ready();
  const handle = built.app.callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const verdictRoute = built.routes.find((r) => r.method === 'POST' && r.path.endsWith('/verdict'))!;
    const first = Object.values(verdictRoute.examples ?? {})[0]!.value;
    const verdict = (await (await fetch(`${base}${verdictRoute.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(first) })).json()) as { receipt: { dsse: unknown } };
    const keyid = ((await (await fetch(`${base}/api/svc/v1/edge/pubkey`)).json()) as { keyid: string }).keyid;
    const manifest = (await (await fetch(`${base}/api/svc/v1/assets/manifest`)).json()) as { assets: { key: string; path: string }[] };
    // a file whose name carries no build hash keeps the example valid across UI builds
    const under = (dir: string) => {
      const names = manifest.assets.map((a) => a.path).filter((p) => p.startsWith(`/${dir}/`)).map((p) => p.slice(dir.length + 2));
      return names.find((n) => /^[a-z]+\.[a-z]+$/.test(n)) ?? names[0]!;
    };
    const found = { keyid, dsse: verdict.receipt.dsse, asset: manifest.assets.find((a) => a.key.endsWith('.svg'))?.key ?? manifest.assets[0]!.key, jackin: under('jackin'), shared: under('shared') };
    const table = calls(found);

    const out: Record<string, OperationExample> = {};
    for (const r of documentedRoutes(built.routes)) {
      // a kernel's examples come with its declaration (src/kernels/): its defaults, so a parameter
      // without a default is left out on purpose (absent has a meaning, e.g. a genesis receipt)
      if (r.kernel) continue;
      const key = `${r.method} ${r.path}`;
      const call = table[key] ?? {};
      const example: OperationExample = {};
      const parameters = Object.fromEntries(Object.entries(parameterValues(r, call)).filter(([name]) => !(r.parameterExamples && name in r.parameterExamples)));
      if (Object.keys(parameters).length) example.parameters = parameters;
      if (call.body && !r.examples) example.body = call.body;
      const types = typeof r.produces === 'string' ? [r.produces] : (r.produces ?? ['application/json']);
      if (!call.noCall && types.length === 1 && types[0] === 'application/json' && r.responseExample === undefined) {
        const query = new URLSearchParams(Object.entries(call.query ?? r.parameterExamples ?? {}).map(([k, v]): [string, string] => [k, String(v)]));
        const url = `${base}${concrete(r.path, call.params)}${query.size ? `?${query}` : ''}`;
        const sent = call.body ? Object.values(call.body)[0]!.value : r.method === 'POST' ? Object.values(r.examples ?? {})[0]?.value : undefined;
        const bodyType = r.body === 'text' ? (r.bodyTypes ?? ['text/plain'])[0]! : 'application/json';
        const res = await fetch(url, {
          method: r.method,
          ...(sent === undefined ? {} : { headers: { 'content-type': bodyType }, body: typeof sent === 'string' ? sent : JSON.stringify(sent) }),
        });
        if (res.status !== 200) throw new Error(`${key}: ${url} answered ${res.status}`);
        const schema = toJsonSchema(r.response);
        const matches = matcher(schema);
        const body = shortened(await res.json(), schema, matches);
        if (!matches(schema, body)) throw new Error(`${key}: the shortened body does not match its schema`);
        example.response = body;
      } else if (!call.noCall && r.method === 'GET' && r.responseExample === undefined && types.some(isTextType)) {
        const query = new URLSearchParams(Object.entries(call.query ?? r.parameterExamples ?? {}).map(([k, v]): [string, string] => [k, String(v)]));
        const url = `${base}${concrete(r.path, call.params)}${query.size ? `?${query}` : ''}`;
        const res = await fetch(url);
        if (res.status !== 200) throw new Error(`${key}: ${url} answered ${res.status}`);
        const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
        if (!types.includes(type) || !isTextType(type)) throw new Error(`${key}: answered ${type}, which it does not declare as text`);
        example.response = textExcerpt(await res.text());
        example.responseType = type;
      }
      if (Object.keys(example).length) out[key] = example;
    }
    writeFileSync(join(projectRoot(), OPERATION_EXAMPLES_FILE), `${JSON.stringify(out, null, 1)}\n`);
    console.log(`operation examples: ${Object.keys(out).length} operations written to ${OPERATION_EXAMPLES_FILE}`);
  } finally {
    server.close();
    await built.close();
  }
}

await main();
