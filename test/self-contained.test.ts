import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../src/config/load.js';

// A clone must build, run and test with nothing beside it: no file under these folders may reach
// outside the repository for the development checkout's sibling folder.
const ROOT = projectRoot();
const FOLDERS = ['src', 'workers', 'test', 'bench', 'config', '.ci'];
// Each pattern is assembled from pieces so this file does not match itself.
const S = 'shared';
const PATTERNS = [`../${S}`, `'..', '${S}'`, `"..", "${S}"`, `${S}/spec/`];

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else yield path;
  }
}

describe('the repository is self-contained', () => {
  it('no file under src, workers, test, bench, config or .ci names the sibling shared folder', () => {
    const offenders: string[] = [];
    let scanned = 0;
    for (const folder of FOLDERS) {
      for (const path of files(join(ROOT, folder))) {
        const text = readFileSync(path, 'latin1');
        scanned += 1;
        for (const p of PATTERNS) if (text.includes(p)) offenders.push(`${relative(ROOT, path)}: ${p}`);
      }
    }
    expect(scanned, 'files scanned').to.be.greaterThan(100);
    expect(offenders).to.deep.equal([]);
  });

  it('README and package.json do not send readers or scripts outside the repository', () => {
    for (const f of ['README.md', 'package.json', 'workers/README.md']) {
      const text = readFileSync(join(ROOT, f), 'utf8');
      for (const p of PATTERNS) expect(text, `${f} names ${p}`).not.to.include(p);
    }
  });

  it('the CoT fixtures are the exact bytes their README lists (sha256sum -c)', () => {
    const dir = join(ROOT, 'test', 'fixtures');
    const listing = readFileSync(join(dir, 'README.md'), 'utf8');
    const lines = [...listing.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)];
    expect(lines.length).to.equal(10);
    for (const [, sum, file] of lines) {
      const actual = createHash('sha256').update(readFileSync(join(dir, file!))).digest('hex');
      expect(actual, file).to.equal(sum);
    }
  });
});
