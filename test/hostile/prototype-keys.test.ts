import { expect } from 'chai';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { atMountPath } from '../../src/http/route.js';

/** Names an object literal answers from its prototype: a lookup by a request's key must not find them. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

describe('hostile: a path parameter that names a prototype member is an ordinary miss', function () {
  this.timeout(120_000);
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  it('GET /docs/assets/__proto__ is 404 JSON, not 500', async () => {
    const res = await t.http.get('/docs/assets/__proto__');
    expect(res.status).to.equal(404);
    expect(res.body).to.deep.equal({ detail: "asset '__proto__' not found" });
  });

  it('every parameterised GET route answers such names below 500', async () => {
    const routes = t.routes.map(atMountPath).filter((r) => r.method === 'GET' && r.path.includes(':') && r.cost !== 'stream');
    expect(routes.length).to.be.above(3);
    const failures: string[] = [];
    for (const r of routes) {
      for (const name of PROTOTYPE_NAMES) {
        const path = r.path.replace(/:[A-Za-z_]+(\([^)]*\))?/g, encodeURIComponent(name));
        const res = await t.http.get(path);
        if (res.status >= 500) failures.push(`${path}: ${res.status}`);
      }
    }
    expect(failures).to.deep.equal([]);
  });
});
