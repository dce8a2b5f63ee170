import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';

const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

describe('GET /mesh/state on an empty ledger', () => {
  const app = withTestApp();

  it('has exactly the 2.5 shape, with a null root on an empty ledger', async () => {
    const { body } = await app().http.get('/mesh/state');
    expect(body).to.have.keys('doctrine', 'wires', 'recent_traces', 'cortex_events', 'khipu_root', 'khipu_nodes', 'coexists_with', 'honesty');
    expect(body.doctrine).to.equal('v10');
    expect(Object.keys(body.wires)).to.deep.equal(['B', 'C', 'D', 'E', 'F']);
    for (const w of Object.values(body.wires) as { edge: string; status: string; detail: string }[]) {
      expect(w.edge).to.be.a('string');
      expect(w.detail).to.be.a('string');
      expect(['LIVE', 'LIVE_IN_PROCESS', 'IDLE']).to.include(w.status);
    }
    expect(body.khipu_root).to.equal(null);
  });
});

describe('GET /mesh/state as the app works', () => {
  const app = withTestApp();

  it('recent_traces hold real W3C traceparents, continuing the trace a client sent', async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    await app().http.get('/api/svc/v1/doctrine').set('traceparent', `00-${trace}-00f067aa0ba902b7-01`);
    const { body } = await app().http.get('/mesh/state');
    for (const r of body.recent_traces) expect(r.traceparent).to.match(TRACEPARENT);
    const mine = body.recent_traces.find((r: { traceparent: string }) => r.traceparent.split('-')[1] === trace);
    expect(mine).to.include({ route: '/api/svc/v1/doctrine', status: 200, method: 'GET' });
    expect(Date.parse(mine.at)).to.be.closeTo(Date.now(), 10000);
  });

  it('a POST verdict raises wire F by one and shows up as the last khipu node; the root matches readiness', async () => {
    const before = (await app().http.get('/mesh/state')).body;
    const v = await app().http.post('/api/svc/v1/verdict').send({ track_id: 'm1', lat: 10, lon: 10 });
    const after = (await app().http.get('/mesh/state')).body;
    expect(after.wires.F.counters.events).to.equal(before.wires.F.counters.events + 1);
    expect(after.wires.B.counters.events).to.be.greaterThan(before.wires.B.counters.events);
    expect(after.khipu_nodes.at(-1).digest).to.equal(v.body.ledger.node_digest);
    expect(after.cortex_events.at(-1)).to.include({ type: 'verdict', index: v.body.ledger.index, simulated: false });
    const ready = (await app().http.get('/api/svc/v1/ledger/readiness')).body;
    expect(after.khipu_root).to.equal(ready.integrity.root);
  });
});
