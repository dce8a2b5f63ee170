import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';
import { adsbDown, fakeUpstream, frame, worstOf, type FakeUpstream } from '../security/fakes.js';

const API = '/api/svc/v1';

describe('readiness', () => {
  const app = withTestApp();
  let up: FakeUpstream;
  before(async () => {
    up = await fakeUpstream(500);
  });
  after(() => up.close());

  describe('GET /readiness (index)', () => {
    it('check 1: the ledger section’s observations deep-equal the ledger readiness route’s body', async () => {
      await app().http.post(`${API}/verdict`).send(frame);
      await app().http.get(`${API}/readiness/refresh`);
      const { body, status } = await app().http.get(`${API}/readiness`);
      expect(status).to.equal(200);
      expect(body).to.include({ schema: 'svc.readiness/v1', doctrine: 'v11' });
      const ledger = body.sections.find((x: { section_id: string }) => x.section_id === 'ledger');
      const direct = (await app().http.get(`${API}/ledger/readiness`)).body;
      expect(ledger.observations).to.deep.equal(direct);
      expect(ledger.observations.integrity.nodes).to.equal(app().provided.ledger.status.size());
      expect(ledger.status).to.equal('pass');
      expect(body.sections.map((x: { section_id: string }) => x.section_id)).to.deep.equal(['ledger', 'signing-key', 'adsb-upstreams', 'worker-pool', 'cot']);
      for (const x of body.sections) expect((await app().http.get(x.live_url)).status, x.live_url).to.equal(200);
    });

    it('check 2: with the upstream down, adsb-upstreams is warn and overall is the worst section with ADS-B never making it fail', async () => {
      const saved = { adsb: app().provided.adsb.status, cot: app().provided.cot.status };
      app().provided.adsb.status = adsbDown([up.url]);
      try {
        const { body } = await app().http.get(`${API}/readiness/refresh`);
        const sections = body.sections as { section_id: string; status: 'pass' | 'warn' | 'fail' }[];
        expect(sections.find((x) => x.section_id === 'adsb-upstreams')!.status).to.equal('warn');
        expect(body.status).to.equal(worstOf(sections.map((x) => x.status)));
        const others = sections.filter((x) => x.section_id !== 'adsb-upstreams');
        // precondition (explicit, so the capped-warn assertion always runs): every other section passes
        expect(others.filter((x) => x.status !== 'pass'), 'sections other than adsb-upstreams that do not pass').to.deep.equal([]);
        expect(body.status).to.equal('warn');
        const adsb = (await app().http.get(`${API}/readiness/adsb-upstreams/live`)).body;
        expect(adsb.observations.upstreams).to.deep.equal([{ id: 'fake-0', host: new URL(up.url).host, last_status: 500, last_success_at: null, last_error: 'HTTP 500', consecutive_failures: 3, breaker: 'closed' }]);
        expect(adsb.observations.cache).to.deep.equal({ aircraft: 0, age_s: null, live: false });
      } finally {
        app().provided.adsb.status = saved.adsb;
        app().provided.cot.status = saved.cot;
      }
    });
  });

  describe('GET /readiness/{section_id}/live', () => {
    it('check 1: worker-pool: completed rises by exactly 1 across the probe and latency_ms > 0', async () => {
      const { body, status } = await app().http.get(`${API}/readiness/worker-pool/live`);
      expect(status).to.equal(200);
      expect(body.probe.ran).to.equal(true);
      expect(body.probe.ok).to.equal(true);
      expect(body.probe.latency_ms).to.be.greaterThan(0);
      expect(body.probe.details.completed_after).to.equal(body.observations.completed + 1);
      expect(body.observations.threads).to.equal(app().services.pool.snapshot().threads);
      expect(body.status).to.equal('pass');
    });

    it('check 2: adsb-upstreams: three rapid calls reach each upstream at most once; unknown section 404, malformed 422', async () => {
      const other = await fakeUpstream(200);
      const saved = app().provided.adsb.status;
      app().provided.adsb.status = adsbDown([other.url, up.url]);
      const hitsBefore = [other.hits(), up.hits()];
      try {
        const calls = await Promise.all([1, 2, 3].map(() => app().http.get(`${API}/readiness/adsb-upstreams/live`)));
        await app().http.get(`${API}/readiness/adsb-upstreams/live`);
        for (const c of calls) expect(c.body.status).to.equal('warn');
        expect(other.hits() - hitsBefore[0]!).to.equal(1);
        expect(up.hits() - hitsBefore[1]!).to.be.at.most(1);
        const upstreams = calls[0]!.body.probe.details.upstreams as { provider: string; status?: number }[];
        expect(upstreams.map((u) => u.provider)).to.deep.equal(['fake-0', 'fake-1']);
      } finally {
        app().provided.adsb.status = saved;
        await other.close();
      }
      const missing = await app().http.get(`${API}/readiness/no-such-section/live`);
      expect(missing.status).to.equal(404);
      expect(missing.body).to.deep.equal({ detail: "section 'no-such-section' not found" });
      for (const bad of ['Ledger', 'worker_pool', '-ledger', 'x'.repeat(65)]) {
        const res = await app().http.get(`${API}/readiness/${bad}/live`);
        expect(res.status, bad).to.equal(422);
        expect(res.body.detail[0].loc).to.deep.equal(['path', 'section_id']);
      }
    });

    it('signing-key: observations come from the served key, and the probe signs and verifies', async () => {
      const { body } = await app().http.get(`${API}/readiness/signing-key/live`);
      const pub = (await app().http.get(`${API}/edge/pubkey`)).body;
      expect(body.observations).to.include({ alg: 'ES256', curve: 'P-256', keyid: pub.keyid, public_key_url: pub.public_key_url, source: 'generated', created_at: pub.created_at });
      expect(body.probe.ok).to.equal(true);
      expect(body.status).to.equal('pass');
    });
  });

  describe('GET /readiness/refresh', () => {
    it('check 1: generated_at advances and the statuses equal the per-section live results', async () => {
      const first = (await app().http.get(`${API}/readiness/refresh`)).body;
      await new Promise((resolve) => setTimeout(resolve, 15)); // past the millisecond clock resolution
      const second = (await app().http.get(`${API}/readiness/refresh`)).body;
      // advances: strictly later (a constant or cached timestamp fails)
      expect(Date.parse(second.generated_at)).to.be.greaterThan(Date.parse(first.generated_at));
      expect(Date.parse(second.refreshed_at)).to.be.greaterThan(Date.parse(first.refreshed_at));
      for (const x of second.sections) expect((await app().http.get(x.live_url)).body.status, x.section_id).to.equal(x.status);
    });

    it('check 2: two refreshes with no traffic in between give identical statuses, and the ledger size is unchanged', async () => {
      const size = app().provided.ledger.status.size();
      const a = (await app().http.get(`${API}/readiness/refresh`)).body;
      const b = (await app().http.get(`${API}/readiness/refresh`)).body;
      const statuses = (r: { sections: { section_id: string; status: string }[] }) => r.sections.map((x) => [x.section_id, x.status]);
      expect(statuses(b)).to.deep.equal(statuses(a));
      expect(b.changed).to.deep.equal([]);
      expect(app().provided.ledger.status.size()).to.equal(size);
    });
  });
});
