import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { EnergyMeter } from '../../src/energy/meter.js';

describe('energy/meter', () => {
  it('reads its clocks with the CPU and event-loop counters, not when a slow registry answers', async () => {
    const registry = new Registry();
    let askedAt = 0;
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'requests',
      registers: [registry],
      // a registry read that takes 80 ms, as a loaded event loop can make it
      async collect() {
        askedAt = Date.now();
        await new Promise((r) => setTimeout(r, 80));
      },
    });
    requests.inc(3);
    const meter = new EnergyMeter(registry, 'none');
    const calledAt = Date.now();
    const r = await meter.read();
    expect(r.requestsTotal).to.equal(3);
    expect(Date.now() - calledAt, 'the registry was slow').to.be.at.least(75);
    // the reading's time is the moment read() was called, before the registry was asked (an order,
    // not a duration, so a busy machine cannot blur it): the CPU it reports was read then too
    expect(r.at.getTime()).to.be.within(calledAt, askedAt);
    // and the next reading's interval spans the slow answer: it began after the first one returned
    const next = await meter.read();
    expect(next.uptimeS - r.uptimeS).to.be.at.least(0.075);
  });
});
