/**
 * Methods, the same way on every path of the real route table (RFC 9110 §15.5.6, §9.3.7): a method
 * a path does not serve is 405 JSON with an Allow naming what it does serve (never 501, never text,
 * whatever the method), OPTIONS is 204 with that Allow, and an unknown path is 404 JSON for every
 * method.
 */
import { expect } from 'chai';
import { request } from 'node:http';
import { allowHeader } from '../../src/http/route.js';
import { withTestApp } from '../helpers/app.js';

interface Raw {
  status: number;
  allow: string | undefined;
  type: string | undefined;
  body: string;
}

function raw(base: string, method: string, path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, allow: res.headers.allow, type: res.headers['content-type'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('src/http methods on every route', function () {
  const app = withTestApp();

  /** Every distinct path of the table with a sample value in each parameter, and the methods it serves. */
  function paths(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const r of app().routes) {
      const concrete = r.path.replace(/:[A-Za-z_]+/g, 'x');
      out.set(concrete, [...(out.get(concrete) ?? []), r.method]);
    }
    return out;
  }

  it('a method the path does not serve is 405 JSON with the path\'s Allow; OPTIONS is 204 with the same Allow', async () => {
    const all = paths();
    expect(all.size).to.be.above(100);
    for (const [path, methods] of all) {
      const allow = allowHeader(methods);
      for (const method of ['TRACE', 'PROPFIND', 'DELETE', 'PUT', 'PATCH', ...(methods.includes('POST') ? [] : ['POST']), ...(methods.includes('GET') ? [] : ['GET'])]) {
        const res = await raw(app().baseUrl, method, path);
        expect(res.status, `${method} ${path}`).to.equal(405);
        expect(res.allow, `${method} ${path}`).to.equal(allow);
        expect(res.type, `${method} ${path}`).to.match(/^application\/json/);
        expect(res.body, `${method} ${path}`).to.equal('{"detail":"Method Not Allowed"}');
      }
      const options = await raw(app().baseUrl, 'OPTIONS', path);
      expect(options.status, `OPTIONS ${path}`).to.equal(204);
      expect(options.allow, `OPTIONS ${path}`).to.equal(allow);
      expect(options.body).to.equal('');
    }
  });

  it('an unknown path is 404 JSON for every method, including under a parameterised prefix', async () => {
    for (const path of ['/nope', '/api/svc/v1/nope', '/api/svc/v1/cot/export/x/y']) {
      for (const method of ['GET', 'HEAD', 'POST', 'OPTIONS', 'TRACE', 'PROPFIND', 'DELETE']) {
        const res = await raw(app().baseUrl, method, path);
        expect(res.status, `${method} ${path}`).to.equal(404);
        expect(res.allow, `${method} ${path}`).to.equal(undefined);
        if (method !== 'HEAD') expect(res.body, `${method} ${path}`).to.equal('{"detail":"Not Found"}');
      }
    }
  });

  it('Allow lists GET with HEAD and always OPTIONS, in a fixed order', () => {
    expect(allowHeader(['POST'])).to.equal('POST, OPTIONS');
    expect(allowHeader(['GET'])).to.equal('GET, HEAD, OPTIONS');
    expect(allowHeader(['POST', 'GET'])).to.equal('GET, HEAD, POST, OPTIONS');
  });
});
