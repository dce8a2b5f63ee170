import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../src/config/load.js';

const ROOT = projectRoot();

function* sources(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.(ts|mjs|js)$/.test(name)) yield path;
  }
}

// the package list is fixed by the service's users: a runtime dependency the code never loads is
// either dead weight or a sign that its job is being done by hand beside it (koa-body was)
describe('runtime dependencies', () => {
  it('every package in "dependencies" is imported or resolved by the service code (src/, workers/)', () => {
    const deps = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
    const code = ['src', 'workers'].flatMap((d) => [...sources(join(ROOT, d))].map((f) => readFileSync(f, 'utf8'))).join('\n');
    const unused = deps.filter((name) => !new RegExp(`(from|import\\(|require(\\.resolve)?\\()\\s*['"]${name.replace(/[/.]/g, '\\$&')}(/[^'"]*)?['"]`).test(code));
    expect(unused).to.deep.equal([]);
  });
});
