/**
 * The energy panel, /docs and /jackin as an operator meets them, on a desktop (1440×900) and a phone
 * (390×844) in headless Chromium: numbers rounded with their units, nothing wider than the phone,
 * chart labels at least 11 px tall, the API groups in operator order, and the entry page wording
 * following the ledger mode and the health checks the service reports. SVC_UI_SCREENSHOTS=<dir>
 * saves a PNG of each page at each size there.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { closeAndCheckIsolation, guardedPage, launchBrowser, type Guarded, type TestBrowser } from '../helpers/browser.js';
import { freePort } from '../helpers/free-port.js';
import { killService, startService, type ServiceProcess } from '../helpers/service-process.js';
import { until } from '../helpers/until.js';
import { MAX_DECIMALS, quantityText } from '../../src/energy/quantity-text.js';
import { healthReasons, type HealthCheckDoc } from '../../src/ui/client/jackin/status-text.js';

const SHOTS = process.env.SVC_UI_SCREENSHOTS;
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
type Size = typeof DESKTOP;

/** Every decimal number in the page's rendered text (scripts and the embedded JSON excluded). */
async function decimalsShown(page: Page): Promise<string[]> {
  const text: string = await page.evaluate(() => (globalThis as any).document.body.innerText);
  return [...text.matchAll(/\d+\.(\d+)/g)].filter((m) => m[1]!.length > MAX_DECIMALS).map((m) => m[0]);
}

/** The page's width as laid out, and the elements reaching past the viewport (to say which one when it fails). */
async function overflow(page: Page): Promise<{ scrollWidth: number; wide: string[] }> {
  return page.evaluate(() => {
    const d = (globalThis as any).document;
    const wide = [...d.querySelectorAll('body *')]
      .filter((e: any) => e.getBoundingClientRect().right > d.documentElement.clientWidth + 1)
      .slice(0, 5)
      .map((e: any) => `${e.tagName}.${e.getAttribute('class') ?? ''}`);
    return { scrollWidth: d.documentElement.scrollWidth, wide };
  });
}

/** Each label of the visible chart: its rendered box height and its font size after the viewBox scaling, in CSS px. */
async function chartLabels(page: Page, charts = 'figure.series > svg'): Promise<{ text: string; boxPx: number; fontPx: number }[]> {
  return page.evaluate((selector) => {
    const d = (globalThis as any).document;
    const svgs = [...d.querySelectorAll(selector)].filter((s: any) => s.getBoundingClientRect().width > 0);
    return svgs.flatMap((svg: any) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return [...svg.querySelectorAll('text')].map((t: any) => ({
        text: t.textContent,
        boxPx: t.getBoundingClientRect().height,
        fontPx: parseFloat((globalThis as any).getComputedStyle(t).fontSize) * scale,
      }));
    });
  }, charts);
}

describe('operator pages in headless Chromium: energy panel, /docs, /jackin (desktop and phone)', function () {
  this.timeout(90_000);
  let browser: TestBrowser;
  let t: TestApp;
  let deadUpstream: string;
  let g: Guarded | null = null;

  before(async () => {
    // an ADS-B upstream nobody listens on: the feed fails, so /health warns, with a reason
    deadUpstream = `http://127.0.0.1:${await freePort()}/v2/mil`;
    [browser, t] = await Promise.all([
      launchBrowser(),
      buildTestApp({ adsb: { providers: [{ name: 'dead', url: deadUpstream }], minIntervalMs: 0, timeoutMs: 400 }, energy: { seriesIntervalMs: 200 } }),
    ]);
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(base: string, path: string, size: Size): Promise<Page> {
    g = await guardedPage(browser.browser, base, { viewport: size, touch: size.width < 500 });
    await g.page.goto(base + path);
    return g.page;
  }

  afterEach(async function () {
    if (!g) return;
    const guarded = g;
    g = null;
    await closeAndCheckIsolation(guarded, this.currentTest?.state === 'failed');
  });

  async function shot(page: Page, name: string, fullPage = true): Promise<void> {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, name), fullPage });
  }

  describe('/energy-sovereign', () => {
    before(async () => {
      // a chart with lines: the sampler has taken a few intervals
      await until('three sampled intervals', async () => ((await t.http.get('/api/svc/v1/energy/sovereign')).body.series.points.length as number) >= 3, 10_000);
    });

    /** The snapshot table: every value cell's text against the exact value and unit it keeps. */
    async function valueCells(page: Page): Promise<{ field: string; text: string; value: string | null; unit: string }[]> {
      return page.$$eval('td.value', (tds) =>
        tds.map((td) => ({ field: td.closest('tr')!.getAttribute('data-field')!, text: td.textContent!, value: td.getAttribute('data-value'), unit: td.getAttribute('data-unit')! })),
      );
    }

    it('on a phone (390×844): no page scroll sideways, numbers rounded, chart labels ≥ 11 px', async () => {
      const page = await open(t.baseUrl, '/energy-sovereign', PHONE);
      await page.waitForSelector('svg.chart-compact polyline[data-field="cpu_utilization"]');
      const o = await overflow(page);
      expect(o.scrollWidth, `wider than the phone: ${o.wide.join(', ')}`).to.be.at.most(PHONE.width);
      expect(await decimalsShown(page)).to.deep.equal([]);
      const labels = await chartLabels(page);
      // three y ticks and two time labels, all of them on the compact chart
      expect(labels.map((l) => l.text)).to.have.length(5);
      for (const l of labels) {
        expect(l.boxPx, `${l.text} box`).to.be.at.least(11);
        expect(l.fontPx, `${l.text} font`).to.be.at.least(11);
      }
      await shot(page, 'energy-390x844.png');
    });

    it('on a desktop (1440×900): numbers rounded, each with its unit, the exact value kept in the cell; chart labels ≥ 11 px', async () => {
      const page = await open(t.baseUrl, '/energy-sovereign', DESKTOP);
      await page.waitForSelector('svg.chart polyline[data-field="cpu_utilization"]');
      expect(await decimalsShown(page)).to.deep.equal([]);
      const snap = JSON.parse((await page.textContent('#sovereign-snapshot'))!) as Record<string, any>;
      const cells = await valueCells(page);
      expect(cells.length).to.be.at.least(15);
      for (const c of cells) {
        const q = c.field.split('.').reduce((o, k) => o[k], snap) as { value: number | null; unit: string };
        // the cell keeps the JSON's exact number, and shows it through the one formatter
        expect(c.value === null ? null : Number(c.value), c.field).to.equal(q.value);
        expect(c.unit, c.field).to.equal(q.unit);
        expect(c.text, c.field).to.equal(quantityText(q.value, q.unit, c.field));
        if (q.value !== null) expect(c.text, c.field).to.match(/^-?[\d,]+(\.\d{1,2})? (%|\(ratio\)|[µmn]?[A-Za-z][\w/]*)$/);
      }
      // a unit the quantity has, spot-checked: utilisation in percent, energy in joules, carbon in grams
      const by = Object.fromEntries(cells.map((c) => [c.field, c.text]));
      expect(by['measured.cpu_utilization']).to.match(/ %$/);
      expect(by['model.energy_j_total']).to.match(/ [µmk]?J$/);
      expect(by['carbon.gco2e']).to.match(/ [µmn]?gCO2e$/);
      expect(by['model.energy_kwh']).to.match(/ [µmn]?Wh$/);
      expect(await page.textContent('figcaption')).to.match(/Latest interval: \d+ requests?, [\d.]+ [µmn]?s of CPU, model [\d.]+ [m]?W\./);
      for (const l of await chartLabels(page)) expect(l.boxPx, `${l.text} box`).to.be.at.least(11);
      await shot(page, 'energy-1440x900.png');
    });

    it('the JSON answer keeps its exact values (presentation only changed)', async () => {
      const body = (await t.http.get('/api/svc/v1/energy/sovereign').expect(200)).body;
      // raw, unrounded numbers and the machine units, as before
      expect(body.model.energy_kwh.unit).to.equal('kWh');
      expect(body.measured.cpu_utilization.unit).to.equal('ratio');
      expect(body.model.energy_j_total.value).to.be.a('number');
      expect(typeof body.window.uptime_s.value).to.equal('number');
    });
  });

  describe('/docs', () => {
    it('has a viewport; lists verdicts and the ledger first, kernels last; fits a phone', async () => {
      const spec = (await t.http.get('/openapi.json').expect(200)).body as { tags: { name: string }[]; paths: Record<string, Record<string, { tags: string[] }>> };
      const order = spec.tags.map((x) => x.name);
      expect(order.slice(0, 3)).to.deep.equal(['verdicts', 'ledger', 'stream']);
      expect(order.at(-1)).to.equal('kernels');
      const used = new Set(Object.values(spec.paths).flatMap((ops) => Object.values(ops).flatMap((o) => o.tags)));
      expect([...order].sort()).to.deep.equal([...used].sort());

      for (const size of [PHONE, DESKTOP]) {
        const page = await open(t.baseUrl, '/docs', size);
        expect(await page.getAttribute('meta[name="viewport"]', 'content')).to.equal('width=device-width, initial-scale=1');
        await page.waitForSelector('.opblock-tag[data-tag="verdicts"]', { timeout: 20_000 });
        expect(await page.textContent('.opblock-summary-path >> nth=0')).to.equal('/api/svc/v1/verdict');
        // open the first operation: its example body is shown too; code blocks scroll inside their own box
        await page.click('.opblock-summary >> nth=0');
        await page.waitForSelector('.opblock.is-open .opblock-body');
        const o = await overflow(page);
        expect(o.scrollWidth, `wider than the window: ${o.wide.join(', ')}`).to.be.at.most(size.width);
        // the first screen: the whole document is some 20 000 px tall
        await shot(page, `docs-${size.width}x${size.height}.png`, false);
        // Swagger UI keeps only the operations near the viewport in the page: a window taller than the
        // whole document holds them all, in the order the page lists them
        await page.setViewportSize({ width: size.width, height: 40_000 });
        await page.waitForSelector('.opblock-tag[data-tag="kernels"]', { timeout: 20_000 });
        const seen = await page.$$eval('.opblock-tag', (els) => els.map((e) => e.getAttribute('data-tag')!));
        expect(seen).to.deep.equal(order);
        // and with every operation in the page, none is wider than the window
        const all = await overflow(page);
        expect(all.scrollWidth, `wider than the window: ${all.wide.join(', ')}`).to.be.at.most(size.width);
        await g!.context.close();
        g = null;
      }
    });
  });

  describe('/jackin', () => {
    /** The health card's reasons and the ledger sentence, once the page has read /health with its warn. */
    async function entry(base: string, size: Size) {
      const page = await open(base, '/jackin', size);
      await page.waitForSelector('body[data-ready="true"]');
      await page.waitForSelector('#card-health[data-status="warn"]', { timeout: 15_000 });
      return {
        page,
        health: await page.textContent('#health'),
        reasons: await page.$$eval('#health-why li', (lis) => lis.map((li) => li.textContent)),
        ledgerSentence: await page.textContent('#stream-ledger'),
        text: (await page.evaluate(() => (globalThis as any).document.body.innerText)) as string,
      };
    }

    const ADSB_WARN = 'adsb:cache-age warn: no snapshot: every upstream failed';

    /** The reasons /health gives now, worded as the page words them. */
    async function expectedReasons(base: string): Promise<string[]> {
      const h = (await (await fetch(`${base}/api/svc/v1/health`)).json()) as { checks: Record<string, HealthCheckDoc> };
      return healthReasons(h.checks);
    }

    /** The page shows the ADS-B warn and its reason, and every other line it shows is a check that does not pass, with its reason. */
    function expectReasons(shown: (string | null)[]): void {
      expect(shown).to.include(ADSB_WARN);
      for (const line of shown) expect(line).to.match(/^[\w:.-]+ (warn|fail): \S/);
    }

    it('memory mode: says the ledger resets on restart; the warn shows the check and its reason', async () => {
      // one read of the dead upstream: the ADS-B check warns from now on
      await t.http.get('/api/svc/v1/adsb').expect(200);
      expect(await expectedReasons(t.baseUrl)).to.include(ADSB_WARN);
      for (const size of [DESKTOP, PHONE]) {
        const e = await entry(t.baseUrl, size);
        expect(e.health).to.equal('warn');
        expectReasons(e.reasons);
        expect(e.ledgerSentence).to.equal('Verdicts go to the ledger in process memory, which resets on restart.');
        expect(await e.page.textContent('#ledger-detail')).to.contain('Ledger in memory — resets on restart');
        await shot(e.page, `jackin-memory-${size.width}x${size.height}.png`);
        await g!.context.close();
        g = null;
      }
    });

    it('the energy card draws its chart at the card\'s width: labels ≥ 11 px on a phone and on a desktop', async () => {
      for (const size of [PHONE, DESKTOP]) {
        const page = await open(t.baseUrl, '/jackin', size);
        await page.waitForFunction(() => Number((globalThis as any).document.querySelector('#energy-chart svg')?.getAttribute('data-points')) >= 2);
        const labels = await chartLabels(page, '#energy-chart > svg');
        // three y ticks and the first and last sample times
        expect(labels.map((l) => l.text), `${size.width} px`).to.have.length(5);
        for (const l of labels) {
          expect(l.boxPx, `${size.width} px: ${l.text} box`).to.be.at.least(10);
          expect(l.fontPx, `${size.width} px: ${l.text} font`).to.be.at.least(11);
        }
        expect((await overflow(page)).wide, `${size.width} px`).to.deep.equal([]);
        await g!.context.close();
        g = null;
      }
    });

    describe('file mode (the real entry point)', () => {
      let svc: ServiceProcess;
      let dataDir: string;
      before(async function () {
        this.timeout(120_000);
        dataDir = mkdtempSync(join(tmpdir(), 'svc-pages-'));
        svc = await startService({ SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dataDir, SVC_ADSB_PROVIDERS: `dead=${deadUpstream}`, SVC_ADSB_TIMEOUT_MS: '400', SVC_ADSB_MIN_INTERVAL_MS: '0' });
        await fetch(`${svc.base}/api/svc/v1/adsb`);
      });
      after(async () => {
        if (svc) await killService(svc);
        rmSync(dataDir, { recursive: true, force: true });
      });

      it('never says in-memory; names the durable file; the warn shows the check and its reason', async () => {
        const readiness = (await (await fetch(`${svc.base}/api/svc/v1/ledger/readiness`)).json()) as { durability_state: string; persistence_scope: string };
        expect(readiness).to.include({ durability_state: 'DURABLE', persistence_scope: 'LOCAL_FILE' });
        expect(await expectedReasons(svc.base)).to.include(ADSB_WARN);
        for (const size of [PHONE, DESKTOP]) {
          const e = await entry(svc.base, size);
          expect(e.text).to.not.match(/in-memory|in memory|resets on restart/i);
          expect(e.ledgerSentence).to.equal('Verdicts go to the ledger file in the data directory (durable: kept across restarts).');
          expectReasons(e.reasons);
          await shot(e.page, `jackin-file-${size.width}x${size.height}.png`);
          await g!.context.close();
          g = null;
        }
      });
    });
  });
});
