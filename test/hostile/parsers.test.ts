import { expect } from 'chai';
import { countJsonMembers, MAX_JSON_MEMBERS } from '../../src/http/body.js';
import { killService, mainThreadCpuMs, settled, startService, type ServiceProcess } from '../helpers/service-process.js';
import { POST_BUDGET_MS, POST_SAMPLES, SAMPLE_FRAME } from '../../bench/post-samples.js';


/** What one request inside every limit may cost the main thread, whatever it carries. */
const BUDGET_MS = POST_BUDGET_MS;
const frame = SAMPLE_FRAME;
const keys = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 1]));
const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

describe('hostile: every parser on the request path costs the main thread little at the limits', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  let svc: ServiceProcess;
  before(async () => {
    svc = await startService({ SVC_WRITE_RATE_PER_S: '100000', SVC_WRITE_BURST: '100000' });
    await settled(svc);
  });
  after(() => killService(svc));

  /** The least main-thread CPU of three sends: a busy machine adds to a try, a costly parse costs every time. */
  async function cost(path: string, init: RequestInit = {}): Promise<{ status: number; body: string; ms: number }> {
    let best = { status: 0, body: '', ms: Infinity };
    for (let i = 0; i < 3; i++) {
      const before = mainThreadCpuMs(svc);
      const res = await fetch(svc.base + path, init);
      const body = await res.text();
      const ms = mainThreadCpuMs(svc) - before;
      if (ms < best.ms) best = { status: res.status, body, ms };
    }
    return best;
  }

  // a status, or the statuses a correct service may give
  const cases: [string, string, RequestInit, number | number[]][] = [
    ['If-None-Match of 15,000 entity-tags', '/api/svc/v1/fleet/vessels', { headers: { 'if-none-match': '"x",'.repeat(15_000) } }, 200],
    ['Accept of 3,700 media ranges', '/jackin', { headers: { accept: 'text/html;q=0.5,'.repeat(3_700) } }, 200],
    ['Cookie of 12,000 pairs', '/api/svc/v1/health', { headers: { cookie: 'a=b; '.repeat(12_000) } }, 200],
    ['a 60 KB traceparent', '/api/svc/v1/health', { headers: { traceparent: `00-${'a'.repeat(60_000)}` } }, 200],
    // Node 20's parser takes them (the first 1,000 are kept); Node 24's refuses so many: a JSON 431
    ['2,000 headers', '/api/svc/v1/health', { headers: Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`x-h${i}`, 'v'])) }, [200, 431]],
    ['a Content-Type of 9,000 parameters', '/api/svc/v1/verdict', { ...json(frame), headers: { 'content-type': `application/json${'; a=b'.repeat(9_000)}` } }, 200],
    ['a kernel `request` of 2,800 keys (the head limit)', `/api/svc/v1/fgbrain/manifest?request=${encodeURIComponent(JSON.stringify(keys(2_800)))}`, {}, 422],
    ['a khipu DAG `request` of 2,800 keys', `/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify(keys(2_800)))}`, {}, 422],
    ...POST_SAMPLES.map((p): [string, string, RequestInit, number | number[]] => [`POST ${p.name}`, p.path, { method: 'POST', headers: { 'content-type': p.contentType }, body: p.body }, p.status]),
  ];
  for (const [name, path, init, status] of cases) {
    it(`${name}: ${[status].flat().join(" or ")}, under ${BUDGET_MS} ms of main-thread CPU`, async () => {
      const r = await cost(path, init);
      expect(r.status, r.body.slice(0, 300)).to.be.oneOf(typeof status === 'number' ? [status] : status);
      expect(r.ms).to.be.below(BUDGET_MS);
    });
  }

  it('more object members than any route takes are refused before JSON.parse, with the bound in the body', async () => {
    const r = await cost('/api/svc/v1/verdict', json({ ...frame, ...keys(20_938) }));
    expect(JSON.parse(r.body)).to.deep.equal({
      detail: [{ type: 'too_many_members', loc: ['body'], msg: `JSON body should have at most ${MAX_JSON_MEMBERS} object members`, input: null, ctx: { max_members: MAX_JSON_MEMBERS } }],
    });
  });

  it('many unknown keys are reported as the first 32 and a count, without joi', async () => {
    const r = await cost('/api/svc/v1/verdict', json({ ...frame, ...keys(4_000) }));
    const detail = (JSON.parse(r.body) as { detail: { type: string; loc: unknown[]; ctx?: Record<string, number> }[] }).detail;
    expect(detail).to.have.length(33);
    expect(detail[0]).to.deep.include({ type: 'extra_forbidden', loc: ['body', 'k0'] });
    expect(detail[31]).to.deep.include({ type: 'extra_forbidden', loc: ['body', 'k31'] });
    expect(detail[32]).to.deep.include({ type: 'too_many_errors', ctx: { shown: 32, total: 4_000 } });
  });

  it('members are counted outside strings only, escapes included', () => {
    expect(countJsonMembers('{"a:b":1,"c\\":":{"d":[":"]}}', 100)).to.equal(3);
    expect(countJsonMembers('[":::"]', 100)).to.equal(0);
    expect(countJsonMembers('{"a":1,"b":2,"c":3}', 1)).to.equal(2); // stops one past the bound
  });
});
