// Where the joi schemas are not plain JSON Schema (a `when`, an empty string joi refuses, a rule a
// kernel checks after validation), /openapi.json states the same rule: each value here is rejected
// by the served document exactly when the server answers it 422.
import { expect } from 'chai';
import fc from 'fast-check';
import { withTestApp } from '../helpers/app.js';
import { documentValidator } from '../helpers/json-schema.js';

const SIG = { sig: 'MEUCIQ==', keyid: 'ab'.repeat(32) };
const ENVELOPE = { payloadType: 'application/vnd.in-toto+json', payload: 'eyJhIjoxfQ==', signatures: [SIG] };

describe('/openapi.json agrees with the server', () => {
  const app = withTestApp();
  let doc: any;

  before(async () => {
    doc = (await app().http.get('/openapi.json').expect(200)).body;
  });

  it('POST /khipu/verify: a body the document rejects ({}, an empty payload, half an envelope) is 422, the rest 200', async () => {
    const valid = documentValidator(doc.paths['/khipu/verify'].post.requestBody.content['application/json'].schema);
    const bodies: [string, unknown][] = [
      ['empty object', {}],
      ['dsse form', { dsse: ENVELOPE }],
      ['flat form', ENVELOPE],
      ['dsse form, empty payload', { dsse: { ...ENVELOPE, payload: '' } }],
      ['flat form, empty payload', { ...ENVELOPE, payload: '' }],
      ['flat form without signatures', { payloadType: ENVELOPE.payloadType, payload: ENVELOPE.payload }],
      ['flat form, payload not a string', { ...ENVELOPE, payload: 7 }],
      ['flat form, no signature', { ...ENVELOPE, signatures: [] }],
      ['dsse form beside a broken flat form (ignored)', { dsse: ENVELOPE, payload: 7 }],
      ['dsse without its payload', { dsse: { payloadType: ENVELOPE.payloadType, signatures: [SIG] } }],
      ['unknown keys only', { signed: true }],
    ];
    const rejected: string[] = [];
    for (const [name, body] of bodies) {
      const res = await app().http.post('/khipu/verify').send(body as object);
      expect(res.status, name).to.be.oneOf([200, 422]);
      expect(valid(body), `${name}: the document against the server's ${res.status}`).to.equal(res.status === 200);
      if (res.status === 422) rejected.push(name);
    }
    expect(rejected).to.include.members(['empty object', 'dsse form, empty payload', 'flat form, empty payload']);
  });

  it('the DSSE payload of a verdict receipt is documented non-empty, as the server sends it', async () => {
    const res = await app().http.post('/api/svc/v1/verdict').send({ track_id: 'agree1', lat: 1, lon: 2 }).expect(200);
    const schema = doc.paths['/api/svc/v1/verdict'].post.responses['200'].content['application/json'].schema;
    expect(schema.properties.receipt.properties.dsse.properties.payload.minLength).to.equal(1);
    const valid = documentValidator(schema);
    expect(res.body.receipt.dsse.payload).to.not.equal('');
    expect(valid(res.body), JSON.stringify(valid.errors)).to.equal(true);
    expect(valid({ ...res.body, receipt: { ...res.body.receipt, dsse: { ...res.body.receipt.dsse, payload: '' } } })).to.equal(false);
  });

  it('GET /gitthoughts/tree: a `numbers` value the document\'s pattern rejects is 422, the rest 200', async () => {
    const param = doc.paths['/api/svc/v1/gitthoughts/tree'].get.parameters.find((p: { name: string }) => p.name === 'numbers');
    expect(param.schema).to.have.property('pattern');
    const valid = documentValidator(param.schema);
    const fixed = ['', ' ', '4,7,8,8', ' 4 , 7,8 ,8 ', '01,13,9,1', '1,2,3', '1,2,3,4,5', '0,2,3,4', '1,2,3,14', '001,2,3,4', 'a,b,c,d', '4;7;8;8', '4,7,8,8,', '\t1,1,1,1\n', '+1,1,1,1', '1.0,1,1,1'];
    const token = fc.oneof(fc.integer({ min: 0, max: 120 }).map(String), fc.constantFrom('', ' ', '0', '01', '13', 'x', '-1'));
    const sampled = fc.sample(
      fc.tuple(fc.array(token, { minLength: 0, maxLength: 5 }), fc.constantFrom(',', ' , ', ';')).map(([ts, sep]) => ts.join(sep)),
      { numRuns: 24, seed: 7 },
    );
    const seen = { accepted: 0, rejected: 0 };
    for (const numbers of [...fixed, ...sampled]) {
      const res = await app().http.get('/api/svc/v1/gitthoughts/tree').query({ numbers, beam: 1 });
      expect(res.status, JSON.stringify(numbers)).to.be.oneOf([200, 422]);
      expect(valid(numbers), `${JSON.stringify(numbers)}: the document against the server's ${res.status}`).to.equal(res.status === 200);
      seen[res.status === 200 ? 'accepted' : 'rejected'] += 1;
    }
    expect(seen.accepted).to.be.greaterThan(4);
    expect(seen.rejected).to.be.greaterThan(8);
  });

  it('POST /verdict: a ts_utc the document rejects (format date-time and the RFC 3339 pattern) is 422, the rest 200', async () => {
    const schema = doc.paths['/api/svc/v1/verdict'].post.requestBody.content['application/json'].schema;
    const valid = documentValidator(schema.properties.ts_utc);
    const values = [
      '2026-01-01T00:00:00Z', '2026-01-01t00:00:00z', '2026-01-01T00:00:00.5+05:30', '2026-01-01T00:00:00-00:00', '2024-02-29T00:00:00Z',
      '2016-12-31T23:59:60Z', '2016-12-31T15:59:60-08:00', '2017-01-01T00:59:60+01:00', '2016-12-31T23:58:60Z', '2016-12-31T23:59:60+01:00', '2016-12-31T23:59:61Z',
      '2026-02-30T00:00:00Z', '2026-02-29T00:00:00Z', '2026-13-01T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01T00:60:00Z', '2026-01-01T00:00:00+24:00',
      '2026-01-01', '2026-01-01T00:00:00', '2026-01-01 00:00:00Z', '2026-01-01T00:00:00+0530', '2026-01-01T00:00:00+05', '2026-01-01T00:00Z', '20260101T000000Z',
    ];
    const seen = { accepted: 0, rejected: 0 };
    for (const ts_utc of values) {
      const res = await app().http.post('/api/svc/v1/verdict').send({ track_id: 'agree-1', lat: 1, lon: 1, ts_utc });
      expect(res.status, ts_utc).to.be.oneOf([200, 422]);
      expect(valid(ts_utc), `${ts_utc}: the document against the server's ${res.status}`).to.equal(res.status === 200);
      seen[res.status === 200 ? 'accepted' : 'rejected'] += 1;
    }
    expect(seen).to.deep.equal({ accepted: 8, rejected: 16 });
  });
});
