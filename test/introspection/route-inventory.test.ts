/**
 * Every route states its reach where it is declared (`uses`, `mutates`, `egress`, `cost` on its
 * RouteDef), and the views that describe the service read those declarations: the security
 * inventory's classes, the wiring board's registrations and call counts, the CoT route list.
 */
import { expect } from 'chai';
import { API } from '../../src/isomorphic/api.js';
import { NODES, type ComponentId } from '../../src/introspection/components.js';
import { classify, routeKey, unclassifiedPosts } from '../../src/introspection/route-inventory.js';
import { registrations, routesUsing } from '../../src/introspection/component-status.js';
import { observe } from '../../src/introspection/observed.js';
import type { RouteDef } from '../../src/http/route.js';
import { withTestApp } from '../helpers/app.js';

const IDS = new Set<string>(NODES.map((n) => n.id));

describe('src/introspection route inventory', function () {
  const app = withTestApp();

  it('every mounted route declares components of the table; what it mutates it also uses; every POST reaches something', () => {
    const routes = app().routes;
    expect(routes.length).to.be.above(120);
    for (const r of routes) {
      const key = routeKey(r);
      expect(r.uses, key).to.be.an('array');
      for (const id of [...r.uses, ...(r.mutates ?? [])]) expect(IDS.has(id), `${key} names ${id}`).to.equal(true);
      for (const id of r.mutates ?? []) expect(r.uses, `${key} mutates ${id}`).to.include(id);
      if (r.egress) expect(r.uses, `${key} is egress`).to.include('adsb-upstreams');
      if (r.kernel) expect(classify(r).cost, key).to.equal('kernel');
    }
    expect(unclassifiedPosts(routes)).to.deep.equal([]);
    // the finding exists: a POST that declares nothing is listed
    const verdict = routes.find((r) => r.method === 'POST' && r.path === `${API}/verdict`)!;
    expect(unclassifiedPosts([{ ...verdict, uses: [] }])).to.deep.equal([`POST ${API}/verdict`]);
  });

  it('the API prefix is applied once, at mount: API routes start with it exactly once, root routes never carry it twice', () => {
    for (const r of app().routes) {
      expect(r.path.startsWith(`${API}${API}`), r.path).to.equal(false);
      if (!r.root) expect(r.path.startsWith(`${API}/`), r.path).to.equal(true);
    }
    const roots = app().routes.filter((r) => r.root).map(routeKey);
    expect(roots).to.include.members(['GET /metrics', 'POST /khipu/verify', 'GET /api/svc/khipu/dag', 'GET /mesh/state', 'GET /elite/globe', 'GET /jackin/{jk_path}']);
    expect(app().routes.filter((r) => r.kernel).every((r) => !r.root && r.path === `${API}/${r.kernel}`)).to.equal(true);
  });

  it('classification is the declaration: validator implied by schemas, the kernel cost class by `kernel`', () => {
    const doctrine = app().routes.find((r) => r.path === `${API}/doctrine`)!;
    const made: RouteDef = { ...doctrine, path: `${API}/new-thing`, uses: ['cot'], mutates: ['cot'], egress: undefined, cost: undefined };
    expect(classify(made)).to.deep.equal({ uses: ['cot'], writes: ['cot'], egress: false, cost: 'cheap' });
    expect(classify({ ...made, query: doctrine.query ?? app().routes.find((r) => r.query)!.query })).to.deep.include({ uses: ['validator', 'cot'] });
    expect(classify({ ...made, kernel: 'ssm/scan' }).cost).to.equal('kernel');
    const adsb = app().routes.find((r) => r.path === `${API}/adsb`)!;
    expect(classify(adsb)).to.deep.equal({ uses: ['validator', 'adsb-cache', 'adsb-upstreams'], writes: [], egress: true, cost: 'cheap' });
    const verdict = app().routes.find((r) => r.method === 'POST' && r.path === `${API}/verdict`)!;
    expect(classify(verdict).writes).to.deep.equal(['ledger', 'scene-buffer']);
  });

  it('a component is registered by the routes that declare it: without them it is not', () => {
    const t = app();
    const regs = (table: readonly RouteDef[]) => registrations(observe({ ...t.services, routeTable: () => table }, t.provided));
    const byId = (table: readonly RouteDef[], id: ComponentId) => regs(table).find((r) => r.id === id)!;
    for (const id of ['verdict-engine', 'sse-hub', 'scene-buffer', 'cortex-bus', 'metrics-registry', 'fleet-dataset', 'signer'] as const) {
      const full = byId(t.routes, id);
      expect(full.registered, id).to.equal(true);
      expect(full.evidence, id).to.match(/\d+ mounted routes use it, e.g. (GET|POST) \//);
      const without = t.routes.filter((r) => !r.uses.includes(id));
      expect(byId(without, id).registered, `${id} without its routes`).to.equal(false);
    }
    // the engine counts only what declares it
    expect(routesUsing(t.routes, 'verdict-engine').map(routeKey).sort()).to.deep.equal(
      [`GET ${API}/stream/verdicts`, `POST ${API}/edge/3d`, `POST ${API}/verdict`].sort(),
    );
  });

  it('the CoT status document lists the CoT routes the app mounted', async () => {
    const body = (await app().http.get(`${API}/cot/status`)).body as { routes: string[] };
    expect(body.routes).to.deep.equal([`${API}/cot/export`, `${API}/cot/export/{track_id}`, `${API}/cot/ingest`, `${API}/cot/status`]);
    const mounted = new Set(app().routes.filter((r) => r.tag === 'cot').map((r) => r.path.replace(/:(\w+)/g, '{$1}')));
    expect(new Set(body.routes)).to.deep.equal(mounted);
  });
});
