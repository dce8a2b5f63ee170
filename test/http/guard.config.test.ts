import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { bearerToken } from '../../src/http/write-guard.js';

const tokens = (value: string): string => loadConfig({ env: { SVC_WRITE_TOKENS: value } }).guard.writeTokens;

describe('src/http/guard.config.ts (write tokens)', () => {
  it('takes tokens a client can send as Authorization: Bearer, with blanks around the commas', () => {
    expect(tokens('alpha-token, beta-token')).to.equal('alpha-token, beta-token');
    const longest = 'x'.repeat(512);
    expect(tokens(longest)).to.equal(longest);
    expect(bearerToken(`Bearer ${longest}`)).to.equal(longest);
    expect(loadConfig({ env: {} }).guard.writeTokens).to.equal('');
  });

  it('refuses a token no client could present (space, non-ASCII, over 512 characters), naming its position, never the token', () => {
    for (const [value, position] of [
      ['alpha-token,<paste tokens here>', 'token 2 of 2'],
      ['tökén', 'token 1 of 1'],
      ['x'.repeat(513), 'token 1 of 1'],
    ] as const) {
      expect(() => tokens(value), value.slice(0, 40)).to.throw(ConfigError, `guard.writeTokens (env SVC_WRITE_TOKENS): ${position} is not 1–512 visible ASCII characters without spaces`);
      // what the loader refused is exactly what the guard could never match
      const bad = value.split(',').at(-1)!;
      expect(bearerToken(`Bearer ${bad}`)).to.equal(null);
      try {
        tokens(value);
      } catch (err) {
        expect((err as Error).message).to.not.include(bad);
      }
    }
  });
});
