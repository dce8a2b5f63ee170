/**
 * One headless Chromium for the browser tests, brought by `npm ci`: Debian's /usr/bin/chromium when
 * installed, otherwise the binary shipped inside the @sparticuz/chromium npm package (extracted to
 * /tmp on first use by its executablePath()). Launched with a fresh profile (Playwright's own
 * temporary --user-data-dir), no GPU (the 2-D canvas is fastest in software: 45-60 fps against 5-7
 * on SwiftShader) and a resolver that knows only 127.0.0.1, so even Chromium's own background
 * traffic cannot leave the machine.
 */
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import sparticuz from '@sparticuz/chromium';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

export const LAUNCH_FLAGS = [
  '--headless',
  '--no-sandbox', // we run as root
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--force-device-scale-factor=1',
  '--font-render-hinting=none',
  '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
];

export interface TestBrowser {
  browser: Browser;
  executablePath: string;
  /** Milliseconds from the start of launch() (binary extraction included) to a usable browser. */
  startMs: number;
  close(): Promise<void>;
}

export async function executablePath(): Promise<string> {
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  return sparticuz.executablePath();
}

export async function launchBrowser(): Promise<TestBrowser> {
  const started = performance.now();
  const path = await executablePath();
  // launch() always starts Chromium with a fresh temporary --user-data-dir of its own and deletes it
  // on close (it refuses one passed in args: that is launchPersistentContext, one context only)
  const browser = await chromium.launch({
    executablePath: path,
    args: LAUNCH_FLAGS,
    ignoreDefaultArgs: ['--enable-unsafe-swiftshader'],
    timeout: 60_000,
  });
  return {
    browser,
    executablePath: path,
    startMs: performance.now() - started,
    async close() {
      await browser.close();
    },
  };
}

export interface Guarded {
  context: BrowserContext;
  page: Page;
  /** Requests to anything but the allowed origin (aborted). */
  foreign: string[];
  /** Failed requests, with Chromium's error text. */
  failed: string[];
  /** Uncaught page errors and console errors. */
  errors: string[];
  /** Content-Security-Policy violations reported by any page of the context (directive, blocked URI, sample). */
  csp: string[];
}

/**
 * A context whose every request is checked against `origin`, so a page that reaches outside fails
 * its test: foreign requests are aborted and recorded, failures, page errors and CSP violations are
 * recorded; service workers are blocked so no request can bypass the router.
 */
export interface PageOptions {
  reducedMotion?: 'reduce' | 'no-preference';
  viewport?: { width: number; height: number };
  /** A phone: touch events, the mobile viewport meta honoured (390×844). */
  touch?: boolean;
}

export async function guardedPage(browser: Browser, origin: string, opts: PageOptions = {}): Promise<Guarded> {
  const context = await browser.newContext({
    serviceWorkers: 'block',
    viewport: opts.viewport ?? (opts.touch ? { width: 390, height: 844 } : { width: 1200, height: 720 }),
    reducedMotion: opts.reducedMotion ?? 'reduce',
    colorScheme: 'dark',
    ...(opts.touch ? { hasTouch: true, isMobile: true } : {}),
  });
  const foreign: string[] = [];
  const failed: string[] = [];
  const errors: string[] = [];
  const csp: string[] = [];
  // every page reports its CSP violations here, whether or not it has a svcUi hook of its own (a
  // fetch blocked by CSP never reaches the router or the failure log); init scripts are injected by
  // the browser, not loaded by the page, so the policy does not block them
  await context.exposeBinding('__svcCspViolation', (_source, v: string) => void csp.push(v));
  await context.addInitScript(() => {
    const g = globalThis as any;
    g.document.addEventListener('securitypolicyviolation', (e: any) => g.__svcCspViolation(`${e.effectiveDirective} ${e.blockedURI} ${e.sample}`.trim()));
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    foreign.push(url);
    return route.abort('blockedbyclient');
  });
  context.on('requestfailed', (r) => {
    // an EventSource or fetch the page itself closed is not a failure of the network
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && new URL(r.url()).origin === origin) return;
    failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`);
  });
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  return { context, page, foreign, failed, errors, csp };
}

/**
 * Closes a guarded page's context and, unless its test already failed, asserts that nothing left
 * 127.0.0.1 or broke the strict policy: the router, the failure log, both CSP reports and the
 * page's own error log (`svcUi.errors`, where a page has one) stay empty. A 503 from readiness or
 * health while the ledger starts is data, not a page error.
 */
export async function closeAndCheckIsolation(g: Guarded, testFailed: boolean): Promise<void> {
  const own = (await g.page.evaluate(() => (globalThis as { svcUi?: { errors: string[] } }).svcUi?.errors ?? []).catch(() => [] as string[])).filter((e) => /^(csp|error|rejection)/.test(e));
  await g.context.close();
  if (testFailed) return;
  expect(g.foreign, 'requests to other origins').to.deep.equal([]);
  expect(g.failed, 'failed requests').to.deep.equal([]);
  expect(g.csp, 'CSP violations').to.deep.equal([]);
  expect(own, 'page errors (svcUi)').to.deep.equal([]);
  expect(g.errors.filter((e) => !/status of 503/.test(e)), 'page errors').to.deep.equal([]);
}
