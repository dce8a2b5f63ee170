import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timedLoad } from '../../bench/lib.js';

describe('bench timedLoad at a fixed rate (--rate)', function () {
  // two-second loads; a limit for a loaded machine, not a speed bound
  this.timeout(120_000);
  let server: Server;
  let url: string;
  let received = 0;
  before(async () => {
    server = createServer((req, res) => {
      received++;
      req.resume();
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received = 0;
  });

  // autocannon sends each connection's share of a second at every whole second, the one the load
  // ends on included: uncapped, a 2 s load at 200/s sent 600 requests where 400 were due
  for (const { ratePerS, connections, durationS } of [
    { ratePerS: 200, connections: 4, durationS: 2 },
    { ratePerS: 10, connections: 4, durationS: 2 },
    { ratePerS: 30, connections: 2, durationS: 1 },
  ]) {
    it(`${ratePerS}/s over ${connections} connections for ${durationS} s sends exactly rate x duration, all answered`, async () => {
      const row = await timedLoad('fixed', { url, ratePerS, connections, durationS });
      const due = ratePerS * durationS;
      expect(row.fixedRate).to.deep.include({ ratePerS, latency: 'corrected', intended: due });
      expect({ sent: row.sent, answered: row.requests, received }).to.deep.equal({ sent: due, answered: due, received: due });
      expect(row.status).to.deep.equal({ 200: due });
    });
  }
});
