/**
 * CoT uid pinning. The store keeps the newest `time` per uid, so an event dated 9999 would refuse
 * every later real update of its uid: `time` and `start` may be at most `cot.maxFutureSkewS`
 * (60 s) ahead of the service's clock and `stale` at most `cot.maxStaleAheadS` (366 days), else
 * 422 `cot_time_out_of_range`. And a uid first stored with a write token is replaced only with that
 * token (422 `cot_uid_owned`); one stored without a token may be replaced by anyone, and a token
 * that does so takes it over.
 */
import { expect } from 'chai';
import { CotService } from '../../src/cot/service.js';
import { TrackRegistry } from '../../src/cot/tracks.js';
import { AppError } from '../../src/http/errors.js';
import { testConfig, withTestApp } from '../helpers/app.js';

const INGEST = '/api/svc/v1/cot/ingest';
const iso = (ms: number) => new Date(ms).toISOString();

function event(uid: string, timeMs: number, over: { start?: string; stale?: string; time?: string } = {}): string {
  const time = over.time ?? iso(timeMs);
  const start = over.start ?? time;
  const stale = over.stale ?? iso(timeMs + 120_000);
  return `<event version="2.0" uid="${uid}" type="a-u-A-M-F-Q" how="m-g" time="${time}" start="${start}" stale="${stale}"><point lat="36.2" lon="-115.2" hae="100" ce="10" le="5"/><detail><contact callsign="PIN"/></detail></event>`;
}

interface Issue {
  type: string;
  loc: string[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

describe('CoT uid pinning: future times are bounded', () => {
  const app = withTestApp();
  const post = (xml: string, token?: string) => {
    const req = app().http.post(INGEST).set('content-type', 'application/xml');
    return (token ? req.set('authorization', `Bearer ${token}`) : req).send(xml);
  };

  it('an event dated 9999-12-31 is refused with 422, and the real producer keeps updating its track', async () => {
    const pin = await post(event('pin-1', Date.now(), { time: '9999-12-31T23:59:59Z', start: '9999-12-31T23:59:59Z', stale: '9999-12-31T23:59:59Z' }));
    expect(pin.status).to.equal(422);
    const issues = pin.body.detail as Issue[];
    expect(issues.map((i) => [i.type, i.loc.join('/')])).to.deep.equal([
      ['cot_time_out_of_range', 'body/event/@time'],
      ['cot_time_out_of_range', 'body/event/@start'],
      ['cot_time_out_of_range', 'body/event/@stale'],
    ]);
    expect(issues[0]!.msg).to.match(/'time' is \d+ s ahead of the service's clock: at most 60 s \(cot\.maxFutureSkewS\) is accepted/);
    expect(issues[0]!.input).to.equal('9999-12-31T23:59:59Z');
    expect(issues[0]!.ctx).to.include({ max_future_skew_s: 60 });
    expect(issues[2]!.ctx).to.include({ max_stale_ahead_s: 366 * 86_400 });
    expect((await app().http.get('/api/svc/v1/cot/export/pin-1')).status).to.equal(404);

    const now = Date.now();
    const first = await post(event('pin-1', now - 2000));
    expect(first.status).to.equal(200);
    expect(first.body).to.include({ stored: true, store_result: 'new' });
    const later = await post(event('pin-1', now - 1000));
    expect(later.body).to.include({ stored: true, store_result: 'replaced_older' });
    // the pinning attempt again, now that the track exists: still refused, the track unchanged
    expect((await post(event('pin-1', Date.now(), { time: '9999-12-31T23:59:59Z' }))).status).to.equal(422);
    expect((await post(event('pin-1', Date.now()))).body).to.include({ stored: true, store_result: 'replaced_older' });
  });

  it('within the skew is accepted; beyond it, by time, start or stale, is refused; dates JavaScript cannot hold too', async () => {
    const now = Date.now();
    expect((await post(event('skew-ok', now + 30_000))).status).to.equal(200);
    const ahead = await post(event('skew-time', now + 120_000));
    expect(ahead.status).to.equal(422);
    expect((ahead.body.detail as Issue[]).map((i) => i.loc.at(-1))).to.deep.equal(['@time', '@start']);
    const start = await post(event('skew-start', now, { start: iso(now + 3_600_000) }));
    expect((start.body.detail as Issue[]).map((i) => [i.type, i.loc.at(-1)])).to.deep.equal([['cot_time_out_of_range', '@start']]);
    // a stale a month ahead is a marker that lives a month: fine; two years is refused
    expect((await post(event('stale-month', now, { stale: iso(now + 30 * 86_400_000) }))).status).to.equal(200);
    const stale = await post(event('stale-years', now, { stale: iso(now + 2 * 366 * 86_400_000) }));
    expect((stale.body.detail as Issue[]).map((i) => [i.type, i.loc.at(-1)])).to.deep.equal([['cot_time_out_of_range', '@stale']]);
    // a valid xs:dateTime beyond JavaScript's dates (NaN) used to be replaced by anything; now refused
    const far = await post(event('far', now, { time: '300000-01-01T00:00:00Z' }));
    expect(far.status).to.equal(422);
    expect((far.body.detail as Issue[])[0]!.msg).to.equal("'time' is outside the range of dates the service can order");
    // the past stays accepted (a late report is still a report)
    expect((await post(event('past', Date.parse('2020-01-01T00:00:00Z')))).status).to.equal(200);
  });
});

describe('CoT uid pinning: the skew is configurable', () => {
  const app = withTestApp({ cot: { maxFutureSkewS: 0 } });

  it('cot.maxFutureSkewS = 0 refuses an event 5 s ahead', async () => {
    const res = await app().http.post(INGEST).set('content-type', 'application/xml').send(event('zero-skew', Date.now() + 5000));
    expect(res.status).to.equal(422);
    expect(res.body.detail[0].msg).to.match(/at most 0 s \(cot\.maxFutureSkewS\)/);
  });
});

describe('CoT uid ownership with write tokens', () => {
  const app = withTestApp({ guard: { writeTokens: 'alpha-token,beta-token', writeRatePerS: 0 } });
  const post = (xml: string, token: string) => app().http.post(INGEST).set('content-type', 'application/xml').set('authorization', `Bearer ${token}`).send(xml);

  it('a uid stored with one token is replaced only with that token', async () => {
    const now = Date.now();
    expect((await post(event('owned-1', now - 3000), 'alpha-token')).body).to.include({ stored: true, store_result: 'new' });
    const other = await post(event('owned-1', now - 1000), 'beta-token');
    expect(other.status).to.equal(422);
    expect(other.body.detail).to.deep.equal([
      { type: 'cot_uid_owned', loc: ['body', 'event', '@uid'], msg: "uid 'owned-1' was stored with another write token: only that token may replace it", input: 'owned-1' },
    ]);
    // an older event from the other token is refused the same way, not acknowledged as "not newer"
    expect((await post(event('owned-1', now - 60_000), 'beta-token')).status).to.equal(422);
    expect((await post(event('owned-1', now - 2000), 'alpha-token')).body).to.include({ stored: true, store_result: 'replaced_older' });
    const exported = await app().http.get('/api/svc/v1/cot/export/owned-1');
    expect(exported.text).to.include(`time="${iso(now - 2000)}"`);
    // beta's own uids are its own
    expect((await post(event('owned-2', now), 'beta-token')).body).to.include({ stored: true, store_result: 'new' });
  });
});

describe('CoT uid ownership, the rule itself (CotService)', () => {
  const cfg = testConfig().cot;
  const refusal = async (f: () => Promise<unknown>): Promise<string> => {
    try {
      await f();
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      return ((err as AppError).detail as Issue[])[0]!.type;
    }
    return 'accepted';
  };

  it('anonymous tracks are anyone\'s until a token replaces one; then only that token', async () => {
    const cot = new CotService(new TrackRegistry(), cfg);
    const t0 = Date.now() - 10_000;
    expect(await cot.ingest(event('shared', t0), null)).to.include({ store_result: 'new' });
    // no token, no ownership: another anonymous producer replaces it (writes without tokens configured)
    expect(await cot.ingest(event('shared', t0 + 1000), null)).to.include({ store_result: 'replaced_older' });
    // a token takes over an anonymous track
    expect(await cot.ingest(event('shared', t0 + 2000), 'token:a')).to.include({ store_result: 'replaced_older' });
    expect(await refusal(() => cot.ingest(event('shared', t0 + 3000), null))).to.equal('cot_uid_owned');
    expect(await refusal(() => cot.ingest(event('shared', t0 + 3000), 'token:b'))).to.equal('cot_uid_owned');
    expect(await cot.ingest(event('shared', t0 + 3000), 'token:a')).to.include({ store_result: 'replaced_older' });
    // an event that is not newer leaves the owner as it was
    expect(await cot.ingest(event('shared', t0), 'token:a')).to.include({ store_result: 'not_newer_than_stored' });
    expect(cot.store.get('shared')!.owner).to.equal('token:a');
  });
});
