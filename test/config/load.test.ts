import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/load.js';

describe('src/config', () => {
  it('defaults: port 8000, host 0.0.0.0, numeric maxQueue', () => {
    const c = loadConfig({ env: {} });
    expect(c.server.port).to.equal(8000);
    expect(c.server.host).to.equal('0.0.0.0');
    expect(c.pool.maxQueue).to.be.a('number');
    expect(c.env).to.equal('development');
  });

  it('environment overrides the files, and NODE_ENV selects config/<env>.json', () => {
    const c = loadConfig({ env: { NODE_ENV: 'test', PORT: '9123', SVC_POOL_MAX_QUEUE: '17' } });
    expect(c.server.port).to.equal(9123);
    expect(c.pool.maxQueue).to.equal(17);
    expect(c.log.level).to.equal('silent');
  });

  it('a bad value stops start-up with a message naming the key and its variable', () => {
    expect(() => loadConfig({ env: { PORT: 'eighty' } })).to.throw(ConfigError, /server\.port \(env PORT\): must be a number/);
    expect(() => loadConfig({ env: { SVC_POOL_MAX_QUEUE: '0' } })).to.throw(ConfigError, /pool\.maxQueue \(env SVC_POOL_MAX_QUEUE\)/);
    expect(() => loadConfig({ env: {}, overrides: { pool: { bogus: 1 } } })).to.throw(ConfigError, /pool\.bogus/);
  });

  it('is frozen', () => {
    const c = loadConfig({ env: {} });
    expect(Object.isFrozen(c) && Object.isFrozen(c.server)).to.equal(true);
  });
});
