/**
 * Adding a kernel is one file plus one registration line (workers/README.md "Writing a kernel"):
 * the fixture kernel test/fixtures/kernels/dice-tally.ts, registered by one `withKernels` call in
 * test/fixtures/kernels/registry.ts, is picked up by every listing of an app built with it: the
 * route table and its validation, /openapi.json (parameter descriptions and rules from the
 * declaration; its result schema and example from the generators `npm run kernels:schemas` runs,
 * handed to the app as the committed files are for the service's kernels), the warm-up of every kernel thread, the posture baseline's route inventory and the
 * generated kernel table; nothing else was edited for it.
 */
import { expect } from 'chai';
import { API } from '../../src/isomorphic/api.js';
import { kernelTable } from '../../src/docs/kernel-table.js';
import { kernelRouteInventory, loadBaseline } from '../../src/security/posture.js';
import { REGISTRY } from '../../workers/registry.js';
import { runKernelTask } from '../../workers/run-kernel.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import diceTally from '../fixtures/kernels/dice-tally.js';
import { FIXTURE_KERNELS } from '../fixtures/kernels/registry.js';
import { FIXTURE_APP, fixtureKernelDocs } from '../helpers/fixture-kernels.js';
import { documentValidator } from '../helpers/json-schema.js';

const PATH = `${API}/fixture/dice-tally`;

describe('adding a kernel: one file and one registration line', function () {
  this.timeout(180_000);
  let t: TestApp;
  before(async () => {
    // warm-up on (one pass) so each kernel thread reports what it ran
    t = await buildTestApp({ pool: { warmup: true, warmupPasses: 1 } }, { kernels: { ...FIXTURE_APP, docs: fixtureKernelDocs() } });
    await t.services.pool.ready();
  });
  after(() => t?.close());

  it('the registration adds the kernel after the service’s, and leaves the service’s registry alone', () => {
    expect(FIXTURE_KERNELS.kernels).to.deep.equal([...REGISTRY.kernels, diceTally]);
    expect(REGISTRY.get(diceTally.id)).to.equal(undefined);
  });

  it('the route table has its route, which validates, applies its rule and runs it in the worker byte for byte', async () => {
    const route = t.routes.find((r) => r.path === PATH);
    expect(route).to.deep.include({ method: 'GET', kernel: 'fixture/dice-tally', tag: 'kernels', summary: diceTally.summary });
    const res = await t.http.get(`${PATH}?dice=12&sides=6&seed=3`);
    expect(res.status).to.equal(200);
    const body = JSON.parse(res.text);
    expect(body).to.include({ kernel: 'fixture/dice-tally', seed: 3 });
    expect(body.params).to.deep.equal({ seed: 3, dice: 12, sides: 6 });
    expect(body.result.counts.reduce((a: number, b: number) => a + b, 0)).to.equal(12);
    const inProcess = runKernelTask({ kind: 'kernel', id: diceTally.id, params: body.params, requestLabel: null }, FIXTURE_KERNELS);
    expect(inProcess.ok && inProcess.value).to.equal(res.text);
    // the same kernel in the service's own worker would be unknown: the fixture worker ran it
    expect(runKernelTask({ kind: 'kernel', id: diceTally.id, params: body.params })).to.deep.include({ ok: false });

    const rule = await t.http.get(`${PATH}?dice=3&sides=6`);
    expect(rule.status).to.equal(422);
    expect(rule.body.detail).to.deep.equal([{ type: 'value_error', loc: ['query', 'dice'], msg: 'Value error, dice must be at least sides', input: '3', ctx: { error: {} } }]);
    expect((await t.http.get(`${PATH}?sides=21`)).status).to.equal(422);
  });

  it('/openapi.json documents it from its declaration: summary, parameter descriptions with bounds, its rule', async () => {
    const doc = (await t.http.get('/openapi.json')).body;
    const op = doc.paths[PATH].get;
    expect(op.summary).to.equal(diceTally.summary);
    expect(op.description).to.match(/dice must be at least sides\./);
    const param = (name: string) => op.parameters.find((p: { name: string }) => p.name === name);
    expect(param('dice').description).to.match(/^dice rolled/);
    expect(param('dice').schema).to.include({ type: 'integer', minimum: 1, maximum: 1000, default: 60 });
    expect(param('sides').description).to.match(/^faces of each die/);
    expect(param('seed').description).to.match(/^PRNG seed/);
    expect(op.responses['200'].content['application/json'].schema.properties.kernel).to.deep.equal({ enum: ['fixture/dice-tally'] });
  });

  it('/openapi.json carries its result and checks schemas, read from its `run`, and its example: the defaults and the body served for them', async () => {
    const doc = (await t.http.get('/openapi.json')).body;
    const op = doc.paths[PATH].get;
    const media = op.responses['200'].content['application/json'];
    const { result, checks } = media.schema.properties;
    // the envelope's description stays beside the generated keywords
    expect(result).to.deep.include({
      type: 'object',
      properties: { counts: { type: 'array', items: { type: 'number' } }, chi2: { type: 'number' }, dof: { type: 'number' } },
      required: ['counts', 'chi2', 'dof'],
      additionalProperties: false,
    });
    expect(checks).to.deep.include({ type: 'object', properties: { counted_minus_rolled: { type: 'number' } }, required: ['counted_minus_rolled'], additionalProperties: false });
    const query = Object.fromEntries(op.parameters.map((p: { name: string; example: unknown }) => [p.name, p.example]));
    expect(query).to.deep.equal({ seed: 42, dice: 60, sides: 6 });
    const served = await t.http.get(PATH).query(query);
    expect(served.status).to.equal(200);
    expect(media.example).to.deep.equal(JSON.parse(served.text));
    const valid = documentValidator(media.schema);
    expect(valid(media.example), JSON.stringify(valid.errors)).to.equal(true);
    expect(valid({ ...media.example, result: { ...media.example.result, counts: 'six' } })).to.equal(false);
  });

  it('every kernel thread warmed it up with the others', () => {
    const warm = t.services.pool.warmup();
    expect(warm.threads).to.have.length(2);
    for (const w of warm.threads) expect(w, JSON.stringify(w)).to.deep.include({ kernels: REGISTRY.kernels.length + 1, passes: 1, failed: [] });
  });

  it('the posture baseline inventories it from the registry: no drift, and the committed baseline does not list it', async () => {
    const key = `GET ${PATH}`;
    expect(kernelRouteInventory(FIXTURE_KERNELS)).to.include(key);
    expect(kernelRouteInventory(REGISTRY)).to.not.include(key);
    expect(loadBaseline().baseline.route_inventory).to.not.include(key);
    const drift = (await t.http.get(`${API}/posture/drift`)).body;
    expect(drift.checks.find((c: { id: string }) => c.id === 'route-inventory')).to.deep.include({ status: 'pass', actual: [] });
  });

  it('the generated kernel table has its row, after the service’s kernels', () => {
    const rows = kernelTable(FIXTURE_KERNELS.kernels, new Map()).split('\n');
    expect(rows).to.have.length(2 + REGISTRY.kernels.length + 1);
    expect(rows.at(-1)).to.equal(
      `| \`/fixture/dice-tally\` | ${diceTally.summary} (doi:10.1080/14786440009463897) | \`dice\` int 1…1000 (60), \`sides\` int 2…20 (6) | — | — |`,
    );
  });
});
