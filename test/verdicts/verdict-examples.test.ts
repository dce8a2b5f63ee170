// The request examples of POST /verdict as /openapi.json serves them: one per decision, each valid
// by the documented schema and sent, as read from the document, to a fresh app that decides it.
import { expect } from 'chai';
import { buildTestApp, withTestApp } from '../helpers/app.js';
import { documentValidator } from '../helpers/json-schema.js';

interface Example {
  summary: string;
  value: Record<string, unknown>;
}

describe('POST /verdict examples in /openapi.json', () => {
  const docs = withTestApp();
  let media: { schema: object; examples: Record<string, Example> };

  before(async () => {
    const { body } = await docs().http.get('/openapi.json').expect(200);
    media = body.paths['/api/svc/v1/verdict'].post.requestBody.content['application/json'];
  });

  it('names one example per decision, each valid by the documented body schema', () => {
    expect(Object.keys(media.examples).sort()).to.deep.equal(['allow', 'deny', 'review']);
    const valid = documentValidator(media.schema);
    for (const [name, ex] of Object.entries(media.examples)) {
      expect(ex.summary, name).to.match(new RegExp(`^${name.toUpperCase()}: `));
      expect(valid(ex.value), `${name}: ${JSON.stringify(valid.errors)}`).to.equal(true);
    }
    const tracks = Object.values(media.examples).map((ex) => ex.value.track_id);
    expect(new Set(tracks).size, 'one track per example: the kinematic axes remember a track').to.equal(tracks.length);
  });

  for (const name of ['allow', 'review', 'deny']) {
    it(`the ${name} example, sent to a fresh app, is decided ${name.toUpperCase()}`, async () => {
      const t = await buildTestApp();
      try {
        const res = await t.http.post('/api/svc/v1/verdict').send(media.examples[name]!.value).expect(200);
        expect(res.body.decision).to.equal(name.toUpperCase());
        expect(res.body.track_id).to.equal(media.examples[name]!.value.track_id);
        if (name === 'review') expect(res.body.lambda).to.be.within(0.7, 0.9);
        if (name === 'deny') expect(res.body.geofence.inside).to.equal(true);
      } finally {
        await t.close();
      }
    });
  }
});
