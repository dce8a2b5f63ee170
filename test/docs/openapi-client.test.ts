/**
 * A client generated from the served /openapi.json: openapi-typescript writes the document's types,
 * and the committed client of test/fixtures/openapi-client/ (a verdict, a kernel's named result
 * fields, the CoT export) must type-check against them with the TypeScript compiler, then run
 * against the app. With a kernel's result and checks documented as bare objects it must not compile.
 */
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { withTestApp } from '../helpers/app.js';
import { summarise, type Frame, type Transport } from '../fixtures/openapi-client/client.js';

type Doc = Record<string, any>;

const CLIENT = fileURLToPath(new URL('../fixtures/openapi-client/client.ts', import.meta.url));
const SCAN = '/api/svc/v1/ssm/scan';

/** The compiler's complaints about the fixture client against the types generated from `doc`. */
async function typeCheckClient(doc: Doc): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
  try {
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(structuredClone(doc) as never)));
    copyFileSync(CLIENT, join(dir, 'client.ts'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
    const program = ts.createProgram({
      rootNames: [join(dir, 'client.ts')],
      options: {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2023,
        lib: ['lib.es2023.d.ts'],
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        types: [],
        // a field read by name from an open record is an error, not an unchecked lookup
        noPropertyAccessFromIndexSignature: true,
        noUncheckedIndexedAccess: true,
      },
    });
    return ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.slice(dir.length + 1)}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The ALLOW frame of the verdict docs, with a track id of its own. */
const FRAME: Frame = { track_id: 'C0FFEE', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 0, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 100000 };

describe('a client generated from /openapi.json', () => {
  const app = withTestApp();
  let doc: Doc;
  before(async () => {
    doc = (await app().http.get('/openapi.json')).body;
  });

  it('the committed client type-checks against the generated types, and runs against the app', async function () {
    // generating and checking ~3 MB of types: seconds on a shared machine
    this.timeout(120_000);
    expect(await typeCheckClient(doc)).to.deep.equal([]);
    const transport: Transport = {
      async get(path, query) {
        const res = await app().http.get(path).query(query).buffer(true).parse((r, done) => {
          let text = '';
          r.setEncoding('utf8');
          r.on('data', (c: string) => (text += c));
          r.on('end', () => done(null, text));
        });
        return { status: res.status, text: res.body as string };
      },
      async post(path, body) {
        const res = await app().http.post(path).send(body as object);
        return { status: res.status, text: res.text };
      },
    };
    const s = await summarise(transport, FRAME);
    expect(s.decision).to.equal('ALLOW');
    expect(s.lambda).to.be.within(0.9, 1);
    expect(s).to.include({ seqLen: 128, samples: 128, channels: 4, parallelMatches: true });
    expect(s.digest).to.match(/^[0-9a-f]{64}$/);
    expect(s.combineOps).to.be.above(0);
    expect(s.events).to.be.above(0);
  });

  it('with ssm/scan\'s result and checks documented as bare objects, the client does not compile', async function () {
    this.timeout(120_000);
    const bare = structuredClone(doc);
    const props = bare.paths[SCAN].get.responses['200'].content['application/json'].schema.properties;
    props.result = { type: 'object' };
    props.checks = { type: 'object' };
    const problems = await typeCheckClient(bare);
    expect(problems.join('\n')).to.match(/client\.ts: .*y_sample/);
    expect(problems.join('\n')).to.match(/client\.ts: .*parallel_matches_sequential/);
  });
});
