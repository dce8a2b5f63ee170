/**
 * The `request` parameter is read by one function for every route that takes it: the same bad
 * value gets the same 422 body from a kernel route and from the khipu DAG.
 */
import { expect } from 'chai';
import Joi from 'joi';
import { AppError } from '../../src/http/errors.js';
import { parseRequestParam } from '../../src/http/request-param.js';
import { withTestApp } from '../helpers/app.js';

describe('src/http the request parameter', function () {
  const app = withTestApp();

  const schema = Joi.object({ n: Joi.number().integer().min(1).max(9).default(3) });

  it('a label keeps the defaults; JSON is validated under query.request', () => {
    expect(parseRequestParam('scan north sector', schema)).to.deep.equal({ value: { n: 3 }, label: 'scan north sector', raw: {} });
    expect(parseRequestParam(' {"n": 5}', schema)).to.deep.equal({ value: { n: 5 }, label: null, raw: { n: 5 } });
    const err = (() => {
      try {
        parseRequestParam('{"n": 10}', schema);
      } catch (e) {
        return e as AppError;
      }
      return null;
    })();
    expect(err).to.be.instanceOf(AppError);
    expect(err!.status).to.equal(422);
  });

  for (const bad of ['{"a":', '{} x', '{"zzz": 1}']) {
    it(`${JSON.stringify(bad)} gets the same 422 detail from a kernel route and from the DAG`, async () => {
      const q = `request=${encodeURIComponent(bad)}`;
      const [kernel, dag] = await Promise.all([app().http.get(`/api/svc/v1/fgbrain/evolve?${q}`), app().http.get(`/api/svc/khipu/dag?${q}`)]);
      expect(kernel.status).to.equal(422);
      expect(dag.status).to.equal(422);
      const shape = (d: { type: string; loc: unknown[] }[]) => d.map((x) => [x.type, x.loc.join('.')]);
      expect(shape(dag.body.detail)).to.deep.equal(shape(kernel.body.detail));
      expect(dag.body.detail[0].loc.slice(0, 2)).to.deep.equal(['query', 'request']);
    });
  }
});
