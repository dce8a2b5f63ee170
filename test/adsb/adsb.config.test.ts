import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/load.js';

describe('ADS-B config', () => {
  it('defaults to adsb.lol, adsb.fi, airplanes.live /v2/mil in that order, 10 s fresh', () => {
    const c = loadConfig({ env: { NODE_ENV: 'test' } }).adsb;
    expect(c.providers.map((p) => [p.name, p.url])).to.deep.equal([
      ['adsblol', 'https://api.adsb.lol/v2/mil'],
      ['adsbfi', 'https://opendata.adsb.fi/api/v2/mil'],
      ['airplaneslive', 'https://api.airplanes.live/v2/mil'],
    ]);
    expect(c).to.include({ enabled: true, freshMs: 10_000, staleMaxMs: 600_000, timeoutMs: 5_000, waitBudgetMs: 6_000, breakerFailures: 3 });
  });

  it('reads SVC_ADSB_PROVIDERS as name=url pairs, in order, with attribution', () => {
    const c = loadConfig({ env: { NODE_ENV: 'test', SVC_ADSB_PROVIDERS: 'adsbfi=http://127.0.0.1:9/v2/mil, local=http://127.0.0.1:8/mil' } }).adsb;
    expect(c.providers).to.deep.equal([
      { name: 'adsbfi', url: 'http://127.0.0.1:9/v2/mil', attribution: 'adsb.fi open data (https://adsb.fi)' },
      { name: 'local', url: 'http://127.0.0.1:8/mil', attribution: 'Aircraft data: local' },
    ]);
  });

  it('rejects a malformed provider list naming the variable', () => {
    expect(() => loadConfig({ env: { NODE_ENV: 'test', SVC_ADSB_PROVIDERS: 'nourl' } })).to.throw(ConfigError, /adsb\.providers \(env SVC_ADSB_PROVIDERS\)/);
    expect(() => loadConfig({ env: { NODE_ENV: 'test' }, overrides: { adsb: { providers: [{ name: 'Bad Name', url: 'http://x' }] } } })).to.throw(ConfigError);
  });
});
