import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';
import { threadCpuMs } from '../helpers/cpu-time.js';
import { loopBlockDuring } from '../helpers/loop-block.js';

// In-bounds but heavy stored events must not make status/export block the loop. Heavy in stored
// bytes (~39 KB exported) within the ingest limits on names, values and text.
const heavy = (i: number): string => {
  const els = Array.from({ length: 100 }, (_, k) => `<${`e${k}`.padEnd(64, 'x')} a="${'v'.repeat(160)}"/>`).join('');
  return `<event version="2.0" uid="heavy-${i}" type="a-u-A" how="m-g" time="2026-01-01T00:00:00Z" start="2026-01-01T00:00:00Z" stale="2027-01-01T00:05:00Z"><point lat="1" lon="1" hae="0" ce="1" le="1"/><detail>${els}<remarks>${'r'.repeat(16_000)}</remarks></detail></event>`;
};

describe('CoT under heavy stored events', () => {
  const app = withTestApp();
  before(async function () {
    this.timeout(120_000);
    for (let i = 0; i < 120; i++) {
      const res = await app().http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send(heavy(i));
      expect(res.status).to.equal(200);
    }
  });

  it('stored events are bounded in total bytes (oldest evicted), and status stays fast', async () => {
    const cfg = app().services.config.cot;
    expect(cfg.maxStoredBytes).to.equal(4 * 1024 * 1024);
    // the app runs on this thread: its CPU time is the request's cost, whatever else the machine does
    const started = threadCpuMs();
    const status = await app().http.get('/api/svc/v1/cot/status');
    expect(threadCpuMs() - started, 'ms of main-thread CPU for the status').to.be.below(300);
    const live = status.body.live as { tracks_total: number; tracks_cot_valid: number };
    expect(live.tracks_total).to.be.below(8 + 120);
    expect(live.tracks_cot_valid).to.equal(live.tracks_total);
    // the newest survive, the oldest went first
    expect((await app().http.get('/api/svc/v1/cot/export/heavy-119')).status).to.equal(200);
    expect((await app().http.get('/api/svc/v1/cot/export/heavy-0')).status).to.equal(404);
  });

  it('the export is streamed and bounded, and /health answers promptly meanwhile', async () => {
    let health: Response | undefined;
    let done: { status: number; text: string }[] = [];
    // the longest stretch the main thread (the app's) spent without yielding, in CPU time: what a
    // concurrent /health waits for at most, on a quiet or a loaded machine
    const { blockMs } = await loopBlockDuring(async () => {
      const exports = Array.from({ length: 2 }, () => fetch(`${app().baseUrl}/api/svc/v1/cot/export`).then(async (r) => ({ status: r.status, text: await r.text() })));
      health = await fetch(`${app().baseUrl}/api/svc/v1/health`);
      done = await Promise.all(exports);
    });
    // (its status reflects every check, e.g. the signer's self-test on a loaded machine: only promptness is asserted)
    expect((await health!.json()) as object).to.have.property('status');
    expect(blockMs, 'longest main-thread stretch, ms of CPU').to.be.below(1000); // the old synchronous export blocked for 4 s per export here
    for (const d of done) {
      expect(d.status).to.equal(200);
      expect(d.text.length).to.be.below(4.5 * 1024 * 1024);
      expect(d.text).to.match(/^<\?xml version="1\.0" encoding="UTF-8" standalone="yes"\?><events><event /);
      expect(d.text.endsWith('</event></events>')).to.equal(true);
    }
  });

  it('/cot/export/{uid} answers for the uid the export prints (svc-track-…)', async () => {
    const byId = await app().http.get('/api/svc/v1/cot/export/mar-001');
    const byUid = await app().http.get('/api/svc/v1/cot/export/svc-track-mar-001');
    expect(byUid.status).to.equal(200);
    expect(byUid.text).to.include('uid="svc-track-mar-001"');
    expect(byUid.text.replace(/"\d{4}-[^"]*Z"/g, 'T')).to.equal(byId.text.replace(/"\d{4}-[^"]*Z"/g, 'T'));
    expect((await app().http.get('/api/svc/v1/cot/export/svc-track-nope')).status).to.equal(404);
  });

  it('start after stale is a warning (README: staleness is a warning), not a refusal', async () => {
    const xml =
      '<event version="2.0" uid="late-start" type="a-u-A" how="m-g" time="2026-01-01T00:00:00Z" start="2026-01-01T00:10:00Z" stale="2026-01-01T00:05:00Z">' +
      '<point lat="1" lon="1" hae="0" ce="1" le="1"/><detail/></event>';
    const res = await app().http.post('/api/svc/v1/cot/ingest').set('content-type', 'application/xml').send(xml);
    expect(res.status).to.equal(200);
    expect(res.body.validation.warnings.map((w: { code: string }) => w.code)).to.include('start_after_stale');
  });
});
