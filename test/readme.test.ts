import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { KERNELS } from '../workers/registry.js';
import { kernelPath } from '../workers/kernel-def.js';
import { ENV_KEYS } from '../src/config/load.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README stays in step with the code', () => {
  it('the kernel table lists every registered kernel route (npm run kernels:table regenerates it)', () => {
    const table = readme.slice(readme.indexOf('<!-- kernels:start -->'), readme.indexOf('<!-- kernels:end -->'));
    for (const def of KERNELS) expect(table, def.id).to.include(`| \`${kernelPath(def)}\` |`);
  });

  it('the configuration table names every environment variable the loader reads', () => {
    for (const name of Object.keys(ENV_KEYS)) expect(readme, name).to.include(`\`${name}\``);
  });
});
