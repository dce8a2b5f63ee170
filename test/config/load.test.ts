import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, projectRoot } from '../../src/config/load.js';
import { configSchema } from '../../src/config/schema.js';

describe('src/config', () => {
  it('defaults: port 8000, host 0.0.0.0, numeric maxQueue', () => {
    const c = loadConfig({ env: {} });
    expect(c.server.port).to.equal(8000);
    expect(c.server.host).to.equal('0.0.0.0');
    expect(c.pool.maxQueue).to.be.a('number');
    expect(c.env).to.equal('development');
  });

  it('every default lives in the schemas: with no config file and no environment the config is complete', () => {
    // development has no file of its own, so this is the schemas' defaults alone
    const files = readdirSync(join(projectRoot(), 'config'));
    expect(files).to.not.include('default.json');
    expect(files).to.not.include('development.json');
    const c = loadConfig({ env: {} });
    expect(c).to.deep.equal(configSchema.validate({ env: 'development' }).value);
    expect(c.ledger.noFlyZones.map((z) => z.id)).to.deep.equal(['nfz-demo-1']);
    expect(c.http.jsonLimitBytes).to.equal(262_144);
    expect(c.pool.taskDeadlineMs).to.equal(2000);
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

  it('ledger modes: file by default, memory for tests, postgres only with a database URL and a key file', () => {
    expect(loadConfig({ env: {} }).ledger).to.include({ mode: 'file', dataDir: 'data', groupCommitMax: 64 });
    expect(loadConfig({ env: { NODE_ENV: 'test' } }).ledger.mode).to.equal('memory');
    expect(() => loadConfig({ env: { SVC_LEDGER_MODE: 'postgres' } })).to.throw(ConfigError, /ledger\.databaseUrl \(env SVC_DATABASE_URL\): is required; ledger\.signingKeyFile \(env SVC_SIGNING_KEY_FILE\): is required/);
    const pg = loadConfig({ env: { SVC_LEDGER_MODE: 'postgres', SVC_DATABASE_URL: 'postgres://svc@127.0.0.1:5432/svc', SVC_SIGNING_KEY_FILE: '/run/secrets/key.pem' } });
    expect(pg.ledger).to.include({ mode: 'postgres', databaseUrl: 'postgres://svc@127.0.0.1:5432/svc' });
    expect(() => loadConfig({ env: { SVC_LEDGER_MODE: 'sqlite' } })).to.throw(ConfigError, /ledger\.mode \(env SVC_LEDGER_MODE\): must be one of \[memory, file, postgres\]/);
  });

  it('the ADS-B refresh is shared only where a database exists: auto by default, postgres insists on one', () => {
    expect(loadConfig({ env: {} }).adsb.sharedRefresh).to.equal('auto');
    expect(loadConfig({ env: { SVC_ADSB_SHARED_REFRESH: 'local' } }).adsb.sharedRefresh).to.equal('local');
    expect(() => loadConfig({ env: { SVC_ADSB_SHARED_REFRESH: 'postgres' } })).to.throw(ConfigError, /adsb\.sharedRefresh "postgres" needs ledger\.databaseUrl \(SVC_DATABASE_URL\)/);
    expect(() => loadConfig({ env: { SVC_ADSB_SHARED_REFRESH: 'redis' } })).to.throw(ConfigError, /adsb\.sharedRefresh \(env SVC_ADSB_SHARED_REFRESH\): must be one of \[auto, postgres, local\]/);
  });

  it('is frozen', () => {
    const c = loadConfig({ env: {} });
    expect(Object.isFrozen(c) && Object.isFrozen(c.server)).to.equal(true);
  });
});
