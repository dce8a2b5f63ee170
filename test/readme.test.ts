import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { KERNELS } from '../workers/registry.js';
import { KERNEL_TABLE_COMMAND, kernelTable, tableIn, timesIn } from '../src/docs/kernel-table.js';
import { ENV_KEYS } from '../src/config/load.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README stays in step with the code', () => {
  it(`the kernel table is the one the registry generates, in registry order (${KERNEL_TABLE_COMMAND} rewrites it)`, () => {
    const table = tableIn(readme);
    expect(table, 'README.md has the kernel table markers').to.be.a('string');
    // the measured times are the command's to write; every other cell is regenerated here
    const times = timesIn(table!);
    for (const def of KERNELS) expect(times.has(def.id), `${def.id} is in README's kernel table: run ${KERNEL_TABLE_COMMAND}`).to.equal(true);
    expect(table, `README.md's kernel table differs from the registry: run ${KERNEL_TABLE_COMMAND}`).to.equal(kernelTable(KERNELS, times));
  });

  it('the configuration table names every environment variable the loader reads', () => {
    for (const name of Object.keys(ENV_KEYS)) expect(readme, name).to.include(`\`${name}\``);
  });
});
