/**
 * The pages in a real headless Chromium: one browser for this file, one context per test, every
 * request checked against the test server's origin. Aircraft come only from the fake readsb
 * upstream through /api/svc/v1/adsb; verdicts are posted through the API. SVC_UI_SCREENSHOTS=<dir>
 * saves a PNG of each page there.
 */
import { expect } from 'chai';
import { mkdirSync, readFileSync } from 'node:fs';
import { geoContains, type GeoPermissibleObjects } from 'd3-geo';
import { feature } from 'topojson-client';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { closeAndCheckIsolation, guardedPage, launchBrowser, type Guarded, type TestBrowser } from '../helpers/browser.js';
import { GOOD_AIRCRAFT, BAD_AIRCRAFT, startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { openSse } from '../helpers/sse.js';
import { DECISION_STYLE, GLYPH_SIZE, GROUND_COLOR, hexToRgb, LAND, OCEAN } from '../../src/ui/client/common/palette.js';
import { seriesChart } from '../../src/isomorphic/energy-chart.js';
import { FRAME_FILL } from '../../src/ui/client/globe/cot-frame.js';
import type { EnergySeries } from '../../src/isomorphic/wire/energy.js';

const SHOTS = process.env.SVC_UI_SCREENSHOTS;

type Rgba = [number, number, number, number];

/** A pixel of one of the page's canvases (device pixels). */
async function pixel(page: Page, canvas: 'base' | 'overlay', x: number, y: number): Promise<Rgba> {
  return page.evaluate(
    ([id, px, py]) => {
      const c = (globalThis as any).document.getElementById(id as string);
      return Array.from(c.getContext('2d')!.getImageData(Math.floor(px as number), Math.floor(py as number), 1, 1).data) as Rgba;
    },
    [canvas, x, y] as const,
  );
}

function near(actual: Rgba, hex: string, tol = 3): boolean {
  const [r, g, b] = hexToRgb(hex);
  return Math.abs(actual[0] - r) <= tol && Math.abs(actual[1] - g) <= tol && Math.abs(actual[2] - b) <= tol && actual[3] === 255;
}

/** Opaque and nearer to `hex` than to black (an edge pixel may blend with the dark outline). */
function mostly(actual: Rgba, hex: string): boolean {
  const [r, g, b] = hexToRgb(hex);
  const d = Math.hypot(actual[0] - r, actual[1] - g, actual[2] - b);
  return actual[3] === 255 && d < Math.hypot(r, g, b) / 3;
}

const svc = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`(() => { const s = window.svcUi; return ${fn}; })()`) as Promise<T>;

/**
 * Waits until the overlay shows every input given so far: a frame after `frame`, then two
 * animation frames, by which the redraw the last input requested has run.
 */
async function drawnAfterInput(page: Page, frame: number): Promise<void> {
  await page.waitForFunction((f) => (globalThis as any).svcUi.frame > f, frame);
  await page.evaluate(() => new Promise((r) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(r))));
}

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as any).svcUi?.ready === true, null, { timeout: 20_000 });
}

/** Military aircraft spread evenly over the sphere (golden-angle spiral), every category, track and altitude band: a fixture served by the fake upstream. */
function manyAircraft(n: number): Record<string, unknown>[] {
  const cats = ['A1', 'A3', 'A5', 'A6', 'A7', 'B6', null];
  return Array.from({ length: n }, (_, i) => ({
    hex: `f${i.toString(16).padStart(5, '0')}`,
    type: 'adsb_icao',
    flight: `T${i}`,
    dbFlags: 1,
    alt_baro: i % 11 === 0 ? 'ground' : (i * 97) % 45_000,
    track: (i * 37) % 360,
    category: cats[i % cats.length],
    lat: (Math.asin(2 * ((i + 0.5) / n) - 1) * 180) / Math.PI,
    lon: ((i * 137.50776) % 360) - 180,
    seen_pos: 1,
    seen: 1,
  }));
}

describe('src/ui pages in headless Chromium', function () {
  this.timeout(60_000);
  let browser: TestBrowser;
  let fake: FakeUpstream;
  let t: TestApp;
  let g: Guarded | null = null;

  before(async () => {
    [browser, fake] = await Promise.all([launchBrowser(), startFakeUpstream()]);
    // the energy series samples every 200 ms here (a ring that does not fill during this file), so the
    // charts have points within a second and visibly grow between two refreshes of the entry page
    t = await buildTestApp({ adsb: { providers: [{ name: 'fake', url: fake.url }], minIntervalMs: 0, freshMs: 200, maxBodyBytes: 16 * 1024 * 1024 }, energy: { seriesIntervalMs: 200, seriesPoints: 3000 } });
    console.log(`      chromium ${browser.executablePath}: ready in ${browser.startMs.toFixed(0)} ms`);
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await fake?.close();
  });

  async function open(path: string, opts: Parameters<typeof guardedPage>[2] = {}, before?: (page: Page) => void): Promise<Page> {
    g = await guardedPage(browser.browser, t.baseUrl, opts);
    before?.(g.page);
    await g.page.goto(t.baseUrl + path);
    return g.page;
  }

  afterEach(async function () {
    if (!g) return;
    const guarded = g;
    g = null;
    await closeAndCheckIsolation(guarded, this.currentTest?.state === 'failed');
  });

  it('the globe draws land and ocean, and the fixture aircraft with the right glyph, rotation and colour', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT, ...BAD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction(() => (globalThis as any).svcUi.layers.aircraft?.count === 3);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'globe.png') });
    // land (Kansas) and ocean (north-east Pacific) at the page's own projection, away from graticule lines
    const kansas = (await svc<[number, number]>(page, 's.project(-98.3, 38.6)'))!;
    const pacific = (await svc<[number, number]>(page, 's.project(-135.4, 26.3)'))!;
    expect(near(await pixel(page, 'base', ...kansas), LAND, 2), 'land pixel').to.equal(true);
    expect(near(await pixel(page, 'base', ...pacific), OCEAN, 2), 'ocean pixel').to.equal(true);
    // the feed's military aircraft with a position, and nothing else (BAD_AIRCRAFT are dropped by the API)
    const count = await svc<Record<string, unknown>>(page, 's.layers.aircraft');
    expect(count).to.include({ count: 3, apiCount: 3, live: true });
    const c17 = await svc<Record<string, any>>(page, "s.target('ac:ae01c5')");
    expect(c17).to.include({ glyph: 'heavy', color: '#90a4ff', trackDeg: 87.1, stale: false, drawn: true });
    const ground = await svc<Record<string, any>>(page, "s.target('ac:ae0002')");
    expect(ground).to.include({ glyph: 'unknown', color: GROUND_COLOR, trackDeg: null, screenRotationDeg: null });
    expect(await svc<Record<string, any>>(page, "s.target('ac:43c6f1')")).to.include({ glyph: 'heavy', color: '#4dd0e1' });
    // rotation: track plus the local direction of north on screen, estimated here by a finite difference
    const north = (await svc<[number, number]>(page, 's.project(-77.1, 38.51)'))!;
    const northDeg = (Math.atan2(north[0] - c17.x, -(north[1] - c17.y)) * 180) / Math.PI;
    const expected = (((87.1 + northDeg) % 360) + 360) % 360;
    expect(c17.screenRotationDeg).to.be.closeTo(expected, 0.5);
    // only the aircraft layer for the pixel checks (the layer toggles work, and no label or vessel sits near the glyph)
    const frame = await svc<number>(page, 's.frame');
    for (const id of ['#layer-vessel', '#layer-cot', '#layer-drone', '#opt-labels']) await page.uncheck(id);
    await drawnAfterInput(page, frame);
    expect(await page.textContent('#targets-count')).to.equal('3 targets');
    // pixels in glyph space (nose at -y), turned by the reported rotation: the fuselage and both
    // swept-back wing tips carry the altitude colour; the mirror points ahead of the wings are empty,
    // so a glyph drawn the wrong way round fails here
    const rot = (c17.screenRotationDeg * Math.PI) / 180;
    const size = GLYPH_SIZE.heavy;
    const at = (gx: number, gy: number): [number, number] => [c17.x + size * (gx * Math.cos(rot) - gy * Math.sin(rot)), c17.y + size * (gx * Math.sin(rot) + gy * Math.cos(rot))];
    expect(near(await pixel(page, 'overlay', c17.x, c17.y), '#90a4ff'), 'glyph centre').to.equal(true);
    expect(near(await pixel(page, 'overlay', ...at(0, 0.45)), '#90a4ff'), 'rear fuselage').to.equal(true);
    for (const side of [1, -1]) {
      expect(mostly(await pixel(page, 'overlay', ...at(0.85 * side, 0.23)), '#90a4ff'), `wing tip ${side}`).to.equal(true);
      expect((await pixel(page, 'overlay', ...at(0.85 * side, -0.3)))[3], `ahead of wing ${side}`).to.equal(0);
    }
    // honesty chip from the API fields
    expect(await page.textContent('#chip-adsb')).to.match(/^LIVE · fake · \d+ s$/);
    expect(await page.getAttribute('body', 'data-aircraft-live')).to.equal('true');
  });

  it('clicking an aircraft opens the details panel with its fields and sources', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction(() => (globalThis as any).svcUi.target('ac:ae01c5')?.drawn);
    const c17 = await svc<{ x: number; y: number }>(page, "s.target('ac:ae01c5')");
    const box = (await page.locator('#overlay').boundingBox())!;
    await page.mouse.click(box.x + c17.x, box.y + c17.y);
    await page.waitForFunction(() => (globalThis as any).svcUi.selected === 'ac:ae01c5');
    expect(await page.isVisible('#details')).to.equal(true);
    const field = (name: string) => page.textContent(`#details-fields dd[data-field="${name}"]`);
    expect(await field('hex')).to.match(/^ae01c5 · \/adsb · fake$/);
    expect(await field('callsign')).to.contain('RCH123');
    expect(await field('type')).to.contain('C17 BOEING C-17A Globemaster 3');
    expect(await field('altitude')).to.contain('32,000 ft');
    expect(await field('track')).to.contain('87.1°');
    expect(await field('squawk')).to.contain('1234');
    expect(await field('position age')).to.match(/\d+ s/);
    expect(await field('attribution')).to.contain('Aircraft data: fake');
    expect(await page.getAttribute('#targets-body tr[data-key="ac:ae01c5"]', 'aria-selected')).to.equal('true');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'globe-details.png') });
  });

  it('labels never overlap: of two aircraft a pixel apart one is labelled, and a selected one always is', async () => {
    const ac = (hex: string, flight: string, lat: number, lon: number) => ({ hex, type: 'adsb_icao', flight, dbFlags: 1, alt_baro: 20000, track: 90, category: 'A3', lat, lon, seen_pos: 1, seen: 1 });
    fake.aircraft = [ac('ae0a01', 'CLOSE1', 38.0, -90.0), ac('ae0a02', 'CLOSE2', 38.1, -90.1), ac('ae0a03', 'FAR3', 45.0, -110.0)];
    const page = await open('/elite/globe');
    await ready(page);
    // the aircraft alone (the simulated flight's drones, started by the stream of earlier pages, have
    // labels of their own), and labels are placed when the overlay is drawn: wait for such a frame
    await page.waitForFunction(() => (globalThis as any).svcUi.layers.aircraft?.drawn === 3);
    for (const id of ['#layer-vessel', '#layer-cot', '#layer-drone']) await page.uncheck(id);
    const f0 = await svc<number>(page, 's.frame');
    await page.waitForFunction((f) => (globalThis as any).svcUi.frame > f, f0);
    const labelled = async () => Object.fromEntries(await Promise.all(['ae0a01', 'ae0a02', 'ae0a03'].map(async (h) => [h, (await svc<{ labelled: boolean }>(page, `s.target('ac:${h}')`)).labelled])));
    const before = await labelled();
    expect(before.ae0a03).to.equal(true);
    expect(Number(before.ae0a01) + Number(before.ae0a02), JSON.stringify(before)).to.equal(1);
    const hidden = before.ae0a01 ? 'ae0a02' : 'ae0a01';
    const frame = await svc<number>(page, 's.frame');
    await page.locator(`#targets-body tr[data-key="ac:${hidden}"]`).click();
    await page.waitForFunction((f) => (globalThis as any).svcUi.frame > f, frame);
    const after = await labelled();
    expect(after[hidden], 'the selected one').to.equal(true);
    expect(Number(after.ae0a01) + Number(after.ae0a02)).to.equal(1);
  });

  it('keyboard only: focus the globe, rotate, zoom, select in the target table, clear with Esc', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    for (let i = 0; i < 5 && (await page.evaluate(() => (globalThis as any).document.activeElement?.id)) !== 'globe'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).to.equal('globe');
    const before = await svc<{ lon: number; lat: number; zoom: number }>(page, 's.view');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Shift+ArrowUp');
    await page.keyboard.press('+');
    await page.waitForFunction((z) => (globalThis as any).svcUi.view.zoom > z, before.zoom);
    const after = await svc<{ lon: number; lat: number; zoom: number }>(page, 's.view');
    expect(after.lon - before.lon).to.be.closeTo(5, 1e-9);
    expect(after.lat - before.lat).to.be.closeTo(20, 1e-9);
    expect(after.zoom / before.zoom).to.be.closeTo(1.25, 1e-9);
    // a letter typed into the search box is text, not a shortcut (WCAG 2.1.4)
    await page.keyboard.press('/');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).to.equal('f-search');
    await page.keyboard.type('d');
    expect((await svc<{ lon: number }>(page, 's.view')).lon).to.equal(after.lon);
    await page.keyboard.press('Backspace');
    // Tab onward to the table's roving row, move down, select
    for (let i = 0; i < 40 && (await page.evaluate(() => (globalThis as any).document.activeElement?.tagName)) !== 'TR'; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.tagName)).to.equal('TR');
    const first = await page.evaluate(() => (globalThis as any).document.activeElement.dataset.key);
    await page.keyboard.press('ArrowDown');
    const second = await page.evaluate(() => (globalThis as any).document.activeElement.dataset.key);
    expect(second).to.be.a('string').and.not.equal(first);
    await page.keyboard.press('Enter');
    expect(await svc<string>(page, 's.selected')).to.equal(second);
    expect(await page.isVisible('#details')).to.equal(true);
    await page.keyboard.press('Escape');
    expect(await svc<string | null>(page, 's.selected')).to.equal(null);
    expect(await page.isHidden('#details')).to.equal(true);
  });

  it('land: 1:50m drawn at rest, 1:110m while the globe is dragged, 1:50m again once it rests', async () => {
    // The Belcher Islands (Hudson Bay) are land at 1:50m and sea at 1:110m: one pixel tells which
    // set is on the canvas. Checked here against both world-atlas files, so the fixture cannot rot.
    const island: [number, number] = [-79.377, 56.174];
    const load = (f: string) => {
      const topo = JSON.parse(readFileSync(join('node_modules/world-atlas', f), 'utf8'));
      return feature(topo, topo.objects.land) as unknown as GeoPermissibleObjects;
    };
    expect(geoContains(load('land-50m.json'), island), 'land at 1:50m').to.equal(true);
    expect(geoContains(load('land-110m.json'), island), 'sea at 1:110m').to.equal(false);
    fake.aircraft = [];
    const page = await open('/elite/globe');
    await ready(page);
    await page.focus('#globe');
    for (let i = 0; i < 3; i++) await page.keyboard.press('+'); // zoom 1.95: the island is a few pixels across
    await page.waitForFunction(() => (globalThis as any).svcUi.land.drawn === '50m' && (globalThis as any).svcUi.view.zoom > 1.9, null, { timeout: 20_000 });
    expect(await svc<string[]>(page, 's.land.loaded')).to.deep.equal(['110m', '50m']);
    const at = (await svc<[number, number]>(page, `s.project(${island[0]}, ${island[1]})`))!;
    const isLand = (px: Rgba) => Math.hypot(...hexToRgb(LAND).map((c, i) => c - px[i]!)) < Math.hypot(...hexToRgb(OCEAN).map((c, i) => c - px[i]!));
    expect(isLand(await pixel(page, 'base', ...at)), 'island at rest').to.equal(true);
    // drag 6 px right and back, button held: the same view, redrawn while moving
    const box = (await page.locator('#globe').boundingBox())!;
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const view = await svc<{ lon: number; lat: number }>(page, 's.view');
    const frame = await svc<number>(page, 's.baseFrame');
    await page.mouse.move(cx, cy);
    await page.mouse.down();
    await page.mouse.move(cx + 6, cy);
    await page.mouse.move(cx, cy);
    await page.waitForFunction((f) => (globalThis as any).svcUi.baseFrame >= f + 2, frame);
    const during = await svc<{ drawn: string; moving: boolean }>(page, 's.land');
    expect(during).to.include({ drawn: '110m', moving: true });
    expect(await svc<{ lon: number; lat: number }>(page, 's.view')).to.deep.include({ lat: view.lat }).and.have.property('lon').closeTo(view.lon, 1e-9);
    expect(isLand(await pixel(page, 'base', ...at)), 'island while dragging').to.equal(false);
    // still held past the settle time: still 110m (a held button is a drag in progress)
    await page.waitForTimeout(400);
    expect(await svc<string>(page, 's.land.drawn')).to.equal('110m');
    await page.mouse.up();
    await page.waitForFunction(() => (globalThis as any).svcUi.land.drawn === '50m');
    expect(isLand(await pixel(page, 'base', ...at)), 'island at rest again').to.equal(true);
    const cost = await svc<Record<string, number[]>>(page, 's.perf.baseMsBy');
    console.log(`      base draw: 110m ${JSON.stringify(cost['110m'])} ms, 50m ${JSON.stringify(cost['50m'])} ms`);
  });

  it('pinch zoom on a touch screen: two fingers apart zoom in by their distance ratio, together zoom out', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe', { touch: true });
    await ready(page);
    const box = (await page.locator('#globe').boundingBox())!;
    const [cx, cy] = [Math.round(box.x + box.width / 2), Math.round(box.y + box.height / 2)];
    const cdp = await g!.context.newCDPSession(page);
    const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', half: number) =>
      cdp.send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x: cx - half, y: cy, id: 1 }, { x: cx + half, y: cy, id: 2 }] });
    const pinch = async (from: number, to: number) => {
      await touch('touchStart', from);
      for (let i = 1; i <= 6; i++) await touch('touchMove', Math.round(from + ((to - from) * i) / 6));
      await touch('touchEnd', to);
    };
    const z0 = await svc<number>(page, 's.view.zoom');
    await pinch(40, 100); // fingers 80 px apart, then 200
    await page.waitForFunction((z) => (globalThis as any).svcUi.view.zoom > z, z0);
    const z1 = await svc<number>(page, 's.view.zoom');
    expect(z1 / z0).to.be.closeTo(200 / 80, 0.02);
    expect(await svc<number>(page, 's.view.scale')).to.be.above(0);
    // the view's centre did not move and nothing was selected (a pinch is not a tap)
    expect(await svc<string | null>(page, 's.selected')).to.equal(null);
    await pinch(100, 50); // 200 px apart, then 100
    await page.waitForFunction((z) => (globalThis as any).svcUi.view.zoom < z, z1);
    expect((await svc<number>(page, 's.view.zoom')) / z1).to.be.closeTo(0.5, 0.02);
    // a one-finger tap still selects: the C-17 fixture
    await page.waitForFunction(() => (globalThis as any).svcUi.target('ac:ae01c5')?.drawn);
    const c17 = await svc<{ x: number; y: number }>(page, "s.target('ac:ae01c5')");
    await page.touchscreen.tap(box.x + c17.x, box.y + c17.y);
    await page.waitForFunction(() => (globalThis as any).svcUi.selected === 'ac:ae01c5');
  });

  it('CoT tracks get MIL-STD-2525 / APP-6 frames from their type: shape and fill by affiliation, air open below', async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    const fixtures = [
      { uid: 'ui-f-g', type: 'a-f-G-U-C', lon: -108, lat: 42, shape: 'rectangle', affiliation: 'friend', open: null },
      { uid: 'ui-h-g', type: 'a-h-G-U-C', lon: -100, lat: 42, shape: 'diamond', affiliation: 'hostile', open: null },
      { uid: 'ui-n-g', type: 'a-n-G', lon: -92, lat: 42, shape: 'square', affiliation: 'neutral', open: null },
      { uid: 'ui-u-g', type: 'a-u-G', lon: -108, lat: 34, shape: 'quatrefoil', affiliation: 'unknown', open: null },
      { uid: 'ui-h-a', type: 'a-h-A-M-F', lon: -100, lat: 34, shape: 'tent', affiliation: 'hostile', open: 'bottom' },
      { uid: 'ui-f-s', type: 'a-f-S-C', lon: -92, lat: 34, shape: 'circle', affiliation: 'friend', open: null },
    ] as const;
    for (const f of fixtures) {
      const xml = `<event version="2.0" uid="${f.uid}" type="${f.type}" how="h-e" time="${iso(now)}" start="${iso(now)}" stale="${iso(now + 600_000)}"><point lat="${f.lat}" lon="${f.lon}" hae="9999999.0" ce="9999999.0" le="9999999.0"/><detail><contact callsign="${f.uid.toUpperCase()}"/></detail></event>`;
      const res = await t.http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send(xml).expect(200);
      expect(res.body.stored, f.uid).to.equal(true);
    }
    fake.aircraft = [];
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction((k) => (globalThis as any).svcUi.target(k)?.drawn, `cot:${fixtures.at(-1)!.uid}`);
    // the CoT layer alone: no labels, trails, zones or other symbols near the frames
    const frame0 = await svc<number>(page, 's.frame');
    for (const id of ['#layer-vessel', '#layer-drone', '#layer-aircraft', '#layer-zones', '#opt-labels', '#opt-trails']) await page.uncheck(id);
    await drawnAfterInput(page, frame0);
    const S = 6; // px per frame unit (draw.ts COT_FRAME_PX)
    for (const f of fixtures) {
      const tg = await svc<Record<string, any>>(page, `s.target('cot:${f.uid}')`);
      expect(tg.frame, f.uid).to.include({ shape: f.shape, affiliation: f.affiliation, open: f.open });
      expect(tg.color, f.uid).to.equal(FRAME_FILL[f.affiliation]);
      const px = (dx: number, dy: number) => pixel(page, 'overlay', tg.x + dx * S, tg.y + dy * S);
      const fill = FRAME_FILL[f.affiliation];
      expect(near(await px(0, 0), fill), `${f.uid} centre`).to.equal(true);
      // at least a pixel inside the outline's inner edge, wherever the frame lands between pixels
      const inside: Record<string, [number, number][]> = { rectangle: [[1.2, 0]], square: [[0.7, 0.7]], diamond: [[0, -0.95]], quatrefoil: [[0, -0.9]], tent: [[0, -0.9]], circle: [[0.7, 0.5]] };
      const outside: Record<string, [number, number][]> = { rectangle: [[0, 1.35]], square: [[1.35, 0]], diamond: [[0.9, 0.9]], quatrefoil: [[0.8, 0.8]], tent: [[0, 1.2]], circle: [[1.5, 0]] };
      for (const [dx, dy] of inside[f.shape]!) {
        const p = await px(dx, dy);
        expect(mostly(p, fill), `${f.uid} filled at ${dx},${dy}: ${p}`).to.equal(true);
      }
      for (const [dx, dy] of outside[f.shape]!) expect((await px(dx, dy))[3], `${f.uid} empty at ${dx},${dy}`).to.equal(0);
      if (f.open === 'bottom') {
        // no outline along the open base (y = 0.7 units): just above it the fill is untouched, while
        // the side walls at the same height are outlined
        expect(near(await px(0, 0.7 - 1 / S), fill), `${f.uid} open base`).to.equal(true);
        expect(near(await px(1.1, 0.5), fill), `${f.uid} side wall`).to.equal(false);
      }
    }
    // the legend shows the frames it uses, and the details panel names the frame
    expect(await page.locator('#legend-cot li').count()).to.equal(5);
    await page.check('#opt-labels');
    await page.locator('#targets-body tr[data-key="cot:ui-h-a"]').click();
    expect(await page.textContent('#details-fields dd[data-field="frame"]')).to.match(/^hostile · air · tent \(open at the bottom\)/);
  });

  it('verdicts posted through the API appear within one second, coloured and shaped by decision', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction(() => (globalThis as any).svcUi.sse?.state === 'live');
    for (const [i, frame] of [
      { track_id: 'UI-OK-1', lat: 36.1, lon: -115.3, source: 'OpenDroneID', id_authenticated: true },
      { track_id: 'UI-NFZ-2', lat: 36.225, lon: -115.16, source: 'OpenDroneID' },
    ].entries()) {
      const started = performance.now();
      const res = await t.http.post('/api/svc/v1/verdict').send(frame).expect(200);
      const { index } = res.body.ledger as { index: number };
      const decision = res.body.decision as keyof typeof DECISION_STYLE;
      await page.waitForSelector(`#feed li[data-index="${index}"]`, { timeout: 1000 });
      const ms = performance.now() - started;
      expect(ms, `verdict ${i} on the page`).to.be.below(1000);
      const li = page.locator(`#feed li[data-index="${index}"]`);
      expect(await li.getAttribute('data-decision')).to.equal(decision);
      expect(await li.locator('.tag').textContent()).to.equal(`${{ ALLOW: '●', REVIEW: '▲', DENY: '⊠' }[decision]} ${decision}`);
      const [r, g2, b] = hexToRgb(DECISION_STYLE[decision].color);
      expect(await li.locator('.tag').evaluate((e) => (globalThis as any).getComputedStyle(e).backgroundColor)).to.equal(`rgb(${r}, ${g2}, ${b})`);
      expect(await li.locator('a').getAttribute('href')).to.equal(`/api/svc/v1/receipt/export?index=${index}`);
      // the track reaches the globe with the edge scene's position, drawn with its decision's shape
      await page.waitForFunction((k) => (globalThis as any).svcUi.target(k)?.decision, `dr:${frame.track_id}`, { timeout: 5000 });
      expect(await svc<Record<string, unknown>>(page, `s.target('dr:${frame.track_id}')`)).to.include({ kind: 'drone', color: DECISION_STYLE[decision].color });
    }
  });

  it('a stream cap 503 is followed by a reconnect with ?last_event_id= that misses no event', async () => {
    const capped = await buildTestApp({ stream: { maxViewers: 1, tickMs: 60_000 }, adsb: { providers: [{ name: 'fake', url: fake.url }], minIntervalMs: 0 } });
    const streamUrls: string[] = [];
    try {
      g = await guardedPage(browser.browser, capped.baseUrl);
      const page = g.page;
      page.on('request', (r) => {
        if (r.url().includes('/stream/verdicts')) streamUrls.push(r.url());
      });
      await page.goto(capped.baseUrl + '/elite/globe');
      await ready(page);
      await page.waitForFunction(() => (globalThis as any).svcUi.sse?.state === 'live');
      const post = async (n: number) => {
        const ids: number[] = [];
        for (let i = 0; i < n; i++) ids.push((await capped.http.post('/api/svc/v1/verdict').send({ track_id: `CAP-${i}`, lat: 36.1, lon: -115.3 }).expect(200)).body.ledger.index);
        return ids;
      };
      const seenFirst = await post(2);
      await page.waitForFunction((id) => (globalThis as any).svcUi.sse.lastId === id, seenFirst.at(-1));
      // drop the page's stream and take the only viewer slot before its automatic reconnect (retry: 2 s)
      capped.server.closeAllConnections();
      let holder = null;
      for (let i = 0; i < 50 && !holder; i++) {
        const r = await openSse(`${capped.baseUrl}/api/svc/v1/stream/verdicts`);
        if (r.res.statusCode === 200) holder = r;
        else {
          r.close();
          await new Promise((ok) => setTimeout(ok, 20));
        }
      }
      expect(holder, 'the test holds the viewer slot').to.not.equal(null);
      // the browser's reconnect gets 503: EventSource closes for good, the page backs off on its own
      await page.waitForFunction(() => (globalThis as any).svcUi.sse.state === 'backoff', null, { timeout: 10_000 });
      expect(await page.textContent('#chip-sse')).to.match(/^RECONNECTING · attempt \d+/);
      const missed = await post(3);
      holder!.close();
      await page.waitForFunction((id) => (globalThis as any).svcUi.sse.lastId === id && (globalThis as any).svcUi.sse.state === 'live', missed.at(-1), { timeout: 20_000 });
      const sse = await svc<{ gaps: number; duplicates: number; opens: number }>(page, 's.sse');
      expect(sse).to.include({ gaps: 0, duplicates: 0 });
      expect(sse.opens).to.be.at.least(2);
      expect(streamUrls.some((u) => u.endsWith(`?last_event_id=${seenFirst.at(-1)}`)), streamUrls.join(' ')).to.equal(true);
      const shown = await page.$$eval('#feed li', (lis) => lis.map((li: any) => Number((li as any).dataset.index)));
      for (const id of [...seenFirst, ...missed]) expect(shown, `ledger index ${id}`).to.include(id);
      // 503 answers show up as console errors; nothing else may
      g.errors.splice(0, g.errors.length, ...g.errors.filter((e) => !/status of 503/.test(e)));
      g.failed.splice(0, g.failed.length, ...g.failed.filter((e) => !/stream\/verdicts/.test(e)));
      await g.context.close();
    } finally {
      g = null;
      await capped.close();
    }
  });

  it('a hidden page disconnects from the stream and resumes from the last id when visible again', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction(() => (globalThis as any).svcUi.sse?.state === 'live');
    const setHidden = (hidden: boolean) =>
      page.evaluate((h) => {
        const d = (globalThis as any).document;
        Object.defineProperty(d, 'hidden', { value: h, configurable: true });
        Object.defineProperty(d, 'visibilityState', { value: h ? 'hidden' : 'visible', configurable: true });
        d.dispatchEvent(new (globalThis as any).Event('visibilitychange'));
      }, hidden);
    const first = (await t.http.post('/api/svc/v1/verdict').send({ track_id: 'UI-VIS-0', lat: 36.1, lon: -115.3 }).expect(200)).body.ledger.index as number;
    await page.waitForFunction((id) => (globalThis as any).svcUi.sse.lastId >= id, first);
    await setHidden(true);
    expect(await svc<string>(page, 's.sse.state')).to.equal('paused');
    const missed = (await t.http.post('/api/svc/v1/verdict').send({ track_id: 'UI-VIS-1', lat: 36.1, lon: -115.3 }).expect(200)).body.ledger.index as number;
    await setHidden(false);
    await page.waitForSelector(`#feed li[data-index="${missed}"]`, { timeout: 5000 });
    expect(await svc<{ gaps: number; duplicates: number; state: string }>(page, 's.sse')).to.include({ gaps: 0, duplicates: 0, state: 'live' });
  });

  it('5,000 aircraft: overlay redraw p90 ≤ 30 ms measured in the page, no long task over 200 ms (best of 5 windows)', async () => {
    fake.aircraft = manyAircraft(5000);
    const page = await open('/elite/globe');
    await ready(page);
    await page.waitForFunction(() => (globalThis as any).svcUi.layers.aircraft?.count === 5000, null, { timeout: 20_000 });
    await page.focus('#globe');
    // On this shared 2-core machine other processes can take the CPU for a whole window (timings are
    // wall-clock; at load 13 even the static entry page logs 200+ ms long tasks): up to five windows
    // of 20 key-driven redraws; one must meet both bounds. A page that is slow itself fails them all.
    const windows: string[] = [];
    let passed = false;
    for (let w = 0; w < 5 && !passed; w++) {
      const mark = await svc<{ frames: number; long: number; samples: number }>(page, '({ frames: s.frame, long: s.longTasks.length, samples: s.perf.overlayMs.length })');
      for (let i = 0; i < 20; i++) await page.keyboard.press(i % 2 ? 'ArrowRight' : 'ArrowDown');
      await page.waitForFunction((f) => (globalThis as any).svcUi.frame > f + 10, mark.frames);
      const ms = (await svc<number[]>(page, 's.perf.overlayMs')).slice(mark.samples).sort((a, b) => a - b);
      const longTasks = (await svc<number[]>(page, 's.longTasks')).slice(mark.long);
      const base = (await svc<number[]>(page, 's.perf.baseMs')).slice(-ms.length).sort((a, b) => a - b);
      const p90 = ms[Math.floor(ms.length * 0.9)]!;
      windows.push(`${ms.length} overlay redraws, median ${ms[ms.length >> 1]} ms, p90 ${p90} ms (base median ${base[base.length >> 1]} ms); long tasks ${JSON.stringify(longTasks)}`);
      passed = ms.length >= 10 && p90 <= 30 && longTasks.every((d) => d <= 200);
    }
    const drawn = await svc<number>(page, 's.layers.aircraft.drawn');
    console.log(`      5,000 aircraft, ${drawn} on screen (LOD ${await svc<string>(page, 's.lod')}):\n        ${windows.join('\n        ')}`);
    // ~2,500 on the visible hemisphere: the middle level of detail (heading arrows in altitude colours)
    expect(drawn).to.be.above(1500);
    expect(await svc<string>(page, 's.lod')).to.equal('arrows');
    expect(passed, windows.join('; ')).to.equal(true);
    expect(await page.textContent('#targets-count')).to.match(/^showing 200 of \d/);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'globe-5000.png') });
  });

  it('the guards see a request that tries to leave 127.0.0.1 (so the checks above can fail)', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    const page = await open('/elite/globe');
    await ready(page);
    await page.evaluate(() => fetch('http://198.51.100.7/tiles/0/0/0.png').catch(() => null));
    await page.waitForFunction(() => (globalThis as any).svcUi.errors.some((e: string) => e.startsWith('csp: connect-src')));
    // an inline style attribute is refused too (style-src without 'unsafe-inline'), and reported
    await page.evaluate(() => {
      const d = (globalThis as any).document.createElement('p');
      d.setAttribute('style', 'color: red');
      (globalThis as any).document.body.append(d);
    });
    await page.waitForFunction(() => (globalThis as any).svcUi.errors.some((e: string) => e.startsWith('csp: style-src')));
    expect(g!.csp.some((v) => v.startsWith('connect-src http://198.51.100.7/tiles/0/0/0.png')), g!.csp.join('; ')).to.equal(true);
    expect(g!.csp.some((v) => v.startsWith('style-src-attr inline')), g!.csp.join('; ')).to.equal(true);
    await page.goto('http://198.51.100.7/').catch(() => null);
    expect(g!.foreign).to.deep.equal(['http://198.51.100.7/']);
    // checked: now clear them so the after-each isolation check judges only the page
    g!.foreign.length = 0;
    g!.failed.length = 0;
    g!.csp.length = 0;
    await g!.context.close();
    g = null;
  });

  it('the entry page shows health, pool, ledger, ADS-B and stream status, the latest verdicts and links', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    await t.http.post('/api/svc/v1/verdict').send({ track_id: 'UI-ENTRY', lat: 36.1, lon: -115.3 }).expect(200);
    const page = await open('/jackin');
    await page.waitForSelector('body[data-ready="true"]');
    expect(await page.textContent('#health')).to.match(/^(pass|warn|fail)$/);
    expect(await page.textContent('#pool')).to.match(/^2 threads · \d+ % busy$/);
    expect(await page.textContent('#ledger')).to.match(/^\d+ nodes · integrity VERIFIED$/);
    expect(await page.textContent('#ledger-detail')).to.contain('Ledger in memory — resets on restart');
    expect(await page.textContent('#adsb')).to.match(/^LIVE · fake · \d+ s$/);
    expect(await page.textContent('#stream')).to.match(/^\d+ viewers?$/);
    expect(await page.locator('#verdicts li', { hasText: 'UI-ENTRY' }).count()).to.equal(1);
    for (const href of ['/elite/globe', '/docs', '/api/svc/v1/receipt/export']) expect(await page.locator(`a[href="${href}"]`).count(), href).to.equal(1);
    expect(await page.locator('a[href="/energy-sovereign"]').count()).to.be.at.least(1);
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'jackin.png'), fullPage: true });
  });

  it('the entry page charts the measured energy series, and the chart grows with the samples', async () => {
    const served: EnergySeries[] = [];
    const page = await open('/jackin', {}, (p) =>
      p.on('response', (r) => {
        if (r.url().endsWith('/api/svc/v1/energy/sovereign')) void r.json().then((b: { series: EnergySeries }) => served.push(b.series));
      }),
    );
    await page.waitForSelector('body[data-ready="true"]');
    await page.waitForFunction(() => Number((globalThis as any).document.querySelector('#energy-chart svg')?.getAttribute('data-points')) >= 1);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#energy-chart polyline').length === 2);
    const drawn = async () => ({
      n: Number(await page.getAttribute('#energy-chart svg', 'data-points')),
      width: Number((await page.getAttribute('#energy-chart svg', 'viewBox'))!.split(' ')[2]),
      cpu: (await page.getAttribute('#energy-chart polyline[data-field="cpu_utilization"]', 'points'))!,
    });
    const first = await drawn();
    // exactly the points the page was served, through the shared geometry, at the card's width (240 to 460 units)
    const s1 = served.at(-1)!;
    expect(first.n).to.equal(s1.points.length);
    expect(first.width).to.be.within(240, 460);
    expect(first.cpu).to.equal(seriesChart(s1.points, first.width, 130).lines[0]!.points);
    expect(first.cpu.split(' ')).to.have.length(first.n);
    expect(await page.textContent('#energy-detail')).to.match(/^one sample every 0\.2 s; latest interval: CPU [\d.]+ %, event loop [\d.]+ %, \d+ requests?, model [\d.]+ W$/);
    // the page refreshes every 5 s; by then the 200 ms sampler has added points
    await page.waitForFunction((n) => Number((globalThis as any).document.querySelector('#energy-chart svg')?.getAttribute('data-points')) > n, first.n, { timeout: 12_000 });
    const second = await drawn();
    expect(second.n).to.be.above(first.n);
    expect(second.cpu.split(' ')).to.have.length(second.n);
    expect(served.at(-1)!.points.map((p) => p.at)).to.include(s1.points.at(-1)!.at);
  });

  it('the energy panel charts the measured series (a vertex per sample), with no script, under the strict CSP', async () => {
    const page = await open('/energy-sovereign');
    await page.waitForSelector('svg.chart polyline[data-field="cpu_utilization"]');
    const snap = JSON.parse((await page.textContent('#sovereign-snapshot'))!) as { series: EnergySeries };
    const n = snap.series.points.length;
    expect(n, 'samples taken since the app was built').to.be.at.least(2);
    expect(await page.getAttribute('svg.chart', 'data-points')).to.equal(String(n));
    // the drawn lines are the series of this very snapshot, point for point
    const chart = seriesChart(snap.series.points, 640, 200);
    for (const l of chart.lines) expect(await page.getAttribute(`svg.chart polyline[data-field="${l.field}"]`, 'points'), l.field).to.equal(l.points);
    // and they are painted: at each line's newest vertex the browser's hit test finds that line's stroke
    const box = (await page.locator('svg.chart').boundingBox())!;
    for (const l of chart.lines) {
      const v = l.vertices.at(-1)!;
      const u = l.vertices.at(-2) ?? v;
      const k = box.width / chart.width; // the drawing scales to the width of the page
      // a vertex on the chart's edge is hit-tested a pixel inside, where its stroke still is
      const inside = (p: number, lo: number, size: number): number => Math.min(lo + size - 1, Math.max(lo + 1, p));
      // dashed lines have gaps: walk back along the newest segment, a pixel at a time, over one dash period
      const len = Math.max(1, Math.hypot(u.x - v.x, u.y - v.y) * k);
      const probes = Array.from({ length: 12 }, (_, i) => Math.min(1, i / len)).map((t) => [inside(box.x + (v.x + (u.x - v.x) * t) * k, box.x, box.width), inside(box.y + (v.y + (u.y - v.y) * t) * k, box.y, box.height)]);
      // every element hit at each probe, topmost first (null: not a series line). Where two series
      // end on the same values their newest segments coincide and the later line covers the
      // earlier one: it counts as painted if nothing but other series lines lies over it
      const stacks: (string | null)[][] = await page.evaluate(
        (pts) => pts.map(([x, y]) => [...(globalThis as any).document.elementsFromPoint(x, y)].map((e: any) => e.getAttribute('data-field') as string | null)),
        probes,
      );
      const seen = stacks.some((stack) => stack.includes(l.field) && stack.slice(0, stack.indexOf(l.field)).every((f) => f !== null));
      expect(seen, `${l.field} painted at its newest vertex: ${JSON.stringify(stacks.map((st) => st.slice(0, 3)))}`).to.equal(true);
    }
    expect(await page.$$('script:not([type="application/json"])')).to.have.length(0);
    expect(await page.$$('style, [style]')).to.have.length(0);
    // the stylesheet applied: the page is dark (var(--bg)), not the browser's white default
    expect(await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor)).to.equal('rgb(7, 18, 28)');
    if (SHOTS) await page.screenshot({ path: join(SHOTS, 'energy.png'), fullPage: true });
  });

  it('/docs keeps working under its own policy (Swagger UI): operations render and expand, no CSP violation, nothing leaves', async function () {
    this.timeout(120_000);
    const page = await open('/docs');
    // Swagger UI parses the 1.3 MB document in the page: a loaded machine needs far more than a quiet one
    await page.waitForSelector('.opblock-summary', { timeout: 60_000 });
    await page.click('.opblock-summary >> nth=0');
    await page.waitForSelector('.opblock.is-open .opblock-body');
    // Swagger UI renders only the operations near the screen: a tall window holds them all
    await page.setViewportSize({ width: 1200, height: 40_000 });
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('.opblock').length > 20);
  });

  // last: it leaves the ADS-B feed with failures on record
  it('an upstream failure shows CACHED from the API fields and greys the aircraft out; nothing claims LIVE', async () => {
    fake.aircraft = [...GOOD_AIRCRAFT];
    expect((await t.http.get('/api/svc/v1/adsb').expect(200)).body.live).to.equal(true); // a snapshot to fall back on
    await new Promise((ok) => setTimeout(ok, 300)); // past freshMs: the next read goes upstream
    fake.mode = 'error';
    try {
      const page = await open('/elite/globe');
      await ready(page);
      await page.waitForSelector('body[data-aircraft-live="false"]');
      expect(await page.textContent('#chip-adsb')).to.match(/^CACHED · live=false · .+ old · upstreams failing, last snapshot shown$/);
      expect(await page.getAttribute('#chip-adsb', 'title')).to.match(/^reason upstream_failed_serving_last_snapshot \(\/adsb\)\. /);
      expect(await page.getAttribute('#chip-adsb', 'class')).to.equal('chip warn');
      // the last snapshot is still shown (the API says so), drawn grey, and flagged in the table
      const c17 = await svc<Record<string, unknown>>(page, "s.target('ac:ae01c5')");
      expect(c17).to.include({ stale: true, drawn: true, color: '#8a8f94' });
      expect(await page.getAttribute('#targets-body tr[data-key="ac:ae01c5"]', 'class')).to.equal('stale');
      expect(await svc<Record<string, unknown>>(page, 's.layers.aircraft')).to.include({ live: false, reason: 'upstream_failed_serving_last_snapshot' });
      expect(await page.textContent('body')).to.not.match(/LIVE · fake/);
    } finally {
      fake.mode = 'ok';
    }
  });
});
