/**
 * The main-thread CPU one POST /cot/ingest may cost (the parse runs in a kernel thread), and the
 * parse's own cost in that thread for bodies over a limit. The body is built at every ingest limit at
 * once (elements, attributes, detail children, names, values, references, text, and the rest of
 * the 64 KiB filled with whitespace inside a tag, which sax also reads character by character);
 * bodies that were inside the old limits and cost 40-140 ms (thousands of attributes, long names
 * and values) must now be refused within one chunk of their limit. The figure is the thread's own
 * CPU time over the whole request (client included: a bare node:http call), so other processes on
 * a shared machine do not count.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import type { CotLimits } from '../../src/cot/cot.config.js';
import { withTestApp } from '../helpers/app.js';
import { prepareCot } from '../../src/lib/cot/prepare.js';

const INGEST = '/api/svc/v1/cot/ingest';
const BUDGET_MS = 10;

/** This thread's CPU time in ms (Linux; elsewhere the loop's active time, which counts waits too). */
function threadCpuMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return performance.eventLoopUtilization().active;
  }
}

function post(baseUrl: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${INGEST}`, { method: 'POST', headers: { 'content-type': 'application/xml', 'content-length': body.length } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const name = (stem: string, i: number, len: number) => `${stem}${i}`.padEnd(len, 'n');

/** One event at every limit, `bytes` long exactly; answered 200. */
function worstCaseEvent(uid: string, l: CotLimits, bytes: number, nowIso = new Date().toISOString()): string {
  const kids = Math.min(l.maxDetailChildren, Math.floor((l.maxElements - 3) / 2));
  const elements = kids * 2;
  const attrs = Math.min(l.maxAttributes - 12, elements * 2, l.maxAttrChars);
  // names and values share their budgets evenly; two references per value, within the cap
  const nameLen = Math.min(l.maxNameLen, Math.floor((l.maxNameChars - 20 - 37) / (elements + attrs)));
  const refsPer = Math.min(2, Math.floor(l.maxReferences / attrs));
  const valueLen = Math.min(l.maxAttrValueLen, Math.floor((l.maxAttrChars - 64) / attrs));
  const value = '&amp;'.repeat(refsPer) + 'v'.repeat(valueLen - refsPer);
  const textLen = Math.floor((l.maxTextChars - 64) / kids);
  let a = 0;
  const attrsOf = () => {
    const n = Math.min(2, attrs - a);
    let out = '';
    for (let k = 0; k < n; k++, a++) out += ` ${name('a', a, nameLen)}="${value}"`;
    return out;
  };
  let detail = '';
  for (let i = 0; i < kids; i++) {
    const c = name('c', i, nameLen);
    const g = name('g', i, nameLen);
    detail += `<${c}${attrsOf()}><${g}${attrsOf()}>${'t'.repeat(textLen)}</${g}></${c}>`;
  }
  const head = (pad: string) =>
    `<event${pad} version="2.0" uid="${uid}" type="a-u-A" how="m-g" time="${nowIso}" start="${nowIso}" stale="${nowIso}"><point lat="1" lon="1" hae="0" ce="1" le="1"/><detail>`;
  const rest = `${detail}</detail></event>`;
  const fill = bytes - Buffer.byteLength(head('') + rest);
  if (fill < 1) throw new Error(`the limits do not fit in ${bytes} bytes`);
  return head(' '.repeat(fill)) + rest;
}

describe('CoT ingest: main-thread CPU per request, bounded at the limits', () => {
  // the response check is test-only work on the same thread
  const app = withTestApp({}, { checkResponses: false });
  const limits = () => app().services.config.cot.limits;
  const bodyLimit = () => app().services.config.http.xmlLimitBytes;

  /**
   * Mean thread CPU of `runs` posts of `make(i)`, after `warm` posts: the steady cost, once V8 has
   * compiled the parser's paths (a first call in a process costs several times it). One reading
   * over all the runs: the kernel adds a running thread's time to schedstat at each tick (4 ms
   * here), so one request alone reads as 0, 4 or 8 ms.
   */
  async function cost(make: (i: number) => string, expectStatus: number, runs = 20, warm = 20): Promise<{ mean: number; text: string }> {
    let text = '';
    for (let i = 0; i < warm; i++) expect((await post(app().baseUrl, Buffer.from(make(1000 + i)))).status).to.equal(expectStatus);
    const bodies = Array.from({ length: runs }, (_, i) => Buffer.from(make(i)));
    for (const body of bodies) expect(body.length).to.be.at.most(bodyLimit());
    const statuses: number[] = [];
    const t0 = threadCpuMs();
    for (const body of bodies) {
      const res = await post(app().baseUrl, body);
      statuses.push(res.status);
      text = res.text;
    }
    const mean = (threadCpuMs() - t0) / runs;
    expect(statuses.every((s) => s === expectStatus), text.slice(0, 300)).to.equal(true);
    return { mean, text };
  }

  it(`an event at every limit, 64 KiB long, is stored for at most ${BUDGET_MS} ms of main-thread CPU`, async function () {
    const make = (i: number) => worstCaseEvent(`worst-${i}`, limits(), bodyLimit());
    const { mean, text } = await cost(make, 200);
    const body = JSON.parse(text) as { stored: boolean; detail_children: string[] };
    expect(body.stored).to.equal(true);
    expect(body.detail_children.length).to.equal(Math.min(limits().maxDetailChildren, Math.floor((limits().maxElements - 3) / 2)));
    expect(mean, `mean main-thread CPU ${mean.toFixed(2)} ms`).to.be.at.most(BUDGET_MS);
  });

  it('bodies that were inside the old limits and cost 40-140 ms are refused early, each well within the budget', async function () {
    const now = new Date().toISOString();
    const wrap = (uid: string, inner: string) =>
      `<event version="2.0" uid="${uid}" type="a-u-A" how="m-g" time="${now}" start="${now}" stale="${now}"><point lat="1" lon="1" hae="0" ce="1" le="1"/><detail>${inner}</detail></event>`;
    const fit = (uid: string, unit: (k: number) => string) => {
      let inner = '';
      for (let k = 0; Buffer.byteLength(wrap(uid, inner + unit(k))) <= bodyLimit(); k++) inner += unit(k);
      return wrap(uid, inner);
    };
    const cases: [string, (i: number) => string, string][] = [
      ['168 elements of 64 attributes', (i) => fit(`attrs-${i}`, () => `<e ${Array.from({ length: 64 }, (_, k) => `a${k}=""`).join(' ')}/>`), 'maxAttributes'],
      ['one element with 8,000 attributes', (i) => wrap(`one-${i}`, `<e${Array.from({ length: 8000 }, (_, k) => ` a${k.toString(36)}=""`).join('')}/>`), 'maxAttrsPerElement'],
      ['seven 8 KiB attribute values', (i) => wrap(`values-${i}`, `<e ${Array.from({ length: 7 }, (_, k) => `a${k}="${'v'.repeat(8190)}"`).join(' ')}/>`), 'maxAttrChars'],
      ['11,000 entity references', (i) => wrap(`refs-${i}`, `<e a="${'&amp;'.repeat(5500)}">${'&#65;'.repeat(5500)}</e>`), 'maxReferences'],
      ['long names', (i) => fit(`names-${i}`, (k) => `<${'n'.repeat(60)}${k}${[1, 2, 3].map((j) => ` ${'a'.repeat(60)}${j}=""`).join('')}/>`), 'maxNameChars'],
      ['a 60 KiB comment', (i) => wrap(`comment-${i}`, `<!--${'c'.repeat(60_000)}-->`), 'maxTextChars'],
    ];
    for (const [what, make, limit] of cases) {
      // through the service: refused with the limit named, and the main thread hardly touched
      const { mean, text } = await cost(make, 422, 10, 5);
      const issue = (JSON.parse(text) as { detail: { type: string; ctx: { limit: string } }[] }).detail[0]!;
      expect(issue.type, what).to.equal('xml_limit_exceeded');
      expect(issue.ctx.limit, what).to.equal(limit);
      expect(mean, `${what}: mean ${mean.toFixed(2)} ms`).to.be.at.most(BUDGET_MS / 2);
      // the kernel thread's share, run here: refused within one chunk of the limit
      const bodies = Array.from({ length: 10 }, (_, i) => make(2000 + i));
      for (const body of bodies.slice(0, 5)) prepareCot({ body, limits: limits(), nowMs: Date.now(), marker: 'm' });
      const t0 = threadCpuMs();
      for (const body of bodies) {
        const r = prepareCot({ body, limits: limits(), nowMs: Date.now(), marker: 'm' });
        expect(r.ok === false && r.kind === 'limit' && r.ctx.limit, what).to.equal(limit);
      }
      const parseMean = (threadCpuMs() - t0) / bodies.length;
      expect(parseMean, `${what}: parse mean ${parseMean.toFixed(2)} ms`).to.be.at.most(BUDGET_MS / 2);
    }
  });
});
