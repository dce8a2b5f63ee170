import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('energy views carry a basis on every number', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('the live evidence claim energy-figures-labelled verifies (it walks every energy view)', async () => {
    const { body } = await t.http.get('/api/svc/v1/evidence/research/energy-figures-labelled/live');
    expect(body.observations.unlabelled).to.deep.equal([]);
    expect(body.status).to.equal('verified');
    expect(body.observations.views).to.equal(8);
  });
});
