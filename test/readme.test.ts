/**
 * README.md and the generated reference in docs/ say what the code does: the kernel table is the
 * registry's, the counts and route groups are the served /openapi.json's, the essential
 * configuration rows are the schemas', and the example verdict bodies get the decision they claim.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KERNELS } from '../workers/registry.js';
import { kernelPath } from '../workers/kernel-def.js';
import { KERNEL_TABLE_COMMAND, KERNEL_TABLE_FILE, kernelTable, tableIn, timesIn } from '../src/docs/kernel-table.js';
import { configRows, formatDefault } from '../src/docs/config-table.js';
import { ENV_KEYS, projectRoot } from '../src/config/load.js';
import { API } from '../src/isomorphic/api.js';
import { withTestApp } from './helpers/app.js';

const read = (file: string): string => readFileSync(join(projectRoot(), file), 'utf8');
const readme = read('README.md');

/** The rows of the first Markdown table after `heading`, as arrays of trimmed cells (header and rule dropped). */
function tableAfter(text: string, heading: string): string[][] {
  const from = text.indexOf(`\n${heading}\n`);
  expect(from, `README has "${heading}"`).to.be.above(-1);
  const lines = text.slice(from).split('\n');
  const start = lines.findIndex((l) => l.startsWith('|'));
  const rows: string[][] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split(' | ').map((c) => c.trim()));
  }
  return rows.slice(2);
}

/** The paths a cell names in code spans: `POST /x` and `/x` give `/x`; anything else is prose. */
function pathsIn(cell: string): string[] {
  const spans = [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
  return spans.flatMap((span) => /^(?:(?:GET|POST) )?(\/\S*)$/.exec(span)?.[1] ?? []);
}

/** A README path, `*` matching any run of characters, as a test of served paths. */
function matcher(path: string): (p: string) => boolean {
  const re = new RegExp(`^${path.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return (p) => re.test(p);
}

/** Bodies of example curls marked with the decision they get: `-d '{…}'   # ALLOW`. */
function examples(text: string): { body: Record<string, unknown>; decision: string }[] {
  return [...text.matchAll(/-d '(\{[^']*\})'\s+# (ALLOW|REVIEW|DENY)\b/g)].map((m) => ({ body: JSON.parse(m[1]!) as Record<string, unknown>, decision: m[2]! }));
}

describe('README and the generated reference stay in step with the code', function () {
  const app = withTestApp();

  it(`the kernel table in ${KERNEL_TABLE_FILE} is the one the registry generates, in registry order (${KERNEL_TABLE_COMMAND} rewrites it)`, () => {
    const table = tableIn(read(KERNEL_TABLE_FILE));
    expect(table, `${KERNEL_TABLE_FILE} has the kernel table markers`).to.be.a('string');
    // the measured times are the command's to write; every other cell is regenerated here
    const times = timesIn(table!);
    for (const def of KERNELS) expect(times.has(def.id), `${def.id} is in the kernel table: run ${KERNEL_TABLE_COMMAND}`).to.equal(true);
    expect(table, `${KERNEL_TABLE_FILE}'s kernel table differs from the registry: run ${KERNEL_TABLE_COMMAND}`).to.equal(kernelTable(KERNELS, times));
  });

  it('every count of kernels and of paths README states is the registry’s and the served document’s', async () => {
    const doc = (await app().http.get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.keys(doc.paths);
    const operations = paths.reduce((n, p) => n + Object.keys(doc.paths[p]!).filter((m) => m === 'get' || m === 'post').length, 0);
    const kernelCounts = [...readme.matchAll(/\b(\d+) (?:seeded computational )?kernels\b|\b(\d+) routes, e\.g\./g)].map((m) => Number(m[1] ?? m[2]));
    expect(kernelCounts.length, 'README counts the kernels').to.be.at.least(2);
    for (const n of kernelCounts) expect(n, 'kernels').to.equal(KERNELS.length);
    expect(readme).to.include(`${paths.length} paths (${operations} operations`);
  });

  it('the route groups name only served paths, each with its prefix right, and cover every path', async () => {
    const served = Object.keys(((await app().http.get('/openapi.json').expect(200)).body as { paths: object }).paths);
    const rows = tableAfter(readme, '## The interface');
    expect(rows.length).to.be.above(10);
    const claimed: ((p: string) => boolean)[] = [];
    for (const [group, under, outside] of rows) {
      for (const [cell, prefix] of [[under!, API], [outside!, '']] as const) {
        for (const path of pathsIn(cell)) {
          const matches = matcher(prefix + path);
          expect(served.some(matches), `README's ${group} row names ${prefix}${path}, which is not served`).to.equal(true);
          claimed.push(matches);
        }
      }
    }
    const kernels = new Set(KERNELS.map((def) => API + kernelPath(def)));
    const unlisted = served.filter((p) => !kernels.has(p) && !claimed.some((m) => m(p)));
    expect(unlisted, 'served paths no README group names').to.deep.equal([]);
    // the check tells the two prefixes apart: the wire board is outside the API prefix
    expect(served).to.include('/mesh/state').and.not.include(`${API}/mesh/state`);
  });

  it('the essential configuration rows name the loader’s variables, keys and defaults, and the count of keys is the schemas’', () => {
    const rows = tableAfter(readme, '## Configuration');
    expect(rows.length).to.be.at.least(10);
    const all = configRows();
    expect(readme, 'README counts the configuration keys').to.include(`all ${all.length} keys`);
    const byKey = new Map(all.map((r) => [r.key, r]));
    for (const [variable, key, dflt] of rows) {
      const name = variable!.replace(/`/g, '');
      const k = key!.replace(/`/g, '');
      expect(ENV_KEYS[name], `${name} is read by the loader`).to.equal(k);
      expect(dflt, `${name}'s default`).to.equal(formatDefault(byKey.get(k)!.default));
    }
    for (const name of ['PORT', 'HOST', 'SVC_DATA_DIR', 'SVC_LEDGER_MODE', 'SVC_DATABASE_URL', 'SVC_SIGNING_KEY_FILE', 'SVC_WRITE_TOKENS', 'SVC_STREAM_FLIGHT', 'LOG_LEVEL']) {
      expect(rows.map((r) => r[0]), name).to.include(`\`${name}\``);
    }
  });

  it('every example verdict body in README and docs/verdicts.md gets the decision it is marked with', async () => {
    expect(examples(readme).map((e) => e.decision)).to.include.members(['ALLOW', 'DENY']);
    // each distinct body once, so each is its track's first fix, as a reader's first call is
    const all = [...examples(readme), ...examples(read('docs/verdicts.md'))];
    const distinct = new Map(all.map((e) => [JSON.stringify(e.body), e]));
    for (const e of all) expect(distinct.get(JSON.stringify(e.body))!.decision, 'one body, one decision').to.equal(e.decision);
    expect(distinct.size).to.be.at.least(2);
    for (const { body, decision } of distinct.values()) {
      const res = await app().http.post(`${API}/verdict`).send(body).expect(200);
      expect(res.body.decision, JSON.stringify(body)).to.equal(decision);
    }
  });
});
