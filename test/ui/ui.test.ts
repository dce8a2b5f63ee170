import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import supertest from 'supertest';
import { buildOpenApi } from '../../src/docs/openapi.js';
import { buildTestApp } from '../helpers/app.js';
import { createKoaApp } from '../../src/http/koa-app.js';
import { EventLoopMonitor } from '../../src/observability/event-loop.js';
import { createLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { Ring, type TraceRecord } from '../../src/observability/traces.js';
import type { Services } from '../../src/services.js';
import { loadAssets, staticRoot } from '../../src/ui/assets.js';
import { uiFeature } from '../../src/ui/ui.feature.js';

// The UI routes alone, behind the real middleware chain (the lead wires uiFeature into buildApp).
const eventLoop = new EventLoopMonitor();
const log = createLogger('silent');
const { routes } = uiFeature({ log } as unknown as Services);
const app = createKoaApp({ routes, jsonLimitBytes: 2048, log, metrics: new Metrics(eventLoop), traces: new Ring<TraceRecord>(8) });
const http = supertest(app.callback());

// supertest buffers text/* and JSON only; this hands back the raw bytes of any type
const raw = (req: supertest.Test) =>
  req.buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

const PAGES = { '/elite/globe': 'globe.html', '/elite/globe/': 'globe.html', '/jackin/globe': 'globe.html', '/jackin': 'jackin.html', '/jackin/': 'jackin.html', '/elite/jackin': 'jackin.html' };

interface ManifestEntry {
  key: string;
  path: string;
  aliases: string[];
  url: string;
  content_type: string;
  bytes: number;
  sha256: string;
}

describe('src/ui static, UI and asset routes (4.9)', () => {
  let manifest: { schema: string; count: number; assets: ManifestEntry[] };
  before(async () => {
    manifest = (await http.get('/api/svc/v1/assets/manifest').expect(200)).body;
  });
  after(() => eventLoop.close());

  it('pages answer HTML under every alias, same bytes, no-cache, with the same-origin HTML CSP', async () => {
    for (const [path, key] of Object.entries(PAGES)) {
      const res = await http.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type'], path).to.equal('text/html; charset=utf-8');
      expect(res.headers['cache-control']).to.equal('no-cache');
      expect(res.headers['content-security-policy']).to.contain("default-src 'self'").and.contain("connect-src 'self'");
      expect(sha256(Buffer.from(res.text)), path).to.equal(manifest.assets.find((a) => a.key === key)!.sha256);
    }
  });

  it('the manifest lists every file under src/ui/static with schema, type, size and hash', () => {
    expect(manifest.schema).to.equal('svc.assets-manifest/v1');
    const files = ['pages', 'shared', 'jackin'].flatMap((d) => readdirSync(join(staticRoot(), d)));
    expect(manifest.assets.map((a) => a.key).sort()).to.deep.equal(files.sort());
    expect(manifest.count).to.equal(files.length);
    for (const a of manifest.assets) {
      expect(a.sha256).to.match(/^[0-9a-f]{64}$/);
      expect(a.url).to.equal(`/api/svc/v1/assets/${a.key}`);
    }
  });

  it('sizes and SHA-256 recompute from the bytes of /assets/:key and of each served path', async () => {
    for (const a of manifest.assets) {
      for (const path of [a.url, a.path, ...a.aliases]) {
        const res = await raw(http.get(path));
        expect(res.status, path).to.equal(200);
        expect(res.headers['content-type'], path).to.equal(a.content_type);
        expect((res.body as Buffer).length, path).to.equal(a.bytes);
        expect(sha256(res.body as Buffer), path).to.equal(a.sha256);
        expect(res.headers.etag).to.equal(`"${a.sha256}"`);
      }
    }
  });

  it('content types follow the extension; files are cacheable for five minutes', async () => {
    const types: Record<string, string> = { js: 'application/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml', html: 'text/html; charset=utf-8' };
    for (const a of manifest.assets) expect(a.content_type, a.key).to.equal(types[a.key.split('.').pop()!]);
    const js = await http.get('/shared/api.js');
    expect(js.headers['cache-control']).to.equal('public, max-age=300');
    const svg = await raw(http.get('/jackin/favicon.svg'));
    expect(svg.headers['content-type']).to.equal('image/svg+xml');
  });

  it('every script, style and image a page or module references is same-origin and served', async () => {
    const seen = new Set<string>();
    const queue = Object.keys(PAGES);
    while (queue.length) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await raw(http.get(path));
      expect(res.status, path).to.equal(200);
      const text = (res.body as Buffer).toString('utf8');
      const type = String(res.headers['content-type']);
      if (type.startsWith('image/')) continue;
      expect(text, path).to.not.match(/https?:\/\//);
      expect(text, path).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline scripts (CSP)
      const refs = [...text.matchAll(/(?:src|href)="([^"]+)"/g), ...text.matchAll(/(?:from|import)\s*'([^']+)'/g)].map((m) => m[1]!);
      for (const ref of refs) {
        expect(ref, `${path} → ${ref}`).to.match(/^\//);
        // the entry page links to other features' routes; those are checked where they are built
        if (/^\/(shared|jackin|elite)\b/.test(ref)) queue.push(ref);
      }
    }
    expect([...seen]).to.include.members(['/shared/ui.css', '/shared/globe.js', '/jackin/globe-page.js', '/jackin/jackin.js', '/jackin/favicon.svg']);
  });

  it('ETag + If-None-Match gives 304 for files, pages and the manifest; a stale tag gets 200', async () => {
    for (const path of ['/shared/globe.js', '/jackin/favicon.svg', '/elite/globe', '/api/svc/v1/assets/ui.css', '/api/svc/v1/assets/manifest']) {
      const first = await http.get(path);
      const etag = first.headers.etag as string;
      expect(etag, path).to.match(/^"[0-9a-f]{64}"$/);
      const again = await http.get(path).set('If-None-Match', `"0000", W/${etag}`);
      expect(again.status, path).to.equal(304);
      expect(again.text ?? '').to.equal('');
      expect((await http.get(path).set('If-None-Match', '"stale"')).status, path).to.equal(200);
    }
  });

  it('unknown names are 404 with the exact body', async () => {
    for (const [path, name] of [
      ['/shared/nope.js', 'nope.js'],
      ['/jackin/nope.css', 'nope.css'],
      ['/api/svc/v1/assets/nope', 'nope'],
      ['/shared/globe.html', 'globe.html'], // a page is not a shared module
      ['/jackin/api.js', 'api.js'], // nor is a shared module a jackin file
    ]) {
      const res = await http.get(path!);
      expect(res.status, path).to.equal(404);
      expect(res.text, path).to.equal(`{"detail":"asset '${name}' not found"}`);
    }
  });

  it('malformed names are 422 with a pydantic-shaped body', async () => {
    const res = await http.get('/shared/a..b.js');
    expect(res.status).to.equal(422);
    expect(res.body.detail[0]).to.include({ type: 'string_pattern_mismatch', input: 'a..b.js' });
    expect(res.body.detail[0].loc).to.deep.equal(['path', 'fname']);
    for (const path of ['/jackin/.hidden', `/shared/${'a'.repeat(65)}`, '/api/svc/v1/assets/a%20b', '/jackin/x%3By']) {
      expect((await http.get(path)).status, path).to.equal(422);
    }
  });

  it('path traversal is 404 or 422 and never serves a file outside src/ui/static', async () => {
    const attempts = [
      '/shared/..%2Fpackage.json',
      '/shared/..%2f..%2fpackage.json',
      '/shared/%2e%2e%2fpackage.json',
      '/jackin/%2e%2e',
      '/jackin/..',
      '/jackin/%2e%2e%2f%2e%2e%2fpackage.json',
      '/shared/..%5cpackage.json',
      '/api/svc/v1/assets/..%2F..%2Fpackage.json',
      '/api/svc/v1/assets/%2e%2e',
      '/shared/%00api.js',
      '/jackin/..%2Fpages%2Fglobe.html',
    ];
    for (const path of attempts) {
      const res = await http.get(path);
      expect([404, 422], path).to.include(res.status);
      expect(res.headers['content-type'], path).to.match(/^application\/json/);
      expect(res.text, path).to.not.contain('drone-intel-svc');
    }
  });

  it('HEAD answers like GET without a body', async () => {
    const res = await http.head('/shared/globe.js');
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/javascript; charset=utf-8');
    expect(res.headers.etag).to.match(/^"[0-9a-f]{64}"$/);
  });

  it('the routes appear in the OpenAPI document with their path parameters', () => {
    const doc = buildOpenApi(routes) as { paths: Record<string, { get?: { parameters?: { name: string }[] } }> };
    for (const p of [...Object.keys(PAGES), '/jackin/{jk_path}', '/shared/{fname}', '/api/svc/v1/assets/manifest', '/api/svc/v1/assets/{key}']) {
      expect(doc.paths[p], p).to.have.property('get');
    }
    expect(doc.paths['/shared/{fname}']!.get!.parameters!.map((x) => x.name)).to.deep.equal(['fname']);
  });

  it('every browser module parses as an ES module', () => {
    for (const a of manifest.assets.filter((x) => x.key.endsWith('.js'))) {
      const file = join(staticRoot(), a.path.startsWith('/shared/') ? 'shared' : 'jackin', a.key);
      const r = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8' });
      expect(r.status, `${a.key}: ${r.stderr}`).to.equal(0);
    }
  });

  it('the orthographic projection puts the view centre at the origin and hides the far side', async () => {
    const { project } = (await import(pathToFileURL(join(staticRoot(), 'shared', 'globe.js')).href)) as {
      project(v: { lat: number; lon: number }, lat: number, lon: number): { x: number; y: number; visible: boolean };
    };
    const v = { lat: 0, lon: 0 };
    expect(project(v, 0, 0)).to.deep.equal({ x: 0, y: 0, visible: true });
    expect(project(v, 0, 90).x).to.be.closeTo(1, 1e-12);
    expect(project(v, 90, 0).y).to.be.closeTo(1, 1e-12);
    expect(project(v, 0, 180).visible).to.equal(false);
    expect(project({ lat: 36.2, lon: -115.2 }, 36.2, -115.2)).to.include({ visible: true });
  });

  describe('loading', () => {
    let root: string;
    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), 'ui-static-'));
      for (const d of ['pages', 'shared', 'jackin']) mkdirSync(join(root, d));
      writeFileSync(join(root, 'pages', 'globe.html'), '<!doctype html>');
      writeFileSync(join(root, 'pages', 'jackin.html'), '<!doctype html>');
    });
    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it('hashes what it reads', () => {
      writeFileSync(join(root, 'shared', 'a.js'), 'export {};\n');
      const cat = loadAssets(root);
      expect(cat.byKey.get('a.js')).to.include({ path: '/shared/a.js', sha256: sha256(Buffer.from('export {};\n')) });
    });

    it('refuses an unservable type, a bad name, a duplicate key or a missing page at start-up', () => {
      writeFileSync(join(root, 'shared', 'x.exe'), '');
      expect(() => loadAssets(root)).to.throw(/not a servable/);
      rmSync(join(root, 'shared', 'x.exe'));
      writeFileSync(join(root, 'jackin', 'a b.js'), '');
      expect(() => loadAssets(root)).to.throw(/not a servable/);
      rmSync(join(root, 'jackin', 'a b.js'));
      writeFileSync(join(root, 'shared', 'a.js'), '');
      writeFileSync(join(root, 'jackin', 'a.js'), '');
      expect(() => loadAssets(root)).to.throw(/duplicate/);
      rmSync(join(root, 'jackin', 'a.js'));
      rmSync(join(root, 'pages', 'jackin.html'));
      expect(() => loadAssets(root)).to.throw(/missing/);
    });
  });

  it('every API path the pages and modules call is a GET route of the full app', async () => {
    const sources = manifest.assets.filter((a) => /\.(js|html)$/.test(a.key)).map((a) => readFileSync(join(staticRoot(), a.path.startsWith('/shared/') ? 'shared' : a.path.startsWith('/jackin/') ? 'jackin' : 'pages', a.key), 'utf8'));
    const called = new Set<string>();
    for (const text of sources) {
      // `${API}/x` in scripts, "/x" in page links and stream URLs
      for (const m of text.matchAll(/\$\{API\}(\/[\w/.-]+)/g)) called.add(`/api/svc/v1${m[1]}`);
      for (const m of text.matchAll(/['"](\/(?:api|mesh|metrics|docs)[\w/.-]*)['"]/g)) if (m[1] !== '/api/svc/v1') called.add(m[1]!);
    }
    expect([...called]).to.include.members(['/api/svc/v1/edge/3d', '/api/svc/v1/adsb', '/api/svc/v1/stream/verdicts', '/api/svc/v1/ledger/readiness', '/mesh/state']);
    const t = await buildTestApp();
    try {
      const table = new Set([...t.routes, ...routes].filter((r) => r.method === 'GET').map((r) => r.path));
      // the fleet routes are optional for the globe page (it shows "no data" without them)
      const missing = [...called].filter((p) => !table.has(p) && p !== '/api/svc/v1/fleet/vessels');
      expect(missing).to.deep.equal([]);
    } finally {
      await t.close();
    }
  });

  it('a browser run needs Debian chromium, which is not installed here', function () {
    if (!existsSync('/usr/bin/chromium')) this.skip();
  });
});
