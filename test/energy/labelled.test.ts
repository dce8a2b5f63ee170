import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';

describe('energy views carry a basis on every number', () => {
  const app = withTestApp();

  it('the live evidence claim energy-figures-labelled verifies (it walks every energy view)', async () => {
    const { body } = await app().http.get('/api/svc/v1/evidence/research/energy-figures-labelled/live');
    expect(body.observations.unlabelled).to.deep.equal([]);
    expect(body.status).to.equal('verified');
    expect(body.observations.views).to.equal(8);
  });
});
