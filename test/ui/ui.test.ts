import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import supertest from 'supertest';
import { buildOpenApi } from '../../src/docs/openapi.js';
import { buildTestApp } from '../helpers/app.js';
import { createKoaApp } from '../../src/http/koa-app.js';
import { EventLoopMonitor } from '../../src/observability/event-loop.js';
import { createLogger } from '../../src/observability/logger.js';
import { Metrics } from '../../src/observability/metrics.js';
import { Ring } from '../../src/lib/ring.js';
import type { TraceRecord } from '../../src/observability/traces.js';
import type { Services } from '../../src/platform/services.js';
import { catalogue } from '../../src/ui/assets.js';
import { buildUiSync, fillTemplate, readUiBuild, sourcesDigest, writeUiBuild, type UiBuild } from '../../src/ui/build.js';
import { uiPlugin } from '../../src/ui/ui.feature.js';
import { atMountPath, type RouteDef } from '../../src/http/route.js';
import { View } from '../../src/ui/client/globe/view.js';
import { landParts, visibleLand } from '../../src/ui/client/globe/land.js';
import { feature as topoFeature } from 'topojson-client';
import type { MultiPolygon, Polygon } from 'geojson';
import { SERIES_LINES } from '../../src/isomorphic/energy-chart.js';
import { geoContains, geoDistance, geoOrthographic } from 'd3-geo';
import { adsbChip, type AdsbDoc, cotChip, ledgerText, vesselChip, verdictChip } from '../../src/ui/client/common/honesty.js';
import { ALTITUDE_STOPS, altitudeColor, contrast, DECISION_STYLE, glyphFor, GROUND_COLOR, LAND, MUTED, OCEAN, PAGE_BG, PANEL, STALE, TEXT, UNKNOWN_ALT_COLOR, VESSEL_COLOR } from '../../src/ui/client/common/palette.js';
import { cotFrame, FRAME_FILL, frameOutline } from '../../src/ui/client/globe/cot-frame.js';

// The UI routes alone, behind the real middleware chain (the browser tests use the full app).
const eventLoop = new EventLoopMonitor();
const log = createLogger('silent');
const routes = (uiPlugin.build({ log } as unknown as Services, {}) as { routes: RouteDef[] }).routes.map(atMountPath);
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
  origin: string;
  licence: string;
}

describe('src/ui static, UI and asset routes (4.9)', () => {
  let manifest: { schema: string; count: number; build: { from: string; tool: string }; assets: ManifestEntry[] };
  before(async () => {
    manifest = (await http.get('/api/svc/v1/assets/manifest').expect(200)).body;
  });
  after(() => eventLoop.close());

  const key = (re: RegExp) => manifest.assets.find((a) => re.test(a.key))!;

  it('pages answer HTML under every alias, same bytes, no-cache, with a CSP that allows nothing inline', async () => {
    for (const [path, name] of Object.entries(PAGES)) {
      const res = await http.get(path);
      expect(res.status, path).to.equal(200);
      expect(res.headers['content-type'], path).to.equal('text/html; charset=utf-8');
      expect(res.headers['cache-control']).to.equal('no-cache');
      expect(String(res.headers['content-security-policy'])).to.not.match(/unsafe-inline|unsafe-eval/);
      expect(sha256(Buffer.from(res.text)), path).to.equal(manifest.assets.find((a) => a.key === name)!.sha256);
    }
  });

  it('the manifest lists the esbuild output: one hashed bundle per page, a hashed stylesheet, shared chunks and the land data', () => {
    expect(manifest.schema).to.equal('svc.assets-manifest/v1');
    expect(manifest.build.tool).to.equal('esbuild');
    const keys = manifest.assets.map((a) => a.key);
    expect(keys.filter((k) => /^globe-[A-Z0-9]{8}\.js$/.test(k))).to.have.length(1);
    expect(keys.filter((k) => /^jackin-[A-Z0-9]{8}\.js$/.test(k))).to.have.length(1);
    expect(keys.filter((k) => /^ui-[A-Z0-9]{8}\.css$/.test(k))).to.have.length(1);
    expect(keys.some((k) => /^chunk-[A-Z0-9]{8}\.js$/.test(k))).to.equal(true);
    expect(keys).to.include.members(['globe.html', 'jackin.html', 'favicon.svg']);
    expect(manifest.count).to.equal(keys.length);
    for (const land of [key(/^land-110m-/), key(/^land-50m-/), key(/^land-10m-/)]) {
      expect(land.origin).to.match(/^world-atlas@2\./);
      expect(land.licence).to.contain('public domain');
    }
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

  it('content-hashed files are immutable for a year; the unhashed icon for five minutes', async () => {
    const js = await http.get(key(/^globe-/).path);
    expect(js.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(js.headers['content-type']).to.equal('application/javascript; charset=utf-8');
    const css = await http.get(key(/^ui-.*\.css$/).path);
    expect(css.headers['content-type']).to.equal('text/css; charset=utf-8');
    const svg = await raw(http.get('/jackin/favicon.svg'));
    expect(svg.headers['content-type']).to.equal('image/svg+xml');
    expect(svg.headers['cache-control']).to.equal('public, max-age=300');
  });

  it('every script, style, image and data file a page references is same-origin and served; no inline script', async () => {
    const seen = new Set<string>();
    const queue = Object.keys(PAGES);
    while (queue.length) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const res = await raw(http.get(path));
      expect(res.status, path).to.equal(200);
      const text = (res.body as Buffer).toString('utf8');
      if (String(res.headers['content-type']).startsWith('image/')) continue;
      expect(text, path).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline scripts (CSP)
      expect(text, path).to.not.match(/\son[a-z]+=/); // no inline handlers
      const isJs = String(res.headers['content-type']).startsWith('application/javascript');
      const refs = (isJs ? [...text.matchAll(/(?:from|import)\s*["']([^"']+)["']/g)] : [...text.matchAll(/(?:src|href|data-land|data-land-fine)="([^"]+)"/g)]).map((m) => m[1]!);
      for (const ref of refs.filter((r) => !r.startsWith('#'))) {
        expect(ref, `${path} → ${ref}`).to.match(/^(\/|\.\.?\/)/);
        const abs = new URL(ref, `http://x${path}`).pathname;
        if (/^\/(shared|jackin|elite|api\/svc\/v1\/assets)\b/.test(abs)) queue.push(abs);
      }
    }
    expect([...seen]).to.include.members([key(/^globe-/).path, key(/^jackin-/).path, key(/^ui-/).path, key(/^land-110m/).path, key(/^land-50m/).path, '/jackin/favicon.svg']);
    for (const c of manifest.assets.filter((a) => a.key.startsWith('chunk-'))) expect([...seen]).to.include(c.path);
  });

  it('no built file names an absolute external URL (only XML namespaces)', async () => {
    const allowed = /^https?:\/\/www\.w3\.org\/(2000\/svg|1999\/xhtml|XML\/1998\/namespace|2000\/xmlns\/|1999\/xlink)/;
    for (const a of manifest.assets) {
      const text = ((await raw(http.get(a.url))).body as Buffer).toString('utf8');
      for (const m of text.matchAll(/https?:\/\/[^\s"'`)<>]*/g)) expect(m[0], a.key).to.match(allowed);
    }
  });

  it('ETag + If-None-Match gives 304 for files, pages and the manifest; a stale tag gets 200', async () => {
    for (const path of [key(/^globe-/).path, '/jackin/favicon.svg', '/elite/globe', key(/^land-110m/).url, '/api/svc/v1/assets/manifest']) {
      const first = await http.get(path);
      const etag = first.headers.etag as string;
      expect(etag, path).to.match(/^"[0-9a-f]{64}"$/);
      const again = await http.get(path).set('If-None-Match', `"0000", W/${etag}`);
      expect(again.status, path).to.equal(304);
      expect(again.text ?? '').to.equal('');
      expect((await http.get(path).set('If-None-Match', '"stale"')).status, path).to.equal(200);
    }
  });

  it('unknown names are 404 with the exact body; a file is served only under its own directory', async () => {
    const chunk = key(/^chunk-/).key;
    for (const [path, name] of [
      ['/shared/nope.js', 'nope.js'],
      ['/jackin/nope.css', 'nope.css'],
      ['/api/svc/v1/assets/nope', 'nope'],
      ['/shared/globe.html', 'globe.html'], // a page is not a shared module
      [`/jackin/${chunk}`, chunk], // nor is a shared chunk a jackin file
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

  it('path traversal is 404 or 422 and never serves a file outside the build', async () => {
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
    const res = await http.head(key(/^globe-/).path);
    expect(res.status).to.equal(200);
    expect(res.headers['content-type']).to.equal('application/javascript; charset=utf-8');
    expect(res.headers.etag).to.match(/^"[0-9a-f]{64}"$/);
  });

  it('the routes appear in the OpenAPI document with their path parameters', () => {
    const doc = buildOpenApi(routes) as { paths: Record<string, { get?: { parameters?: { name: string }[] } }> };
    // a page's trailing-slash path is named by its operation (src/docs/openapi.ts documentedRoutes)
    for (const p of [...Object.keys(PAGES).filter((p) => !p.endsWith('/')), '/jackin/{jk_path}', '/shared/{fname}', '/api/svc/v1/assets/manifest', '/api/svc/v1/assets/{key}']) {
      expect(doc.paths[p], p).to.have.property('get');
    }
    expect(doc.paths['/shared/{fname}']!.get!.parameters!.map((x) => x.name)).to.deep.equal(['fname']);
  });

  describe('the build (esbuild at npm run build, or in memory when dist/ui is missing or stale)', () => {
    let build: UiBuild;
    let dir: string;
    before(() => {
      build = buildUiSync();
      dir = mkdtempSync(join(tmpdir(), 'ui-dist-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('is deterministic: the same sources give the same names and bytes', () => {
      const again = buildUiSync();
      expect(again.files.map((f) => [f.key, sha256(f.bytes)])).to.deep.equal(build.files.map((f) => [f.key, sha256(f.bytes)]));
      expect(again.sourcesSha256).to.equal(build.sourcesSha256).and.equal(sourcesDigest());
    });

    it('round-trips through dist/ui; a changed source digest or a tampered file is not reused', () => {
      writeUiBuild(build, dir);
      const back = readUiBuild(dir, build.sourcesSha256)!;
      expect(back.from).to.equal('dist');
      expect(back.files.map((f) => f.key).sort()).to.deep.equal(build.files.map((f) => f.key).sort());
      expect(readUiBuild(dir, 'f'.repeat(64))).to.equal(null);
      const globe = build.files.find((f) => f.key.startsWith('globe-'))!;
      writeFileSync(join(dir, 'jackin', globe.key), 'tampered');
      expect(readUiBuild(dir, build.sourcesSha256)).to.equal(null);
      expect(readUiBuild(join(dir, 'nothing-here'), build.sourcesSha256)).to.equal(null);
    });

    it('the page templates get the hashed names; a missing name stops the build', () => {
      const html = build.files.find((f) => f.key === 'globe.html')!.bytes.toString('utf8');
      const js = build.files.find((f) => f.key.startsWith('globe-'))!.key;
      expect(html).to.contain(`<script type="module" src="/jackin/${js}"></script>`);
      expect(html).to.not.contain('{{');
      expect(() => fillTemplate('<script src="{{nope.js}}">', {}, 'x.html')).to.throw(/no built file for \{\{nope\.js\}\}/);
    });

    it('the catalogue refuses an unservable type, a bad name, a duplicate key or a missing page', () => {
      const f = (key: string, d: 'shared' | 'jackin' | 'pages' = 'shared') => ({ key, dir: d, bytes: Buffer.from('x'), origin: 'project', licence: 'project' });
      const pages = [f('globe.html', 'pages'), f('jackin.html', 'pages')];
      const of = (files: ReturnType<typeof f>[]) => catalogue({ files, sourcesSha256: '0', from: 'memory', buildMs: 0 });
      expect(() => of([...pages, f('x.exe')])).to.throw(/not a servable/);
      expect(() => of([...pages, f('a b.js')])).to.throw(/not a servable/);
      expect(() => of([...pages, f('a.js'), f('a.js', 'jackin')])).to.throw(/duplicate/);
      expect(() => of([pages[0]!])).to.throw(/missing/);
      expect(of([...pages, f('a.js')]).byKey.get('a.js')).to.include({ path: '/shared/a.js', sha256: sha256(Buffer.from('x')) });
    });
  });

  describe('palette, glyphs and honesty chips (pure browser modules)', () => {
    it('every altitude, ground, unknown and stale colour keeps ≥ 3:1 against ocean and land', () => {
      for (const c of [...ALTITUDE_STOPS.map((s) => s.color), GROUND_COLOR, UNKNOWN_ALT_COLOR, STALE, VESSEL_COLOR, ...Object.values(FRAME_FILL), ...Object.values(DECISION_STYLE).map((d) => d.color)]) {
        expect(contrast(c, OCEAN), `${c} on ocean`).to.be.at.least(3);
        expect(contrast(c, LAND), `${c} on land`).to.be.at.least(3);
      }
      for (const t of [TEXT, MUTED]) for (const bg of [PAGE_BG, PANEL]) expect(contrast(t, bg), `${t} on ${bg}`).to.be.at.least(4.5);
      // the energy chart's lines (dark panel of /energy-sovereign and of the /jackin card)
      for (const l of SERIES_LINES) for (const bg of [PAGE_BG, PANEL]) expect(contrast(l.color, bg), `${l.field} on ${bg}`).to.be.at.least(3);
      expect(contrast('#000000', '#ffffff')).to.be.closeTo(21, 1e-9);
    });

    it('altitude colours are stepped with ground and unknown distinct', () => {
      expect(altitudeColor({ alt_baro_ft: 500 })).to.equal(ALTITUDE_STOPS[0]!.color);
      expect(altitudeColor({ alt_baro_ft: 32_000 })).to.equal('#90a4ff');
      expect(altitudeColor({ alt_baro_ft: 45_000 })).to.equal(ALTITUDE_STOPS.at(-1)!.color);
      expect(altitudeColor({ alt_baro_ft: null, alt_geom_ft: 21_000 })).to.equal('#4dd0e1');
      expect(altitudeColor({ on_ground: true, alt_baro_ft: null })).to.equal(GROUND_COLOR);
      expect(altitudeColor({ alt_baro_ft: null })).to.equal(UNKNOWN_ALT_COLOR);
      expect(new Set([...ALTITUDE_STOPS.map((s) => s.color), GROUND_COLOR, UNKNOWN_ALT_COLOR, STALE]).size).to.equal(ALTITUDE_STOPS.length + 3);
    });

    it('the view projects like d3-geo orthographic, hides the far side and turns north correctly', () => {
      const view = new View({ lon: -100, lat: 38, zoom: 1.7 });
      view.resize(960, 600);
      const d3 = geoOrthographic().rotate([100, -38]).scale(view.radius).translate([480, 300]);
      for (let i = 0; i < 200; i++) {
        const lon = -180 + ((i * 47.3) % 360);
        const lat = -89 + ((i * 31.7) % 178);
        const p = view.project(lon, lat);
        expect(p !== null, `${lon},${lat}`).to.equal(geoDistance([lon, lat], [-100, 38]) < Math.PI / 2);
        if (!p) continue;
        const q = d3([lon, lat])!;
        expect(p[0]).to.be.closeTo(q[0], 1e-6);
        expect(p[1]).to.be.closeTo(q[1], 1e-6);
        if (Math.abs(lat) > 80) continue;
        // north at the point, against a small step north
        const n = view.project(lon, lat + 0.001)!;
        expect(view.northAngle(lon, lat)).to.be.closeTo(Math.atan2(n[0] - p[0], -(n[1] - p[1])), 1e-3);
      }
      expect(view.project(-100, 38)).to.deep.equal([480, 300]);
      expect(view.project(80, -38)).to.equal(null);
      expect(view.northAngle(-100, 38)).to.be.closeTo(0, 1e-12);
    });

    it('land culling keeps every polygon that reaches the canvas and leaves out the others', () => {
      const topo = JSON.parse(readFileSync('node_modules/world-atlas/land-50m.json', 'utf8'));
      const geoms = (topoFeature(topo, topo.objects.land) as unknown as { features: { geometry: Polygon | MultiPolygon }[] }).features.map((f) => f.geometry);
      const parts = landParts(geoms);
      expect(parts.length).to.be.above(1000);
      const key = (ring: number[][]) => `${ring[0]}|${ring.length}`;
      for (const [lon, lat, zoom] of [[-100, 38, 1], [20, 50, 1], [170, -10, 1], [0, 89, 1], [-60, -85, 1], [-115.2, 36.2, 20], [135, 35, 4], [-179.9, 60, 8], [10, 0, 0.8]] as const) {
        const view = new View({ lon, lat, zoom });
        view.resize(1200, 700);
        const kept = new Set(visibleLand(parts, lon, lat, view.radius, view.width, view.height).coordinates.map((p) => key(p[0]!)));
        let onScreen = 0;
        for (const p of parts) {
          const shows = p.coordinates[0]!.some(([x, y]) => {
            const q = view.project(x!, y!);
            return q !== null && q[0] >= 0 && q[0] <= 1200 && q[1] >= 0 && q[1] <= 700;
          });
          if (!shows) continue;
          onScreen++;
          expect(kept.has(key(p.coordinates[0]!)), `${lon},${lat} x${zoom}: a polygon on screen was culled`).to.equal(true);
        }
        // a polygon can cover the canvas with no vertex on it (zoomed into a continent): the one under
        // the centre must be kept too
        const under = parts.filter((p) => geoContains({ type: 'Polygon', coordinates: p.coordinates }, [lon, lat]));
        if (lon === -115.2) expect(under, 'Nevada lies on land').to.have.length(1);
        for (const p of under) expect(kept.has(key(p.coordinates[0]!)), `${lon},${lat} x${zoom}: the polygon under the centre was culled`).to.equal(true);
        // and it culls: about half the polygons lie on the far side; zoomed in, most are off screen
        expect(kept.size, `${lon},${lat} x${zoom}`).to.be.below(parts.length * (zoom >= 4 ? 0.35 : 0.85));
        expect(kept.size).to.be.at.least(onScreen);
      }
    });

    it('glyphs follow the readsb emitter category, then a short type list', () => {
      expect(glyphFor('A5', null)).to.equal('heavy');
      expect(glyphFor('A6', null)).to.equal('fighter');
      expect(glyphFor('A7', null)).to.equal('rotorcraft');
      expect(glyphFor('B6', null)).to.equal('uav');
      expect(glyphFor('A3', null)).to.equal('jet');
      expect(glyphFor(null, 'C130')).to.equal('turboprop');
      expect(glyphFor('A3', 'c17')).to.equal('heavy');
      expect(glyphFor(null, null)).to.equal('unknown');
    });

    it('CoT frames follow MIL-STD-2525D / APP-6(D): shape by affiliation, opened by dimension, light identity fills', () => {
      const f = (type: string) => {
        const { affiliation, dimension, shape, open, fill } = cotFrame(type);
        return { affiliation, dimension, shape, open, fill };
      };
      expect(f('a-f-G-U-C')).to.deep.equal({ affiliation: 'friend', dimension: 'ground', shape: 'rectangle', open: null, fill: '#80e0ff' });
      expect(f('a-h-G-U-C-I')).to.deep.equal({ affiliation: 'hostile', dimension: 'ground', shape: 'diamond', open: null, fill: '#ff8080' });
      expect(f('a-n-G')).to.deep.equal({ affiliation: 'neutral', dimension: 'ground', shape: 'square', open: null, fill: '#aaffaa' });
      expect(f('a-u-G')).to.deep.equal({ affiliation: 'unknown', dimension: 'ground', shape: 'quatrefoil', open: null, fill: '#ffff80' });
      // air (and space) frames keep the upper half and are open below; subsurface the mirror image
      expect(f('a-f-A-M-F')).to.include({ dimension: 'air', shape: 'arch', open: 'bottom' });
      expect(f('a-h-A-M-F-Q')).to.include({ shape: 'tent', open: 'bottom' });
      expect(f('a-n-A-C')).to.include({ shape: 'open-square', open: 'bottom' });
      expect(f('a-u-A-M-F-Q')).to.include({ shape: 'trefoil', open: 'bottom' });
      expect(f('a-f-P')).to.include({ dimension: 'space', open: 'bottom' });
      expect(f('a-h-U-S')).to.include({ dimension: 'subsurface', shape: 'tent', open: 'top' });
      // sea surface: a friend is a circle; the others keep their land shape
      expect(f('a-f-S-C-P')).to.include({ dimension: 'sea', shape: 'circle', open: null });
      expect(f('a-n-S-X-M-C')).to.include({ dimension: 'sea', shape: 'square' });
      // assumed friend, suspect, joker, faker, pending and non-atoms fall in with their standard identity
      expect(['a-a-G', 'a-s-G', 'a-j-G', 'a-k-G', 'a-p-G', 'a-o-G', 'b-m-p-s-p-i'].map((t) => cotFrame(t).affiliation)).to.deep.equal(['friend', 'hostile', 'hostile', 'hostile', 'unknown', 'unknown', 'unknown']);
      // an open frame's outline ends where the open side is: air at the bottom (largest y), subsurface at the top
      for (const [shape, open] of [['tent', 'bottom'], ['trefoil', 'bottom'], ['arch', 'top']] as const) {
        const pts = frameOutline(shape, open);
        const [first, last] = [pts[0]!, pts.at(-1)!];
        const ys = pts.map((p) => p[1]);
        const edge = open === 'bottom' ? Math.max(...ys) : Math.min(...ys);
        expect(first[1], `${shape} starts on the open side`).to.be.closeTo(edge, 1e-9);
        expect(last[1], `${shape} ends on the open side`).to.be.closeTo(edge, 1e-9);
        expect(first[0]).to.be.below(0).and.to.be.closeTo(-last[0], 1e-9);
      }
    });

    it('ADS-B chips come from live/reason/age_s/source and the page clock', () => {
      const doc: AdsbDoc = { live: true, reason: 'fresh', source: 'adsblol', attribution: 'Aircraft data: adsb.lol (ODbL 1.0)', age_s: 4, count: 12 };
      expect(adsbChip(doc, null, 1000, 2000, 10_000)).to.include({ text: 'LIVE · adsblol · 4 s', tone: 'ok' });
      expect(adsbChip({ ...doc, count: 0 }, null, 1000, 2000, 10_000).text).to.equal('LIVE · adsblol · 4 s · 0 aircraft');
      // reasons in words on the chip; the machine code stays in its title
      expect(adsbChip({ ...doc, live: false, reason: 'upstream_failed_serving_last_snapshot', age_s: 180 }, null, 1000, 2000, 10_000)).to.include({ text: 'CACHED · live=false · 3 min old · upstreams failing, last snapshot shown', tone: 'warn' });
      const none = adsbChip({ ...doc, live: false, reason: 'no_snapshot', count: 0 }, null, 1000, 2000, 10_000);
      expect(none).to.include({ text: 'NO DATA · no snapshot yet', tone: 'bad' });
      expect(none.title).to.equal('reason no_snapshot (/adsb). Aircraft data: adsb.lol (ODbL 1.0)');
      expect(adsbChip(null, 'HTTP 500', null, 2000, 10_000)).to.include({ text: 'NO DATA · HTTP 500', tone: 'bad' });
      // the page itself stopped hearing from the service: the last payload's live=true no longer counts
      expect(adsbChip(doc, null, 0, 25_000, 10_000)).to.include({ text: 'STALE (page) · last poll 25 s ago', tone: 'warn' });
    });

    it('vessel, verdict, CoT and ledger labels come from their API fields', () => {
      expect(vesselChip('2025-06-30T00:00:00Z', true, ['dataset_voyage_interpolation'], null).text).to.equal('SYNTHETIC SAMPLE · dataset positions · not AIS · as of 2025-06-30');
      expect(vesselChip(null, null, [], 'HTTP 404').tone).to.equal('bad');
      expect(verdictChip(3, 3).text).to.equal('SIMULATED FLIGHT · signed verdicts');
      expect(verdictChip(1, 3).text).to.equal('1 of 3 simulated · signed verdicts');
      expect(verdictChip(0, 0).text).to.equal('VERDICTS · none yet');
      expect(cotChip(8, 'sample', null).text).to.equal('SAMPLE TRACKS · no live TAK feed · 8');
      expect(ledgerText('EPHEMERAL', 'PROCESS_MEMORY')).to.equal('Ledger in memory — resets on restart');
      expect(ledgerText(null, null)).to.equal('Ledger state unknown');
    });
  });

  it('every API path the pages call is a GET route of the full app', async () => {
    const t = await buildTestApp();
    try {
      const sources = manifest.assets.filter((a) => /\.(js|html)$/.test(a.key)).map((a) => readAsset(a));
      const called = new Set<string>();
      for (const text of await Promise.all(sources)) {
        for (const m of text.matchAll(/\$\{[\w$]+\}(\/[\w/.-]+)/g)) called.add(`/api/svc/v1${m[1]}`);
        for (const m of text.matchAll(/["'`](\/(?:api|mesh|metrics|docs|energy-sovereign)[\w/.-]*)/g)) if (!m[1]!.endsWith('/') && m[1] !== '/api/svc/v1' && !m[1]!.startsWith('/api/svc/v1/assets/')) called.add(m[1]!);
      }
      expect([...called]).to.include.members(['/api/svc/v1/edge/3d', '/api/svc/v1/adsb', '/api/svc/v1/stream/verdicts', '/api/svc/v1/ledger/readiness', '/api/svc/v1/cot/export', '/api/svc/v1/fleet/vessels', '/api/svc/v1/receipt/export']);
      const table = new Set(t.routes.filter((r) => r.method === 'GET').map((r) => r.path));
      expect([...called].filter((p) => !table.has(p))).to.deep.equal([]);
    } finally {
      await t.close();
    }
  });

  it('our pages get the strict policy, exactly (no inline script or style anywhere); /docs keeps its own; API answers load nothing', async () => {
    const strict =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; font-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
    const t = await buildTestApp();
    try {
      for (const path of [...Object.keys(PAGES), '/energy-sovereign']) {
        const res = await t.http.get(path).expect(200);
        expect(res.headers['content-security-policy'], path).to.equal(strict);
        // nothing in the markup would need 'unsafe-inline': no style element, no style attribute, no inline script
        expect(res.text, path).to.not.match(/<style|\sstyle=|<script(?![^>]*\b(src=|type="application\/json"))[^>]*>/);
      }
      expect((await t.http.get('/docs').expect(200)).headers['content-security-policy']).to.equal(
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'",
      );
      expect((await t.http.get('/api/svc/v1/health')).headers['content-security-policy']).to.equal("default-src 'none'; frame-ancestors 'none'");
    } finally {
      await t.close();
    }
  });

  it('the /adsb record type is declared once, in src/isomorphic/wire, and both the server and the browser code import it', () => {
    const files = (dir: string): string[] => readdirSync(dir, { withFileTypes: true, recursive: true }).filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
    // a field only the aircraft record has: any other declaration of it is a restated copy
    const declaring = [...files('src'), ...files('workers')].filter((f) => /^\s+position_age_s\??:\s*(number|null)\b/m.test(readFileSync(f, 'utf8')));
    expect(declaring).to.deep.equal(['src/isomorphic/wire/adsb.ts']);
    const importers = [...files('src')].filter((f) => /from '[./]+isomorphic\/wire\/adsb\.js'/.test(readFileSync(f, 'utf8')));
    expect(importers).to.include.members(['src/adsb/adsb.routes.ts', 'src/adsb/normalise.ts', 'src/ui/client/globe/layers.ts', 'src/ui/client/common/honesty.ts']);
  });

  async function readAsset(a: ManifestEntry): Promise<string> {
    return ((await raw(http.get(a.url))).body as Buffer).toString('utf8');
  }
});
