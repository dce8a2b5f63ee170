/**
 * One parameter dialect on every route (README "Parameters are strict"): query and path numbers are
 * the strict `qint` / `qnum` types, never Joi's lenient number (which reads `1.0`, ` 5` and `1e3`
 * as integers). A test walks every route's schemas, and two routes that used the lenient type are
 * asked directly.
 */
import { expect } from 'chai';
import type Joi from 'joi';
import { described, walkDescribed } from '../../src/http/schema-walk.js';
import { withTestApp } from '../helpers/app.js';

/** Paths inside a route part whose type is Joi's lenient number. */
function lenientNumbers(schema: Joi.ObjectSchema | undefined, at: string): string[] {
  const found: string[] = [];
  walkDescribed(described(schema), (d, path) => {
    if (d.type === 'number') found.push(`${at} ${path.join('.')}`);
  });
  return found;
}

describe('src/http one parameter dialect', function () {
  const app = withTestApp();

  it('no query or path parameter of any route uses the lenient number type', () => {
    const found = app().routes.flatMap((r) =>
      (['query', 'params'] as const).flatMap((part) => lenientNumbers(r[part], `${r.method} ${r.path} ${part}`)),
    );
    expect(found).to.deep.equal([]);
  });

  for (const [url, key] of [
    ['/api/svc/v1/receipt/export?index=-1.0', 'index'],
    ['/api/svc/v1/receipt/export?index=%205', 'index'],
    [`/api/svc/khipu/dag?request=${encodeURIComponent('{"node":"1.0"}')}`, 'request.node'],
    ['/api/svc/v1/ssm/scan?seed=7.0', 'seed'],
  ] as const) {
    it(`${url} is 422 (an integer is a plain decimal)`, async () => {
      const res = await app().http.get(url);
      expect(res.status).to.equal(422);
      expect(res.body.detail.map((d: { loc: (string | number)[] }) => d.loc.join('.'))).to.include(`query.${key}`);
    });
  }

  it('plain decimals still work on those routes', async () => {
    const frame = { track_id: 't1', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };
    expect((await app().http.post('/api/svc/v1/verdict').send(frame)).status).to.equal(200);
    expect((await app().http.get('/api/svc/v1/receipt/export?index=-1')).status).to.equal(200);
    expect((await app().http.get('/api/svc/v1/receipt/export?index=0')).status).to.equal(200);
    expect((await app().http.get(`/api/svc/khipu/dag?request=${encodeURIComponent('{"node":"0"}')}`)).status).to.equal(200);
  });
});
