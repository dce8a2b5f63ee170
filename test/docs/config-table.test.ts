/**
 * docs/configuration.md's table is the one the config schemas generate: every leaf key in schema
 * order, the variable the loader reads for it, the resolved default and a meaning for each key.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Joi from 'joi';
import { ENV_KEYS, projectRoot } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';
import { CONFIG_MEANINGS } from '../../src/docs/config-meanings.js';
import { CONFIG_TABLE_COMMAND, CONFIG_TABLE_FILE, configRows, configTable, configTableIn, formatDefault, strayMeanings, unexplainedKeys } from '../../src/docs/config-table.js';

const doc = readFileSync(join(projectRoot(), CONFIG_TABLE_FILE), 'utf8');

describe('the configuration table', () => {
  it(`in ${CONFIG_TABLE_FILE} is the one the schemas generate (${CONFIG_TABLE_COMMAND} rewrites it)`, () => {
    const table = configTableIn(doc);
    expect(table, `${CONFIG_TABLE_FILE} has the config table markers`).to.be.a('string');
    expect(table, `${CONFIG_TABLE_FILE}'s configuration table differs from the schemas: run ${CONFIG_TABLE_COMMAND}`).to.equal(configTable(configRows()));
  });

  it('names every environment variable the loader reads, on the row of the key it sets', () => {
    const rows = configRows();
    for (const [name, key] of Object.entries(ENV_KEYS)) {
      expect(doc, name).to.include(`\`${name}\``);
      expect(rows.find((r) => r.key === key)?.env, `${name} on the row of ${key}`).to.equal(name);
    }
    expect(rows.filter((r) => r.env).length).to.equal(Object.keys(ENV_KEYS).length);
  });

  it('has a meaning for every key, and no meaning for a key the schemas lack', () => {
    const rows = configRows();
    expect(rows.length).to.be.above(100);
    expect(unexplainedKeys(rows)).to.deep.equal([]);
    expect(strayMeanings(rows)).to.deep.equal([]);
  });

  it('lists leaf keys in schema order with the defaults the loader resolves from the schemas', () => {
    const rows = configRows();
    const at = (key: string) => rows.find((r) => r.key === key);
    expect(rows.slice(0, 3).map((r) => r.key)).to.deep.equal(['env', 'server.port', 'server.host']);
    // a core key, a pool key, nested, a list, an empty list
    expect(formatDefault(at('server.port')!.default)).to.equal('`8000`');
    expect(formatDefault(at('pool.warmupPasses')!.default)).to.equal('`16`');
    expect(formatDefault(at('cot.limits.maxDepth')!.default)).to.equal('`16`');
    expect(at('cot.limits')).to.equal(undefined);
    expect(formatDefault(at('ledger.noFlyZones')!.default)).to.equal('1 entry: `nfz-demo-1`');
    expect(formatDefault(at('guard.writeTokens')!.default)).to.equal('empty');
  });

  it('fails on a key nothing documents, takes a joi description over the meanings, and escapes pipes', () => {
    const schema = (configSchema as Joi.ObjectSchema).keys({ extra: Joi.object({ bare: Joi.number().default(1), told: Joi.string().default('a|b').description('said | here') }).default() });
    const rows = configRows({ schema });
    expect(unexplainedKeys(rows)).to.deep.equal(['extra.bare']);
    expect(() => configTable(rows)).to.throw(/no meaning for extra\.bare/);
    const told = configTable(configRows({ schema, meanings: { ...CONFIG_MEANINGS, 'extra.bare': 'one', 'extra.told': 'ignored' } }));
    expect(told).to.include('| `extra.told` | – | `a\\|b` | said \\| here |');
    expect(strayMeanings(rows, { ...CONFIG_MEANINGS, 'server.gone': 'x' })).to.deep.equal(['server.gone']);
  });
});
