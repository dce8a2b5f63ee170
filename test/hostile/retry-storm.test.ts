import { Agent, request } from 'node:http';
import { expect } from 'chai';
import { AppError, Errors } from '../../src/http/errors.js';
import { ShedGovernor } from '../../src/http/shed.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

const policy = { holdMaxMs: 2000, retryStepPerS: 100, retryAfterMaxS: 30 };

describe('hostile: shed answers are cheap and back off clients that retry at once', function () {

  describe('ShedGovernor', () => {
    it('holds a client shed again before its Retry-After ran out, for the rest of it', () => {
      const g = new ShedGovernor(policy);
      const first = g.answer(Errors.queueFull(1), 'a', 10_000);
      expect(first.holdMs).to.equal(0);
      expect(first.err.headers['Retry-After']).to.equal('1');
      expect(g.answer(Errors.queueFull(1), 'a', 10_300).holdMs).to.equal(700);
      // held 700 ms, then told 1 s more: due at 12,000
      expect(g.answer(Errors.queueFull(1), 'a', 11_500).holdMs).to.equal(500);
      // another client is not held for the first one's retries
      expect(g.answer(Errors.queueFull(1), 'b', 11_500).holdMs).to.equal(0);
      // a client that waited its Retry-After out is answered at once
      expect(g.answer(Errors.queueFull(1), 'a', 20_000).holdMs).to.equal(0);
    });

    it('never holds longer than holdMaxMs', () => {
      const g = new ShedGovernor({ ...policy, holdMaxMs: 250 });
      g.answer(Errors.queueFull(10), 'a', 0);
      expect(g.answer(Errors.queueFull(10), 'a', 1).holdMs).to.equal(250);
    });

    it('adds a second to Retry-After per retryStepPerS sheds a second, up to retryAfterMaxS', () => {
      const g = new ShedGovernor(policy);
      let last = '';
      for (let i = 0; i < 250; i++) last = g.answer(Errors.queueFull(1), `c${i}`, 5_000 + i).err.headers['Retry-After']!;
      expect(last).to.equal('3'); // 1 given + floor(250 / 100)
      // the next second still remembers the last one's rate
      expect(g.answer(Errors.queueFull(1), 'x', 6_100).err.headers['Retry-After']).to.equal('3');
      // and a quiet second later it is back to what the pool said
      expect(g.answer(Errors.queueFull(1), 'y', 9_000).err.headers['Retry-After']).to.equal('1');
      const storm = new ShedGovernor(policy);
      let capped = '';
      for (let i = 0; i < 10_000; i++) capped = storm.answer(Errors.queueFull(2), `d${i}`, 1_000).err.headers['Retry-After']!;
      expect(capped).to.equal('30');
      // a longer wait than the cap, said by the error itself, is kept
      expect(storm.answer(Errors.capacity('Ledger store unavailable', 60), 'z', 1_000).err.headers['Retry-After']).to.equal('60');
    });

    it('keeps a rate limit exact: its wait is what the client must wait', () => {
      const g = new ShedGovernor(policy);
      for (let i = 0; i < 500; i++) g.answer(Errors.queueFull(1), `e${i}`, 0);
      const limited = new AppError('RATE_LIMITED', 429, 'Too many writes from this client, retry later', { 'Retry-After': '2' });
      expect(g.answer(limited, 'f', 10).err.headers['Retry-After']).to.equal('2');
    });

    it('serialises each distinct answer once and reuses it', () => {
      const g = new ShedGovernor(policy);
      const a = g.answer(Errors.queueFull(1), 'a', 0).err;
      const b = g.answer(Errors.queueFull(1), 'b', 1).err;
      expect(a).to.equal(b);
      expect(a.json.text).to.equal(JSON.stringify({ detail: 'Worker pool queue is full, retry later' }));
    });
  });

  describe('through HTTP, one kernel thread and a queue of one', () => {
    let t: TestApp;
    before(async () => {
      // a deadline no loaded machine reaches: the answers under test are 200 and 503, never 504
      t = await buildTestApp({ pool: { threads: 1, maxQueue: 1, taskDeadlineMs: 60_000 }, guard: { shedHoldMaxMs: 2000 } }, { checkResponses: false });
    });
    after(() => t.close());

    it('20 clients that retry at once get a few held answers each, not a loop of them', async () => {
      const url = `${t.baseUrl}/api/svc/v1/ssm/scan?seq_len=4096&state_dim=32`;
      const clients = 20;
      const runMs = 3000;
      const agent = new Agent({ keepAlive: true, maxSockets: clients });
      const counts = { ok: 0, shed: 0 };
      const bodies = new Set<string>();
      let longestHold = 0;
      const end = performance.now() + runMs;
      const once = (): Promise<void> =>
        new Promise((resolve, reject) => {
          const sent = performance.now();
          const req = request(url, { agent }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => {
              if (res.statusCode === 200) counts.ok++;
              else {
                expect(res.statusCode).to.equal(503);
                expect(Number(res.headers['retry-after'])).to.be.at.least(1);
                bodies.add(body);
                counts.shed++;
                longestHold = Math.max(longestHold, performance.now() - sent);
              }
              resolve();
            });
          });
          req.on('error', reject);
          req.end();
        });
      await Promise.all(Array.from({ length: clients }, async () => {
        while (performance.now() < end) await once();
      }));
      agent.destroy();
      expect(counts.ok).to.be.above(0);
      expect([...bodies]).to.deep.equal([JSON.stringify({ detail: 'Worker pool queue is full, retry later' })]);
      // all the clients share one address: after the first shed each answer waits out the last
      // Retry-After (>= 1 s), so 3 s allow about four each; answered at once it would be thousands
      expect(counts.shed).to.be.at.most(clients * 5);
      expect(longestHold).to.be.above(500);
    });
  });
});
