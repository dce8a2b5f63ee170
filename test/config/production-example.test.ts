import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig, projectRoot } from '../../src/config/load.js';

type Tree = Record<string, unknown>;

// config/production.example.json, copied to config/production.json and selected by NODE_ENV=production
const example = JSON.parse(readFileSync(join(projectRoot(), 'config', 'production.example.json'), 'utf8')) as Tree;

/** A `<…>` string is a value the operator must supply. */
const PLACEHOLDER = /^<[^<>]+>$/;

/** Every placeholder's key path, and a copy of the tree with each replaced by `fill(path)`. */
function substitute(node: unknown, fill: (path: string) => unknown, path: string[] = [], found: string[] = []): { tree: unknown; found: string[] } {
  if (typeof node === 'string' && PLACEHOLDER.test(node)) {
    found.push(path.join('.'));
    return { tree: fill(path.join('.')), found };
  }
  if (Array.isArray(node)) return { tree: node.map((v, i) => substitute(v, fill, [...path, String(i)], found).tree), found };
  if (node && typeof node === 'object') return { tree: Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, fill, [...path, k], found).tree])), found };
  return { tree: node, found };
}

/** What an operator puts in place of each placeholder. */
const FILLED: Record<string, unknown> = {
  'server.publicBaseUrl': 'https://drone-intel.example.org',
  'guard.writeTokens': 'k7Qe1vY9cR2mX5pL8sN3wB6tH0jD4fGa,Zp4Lw8Nc2Rv6Xq0Tb5Hm9Js3Kd7Fg1Ye',
  'guard.trustProxy.0': '10.0.0.5',
};

const filled = (): Tree => substitute(example, (path) => FILLED[path]).tree as Tree;

describe('config/production.example.json (what a careful operator starts from)', () => {
  it('its placeholders are exactly the values only the operator knows: public URL, write tokens, the proxy', () => {
    expect(substitute(example, () => null).found.sort()).to.deep.equal(Object.keys(FILLED).sort());
  });

  it('filled in, it passes the real loader as config/production.json does with NODE_ENV=production', () => {
    const c = loadConfig({ env: { NODE_ENV: 'production' }, overrides: filled() });
    expect(c.env).to.equal('production');
    expect(c.server).to.include({ host: '0.0.0.0', port: 8000, publicBaseUrl: 'https://drone-intel.example.org' });
    expect(c.ledger).to.include({ mode: 'file', dataDir: '/var/lib/drone-intel-svc', fsckAtStart: true });
    expect(c.stream.flight).to.equal('off');
    expect(c.log.level).to.equal('info');
    expect(c.pool).to.include({ threads: 0, warmup: true });
    // writes need a token and each token has a quota
    expect(c.guard.writeTokens.split(',')).to.have.length(2);
    expect(c.guard.writeRatePerS).to.be.greaterThan(0);
    expect(c.guard.maxConnectionsPerAddress).to.be.below(c.guard.maxConnections);
    expect(c.guard.trustProxy).to.deep.equal(['10.0.0.5']);
  });

  it('sets no per-address write limit, which write tokens make unreachable (a token-less write is refused with 401)', () => {
    const guard = example.guard as Tree;
    expect(guard.writeTokens).to.be.a('string').and.not.equal('');
    expect(Object.keys(guard).filter((k) => k.startsWith('addressWrite'))).to.deep.equal([]);
    expect(loadConfig({ env: { NODE_ENV: 'production' }, overrides: filled() }).guard.addressWriteRatePerS).to.equal(0);
  });

  it('left unedited, start-up refuses it and names every placeholder it met', () => {
    expect(() => loadConfig({ env: { NODE_ENV: 'production' }, overrides: example })).to.throw(ConfigError, /server\.publicBaseUrl \(env SVC_PUBLIC_BASE_URL\)/);
    let message = '';
    try {
      loadConfig({ env: { NODE_ENV: 'production' }, overrides: example });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.include('guard.writeTokens (env SVC_WRITE_TOKENS): token 1 of 1 is not 1–512 visible ASCII characters without spaces');
    expect(message).to.match(/guard\.trustProxy/);
    // the message names keys, never echoes a token
    expect(message).to.not.include('separated by commas');
  });
});
