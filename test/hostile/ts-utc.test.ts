/**
 * `ts_utc`, the time of a telemetry fix, must be an RFC 3339 date-time with a time zone on a real
 * calendar day. joi's isoDate let 2026-02-30 through (JavaScript's Date rolls it over to March 2,
 * and the freshness axis then scored a date that does not exist); date-only and zone-less forms
 * passed too. Each is a 422 `value_error` naming what is wrong, on /verdict and /edge/3d alike.
 * What RFC 3339 allows is accepted: lower-case t and z, and a leap second as 23:59:60 UTC.
 */
import { expect } from 'chai';
import { rfc3339Ms, rfc3339Problem } from '../../src/verdicts/telemetry.js';
import { scoreAxes } from '../../src/verdicts/axes.js';
import { withTestApp } from '../helpers/app.js';

const frame = (ts_utc: string) => ({ track_id: 'ts-1', source: 'ADS-B', lat: 36.5, lon: -115.1, ts_utc });

describe('ts_utc: a real date, RFC 3339', () => {
  const app = withTestApp();
  const size = async () => (await app().http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes as number;

  it('impossible calendar days and times are 422 with a message naming the problem; nothing is appended', async () => {
    const before = await size();
    const cases: [string, string][] = [
      ['2026-02-30T00:00:00Z', 'ts_utc is not a real date: February 2026 has no day 30'],
      ['2026-02-29T12:00:00Z', 'ts_utc is not a real date: February 2026 has no day 29'],
      ['2100-02-29T00:00:00Z', 'ts_utc is not a real date: February 2100 has no day 29'],
      ['2026-04-31T00:00:00Z', 'ts_utc is not a real date: April 2026 has no day 31'],
      ['2026-00-10T00:00:00Z', 'ts_utc is not a real date: there is no month 00'],
      ['2026-13-01T00:00:00Z', 'ts_utc is not a real date: there is no month 13'],
      ['2026-01-00T00:00:00Z', 'ts_utc is not a real date: January 2026 has no day 00'],
      ['2026-01-01T24:00:00Z', 'ts_utc is not a real time of day: 24:00:00'],
      ['2026-01-01T12:60:00Z', 'ts_utc is not a real time of day: 12:60:00'],
      ['2026-12-31T23:59:61Z', 'ts_utc is not a real time of day: 23:59:61'],
      ['2026-12-31T23:58:60Z', 'ts_utc is not a real time of day: 23:58:60 (a leap second is only the last second of a UTC day, 23:59:60 UTC)'],
      ['2026-12-31T23:59:60+01:00', 'ts_utc is not a real time of day: 23:59:60 (a leap second is only the last second of a UTC day, 23:59:60 UTC)'],
      ['2026-01-01T00:00:00+24:00', 'ts_utc has a time zone offset out of range (at most ±23:59)'],
    ];
    for (const [ts, msg] of cases) {
      const res = await app().http.post('/api/svc/v1/verdict').send(frame(ts));
      expect(res.status, ts).to.equal(422);
      expect(res.body.detail, ts).to.deep.equal([{ type: 'value_error', loc: ['body', 'ts_utc'], msg: `Value error, ${msg}`, input: ts, ctx: { error: {} } }]);
    }
    expect(await size()).to.equal(before);
  });

  it('forms that are ISO 8601 but not RFC 3339 date-times (no time, no zone, a space, offsets without a colon, week dates) are 422', async () => {
    const before = await size();
    for (const ts of ['2026-01-01', '2026-01-01T00:00:00', '2026-01-01T00:00Z', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00+0530', '2026-01-01T00:00:00+05', '2026-W01-1', '20260101T000000Z', '+002026-01-01T00:00:00Z', 'Thu, 01 Jan 2026 00:00:00 GMT']) {
      const res = await app().http.post('/api/svc/v1/verdict').send(frame(ts));
      expect(res.status, ts).to.equal(422);
      expect(res.body.detail[0].msg, ts).to.equal('Value error, ts_utc must be an RFC 3339 date-time with a time zone, e.g. 2026-01-01T00:00:00Z');
    }
    expect(await size()).to.equal(before);
  });

  it('real RFC 3339 date-times are accepted: leap days, fractions, offsets, lower-case t and z, leap seconds at 23:59:60 UTC', async () => {
    const accepted = [
      '2024-02-29T12:00:00Z',
      '2000-02-29T00:00:00Z',
      '2026-01-01T00:00:00.123456Z',
      '2026-06-30T23:59:59+05:30',
      '2026-01-01T00:00:00-00:00',
      new Date().toISOString(),
      '2026-01-01t00:00:00z',
      '2026-01-01t00:00:00+01:00',
      '2016-12-31T23:59:60Z',
      '2016-12-31T23:59:60.5z',
      '2016-12-31T15:59:60-08:00',
      '2017-01-01T05:29:60+05:30',
    ];
    for (const ts of accepted) {
      const res = await app().http.post('/api/svc/v1/verdict').send(frame(ts));
      expect(res.status, ts).to.equal(200);
    }
  });

  it('the instant of a ts_utc: case does not matter; a leap second is the first second of the next day, never NaN', () => {
    expect(rfc3339Ms('2026-01-01t00:00:00.250z')).to.equal(Date.UTC(2026, 0, 1, 0, 0, 0, 250));
    expect(rfc3339Ms('2026-01-01T01:00:00+01:00')).to.equal(Date.UTC(2026, 0, 1));
    expect(rfc3339Ms('2016-12-31T23:59:60Z')).to.equal(Date.UTC(2017, 0, 1));
    expect(rfc3339Ms('2016-12-31T23:59:60.5Z')).to.equal(Date.UTC(2017, 0, 1, 0, 0, 0, 500));
    expect(rfc3339Ms('2016-12-31T15:59:60-08:00')).to.equal(Date.UTC(2017, 0, 1));
    // the freshness axis: a fix at the leap second, scored a second later, is one second old
    const geo = { inside: null, zone: null, distanceM: null };
    const fresh = scoreAxes({ track_id: 't', lat: 0, lon: 0, ts_utc: '2016-12-31T23:59:60Z' }, geo, undefined, Date.UTC(2017, 0, 1, 0, 0, 1)).freshness!;
    expect(fresh).to.be.closeTo(Math.exp(-1 / 30), 1e-12);
  });

  it('an edge batch with one impossible date is refused whole, the frame located', async () => {
    const before = await size();
    const res = await app().http.post('/api/svc/v1/edge/3d').send({ frames: [frame('2026-01-01T00:00:00Z'), frame('2026-02-30T00:00:00Z')] });
    expect(res.status).to.equal(422);
    expect(res.body.detail[0]).to.deep.include({ type: 'value_error', loc: ['body', 'frames', 1, 'ts_utc'] });
    expect(await size()).to.equal(before);
  });

  it('rfc3339Problem agrees with an independent calendar (Date.UTC round trip) on every day of 1999-2101', () => {
    for (let y = 1999; y <= 2101; y++) {
      for (let m = 1; m <= 12; m++) {
        for (let d = 28; d <= 32; d++) {
          const ts = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}T00:00:00Z`;
          const t = new Date(Date.UTC(y, m - 1, d));
          const real = t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
          expect(rfc3339Problem(ts) === null, ts).to.equal(real);
        }
      }
    }
  });
});
