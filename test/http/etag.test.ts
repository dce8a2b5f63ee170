/**
 * One conditional-GET rule for every route with an ETag (RFC 9110 §13.1.2 weak comparison): the
 * fleet views and the UI assets answer the same If-None-Match the same way. Before, an unquoted tag
 * was 304 on one and 200 on the other.
 */
import { expect } from 'chai';
import { etagMatches } from '../../src/http/etag.js';
import { withTestApp } from '../helpers/app.js';

describe('src/http ETag and If-None-Match', function () {
  const app = withTestApp();

  it('weak comparison: W/ ignored on both sides, quotes kept, lists and * understood', () => {
    expect(etagMatches('"abc"', '"abc"')).to.equal(true);
    expect(etagMatches('W/"abc"', '"abc"')).to.equal(true);
    expect(etagMatches('"abc"', 'W/"abc"')).to.equal(true);
    expect(etagMatches('"x", W/"abc"', '"abc"')).to.equal(true);
    expect(etagMatches(' * ', '"abc"')).to.equal(true);
    expect(etagMatches('abc', '"abc"'), 'an unquoted value is not an entity-tag').to.equal(false);
    expect(etagMatches('"ab"', '"abc"')).to.equal(false);
    expect(etagMatches('"ABC"', '"abc"'), 'opaque tags compare case-sensitively').to.equal(false);
  });

  for (const path of ['/api/svc/v1/fleet/fleets', '/api/svc/v1/assets/manifest']) {
    it(`${path}: 304 for its tag (strong or weak), 200 for an unquoted or other tag`, async () => {
      const first = await app().http.get(path);
      expect(first.status).to.equal(200);
      const etag = first.headers.etag as string;
      expect(etag).to.match(/^"[^"]+"$/);
      const ask = async (inm: string) => (await app().http.get(path).set('If-None-Match', inm)).status;
      expect(await ask(etag)).to.equal(304);
      expect(await ask(`W/${etag}`)).to.equal(304);
      expect(await ask(`"nope", ${etag}`)).to.equal(304);
      expect(await ask('*')).to.equal(304);
      expect(await ask(etag.replace(/"/g, ''))).to.equal(200);
      expect(await ask('"nope"')).to.equal(200);
    });
  }
});
