import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';

describe('OpenAPI and /docs', () => {
  const app = withTestApp();

  it('/openapi.json is 3.1 and lists every route of the table with its joi bounds', async () => {
    const { body } = await app().http.get('/openapi.json');
    expect(body.openapi).to.equal('3.1.0');
    for (const r of app().routes) {
      const p = r.path.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}');
      expect(body.paths[p], p).to.have.property(r.method.toLowerCase());
    }
    const params = body.paths['/api/svc/v1/ssm/scan'].get.parameters;
    expect(params.find((p: { name: string }) => p.name === 'seq_len')).to.deep.equal({
      name: 'seq_len',
      in: 'query',
      description: 'sequence length (steps of the scan)',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 4096, default: 64 },
    });
    expect(body.paths['/api/svc/v1/ssm/scan'].get.responses['422'].content['application/json'].schema.$ref).to.equal('#/components/schemas/HTTPValidationError');
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
