import { expect } from 'chai';
import Joi from 'joi';
import { withTestApp } from '../helpers/app.js';
import { buildOpenApi, documentedRoutes } from '../../src/docs/openapi.js';

describe('OpenAPI and /docs', () => {
  const app = withTestApp();

  it('/openapi.json is 3.1 and lists every route of the table with its joi bounds', async () => {
    const { body } = await app().http.get('/openapi.json');
    expect(body.openapi).to.equal('3.1.0');
    for (const r of documentedRoutes(app().routes)) {
      const p = r.path.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}');
      expect(body.paths[p], p).to.have.property(r.method.toLowerCase());
    }
    const params = body.paths['/api/svc/v1/ssm/scan'].get.parameters;
    // the kernel's example value, when it has one, is a docs addition beside the bounds
    const { example: _example, ...seqLen } = params.find((p: { name: string }) => p.name === 'seq_len');
    expect(seqLen).to.deep.equal({
      name: 'seq_len',
      in: 'query',
      description: 'sequence length (steps of the scan)',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 4096, default: 64 },
    });
    expect(body.paths['/api/svc/v1/ssm/scan'].get.responses['422'].content['application/json'].schema.$ref).to.equal('#/components/schemas/HTTPValidationError');
  });

  it('request examples of a route are its body\'s examples under every media type, and its body schema accepts each', async () => {
    const { body } = await app().http.get('/openapi.json');
    const withExamples = app().routes.filter((r) => r.examples);
    expect(withExamples.map((r) => `${r.method} ${r.path}`)).to.include('POST /api/svc/v1/verdict');
    for (const r of withExamples) {
      const content = body.paths[r.path.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}')][r.method.toLowerCase()].requestBody.content;
      for (const [type, media] of Object.entries(content as Record<string, { examples?: unknown }>)) expect(media.examples, `${r.path} ${type}`).to.deep.equal(r.examples);
      for (const [name, ex] of Object.entries(r.examples!)) {
        if (r.body && r.body !== 'text') expect(r.body.validate(ex.value).error, `${r.path} example ${name}`).to.equal(undefined);
      }
    }
    const text = buildOpenApi([
      { method: 'POST', path: '/t', root: true, summary: 's', tag: 't', uses: [], body: 'text', bodyTypes: ['text/csv', 'text/plain'], examples: { one: { summary: 'a row', value: 'a,b' } }, response: Joi.string(), handler: () => '' },
    ]) as { paths: Record<string, { post: { requestBody: { content: Record<string, { examples: unknown }> } } }> };
    const media = text.paths['/t']!.post.requestBody.content;
    expect(Object.keys(media)).to.deep.equal(['text/csv', 'text/plain']);
    for (const m of Object.values(media)) expect(m.examples).to.deep.equal({ one: { summary: 'a row', value: 'a,b' } });
    const plain = buildOpenApi([{ method: 'POST', path: '/u', root: true, summary: 's', tag: 't', uses: [], body: Joi.object({}), response: Joi.string(), handler: () => '' }]) as typeof text;
    expect(plain.paths['/u']!.post.requestBody.content['application/json']).to.not.have.property('examples');
  });

  it('/docs renders from local assets only', async () => {
    const page = await app().http.get('/docs');
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.text).to.not.match(/https?:\/\//);
    for (const src of page.text.match(/(?:src|href)="([^"]+)"/g)!.map((m) => m.split('"')[1]!)) {
      const asset = await app().http.get(src);
      expect(asset.status, src).to.equal(200);
    }
  });
});
