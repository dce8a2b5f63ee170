/**
 * The plugin contract: buildApp orders plugins by what they need, refuses a missing provider, a
 * duplicate or a cycle before building anything, hands each plugin exactly what it declared, and
 * closes what it built when a later plugin fails.
 */
import { expect } from 'chai';
import { buildPlugins, definePlugin, orderPlugins, type Plugin } from '../../src/platform/plugin.js';
import type { Services } from '../../src/platform/services.js';
import { withTestApp } from '../helpers/app.js';

const p = (name: string, needs: string[] = [], log: string[] = []): Plugin =>
  definePlugin({
    name: name as 'fleet',
    needs: needs as never[],
    build: (_s, deps) => {
      log.push(`${name}(${Object.keys(deps).join(',')})`);
      return { routes: [], provides: {}, close: () => void log.push(`close ${name}`) };
    },
  }) as unknown as Plugin;

describe('src/platform/plugin', () => {
  it('orders every plugin after what it needs, otherwise in list order', () => {
    const order = orderPlugins([p('core', ['evidence']), p('ledger'), p('evidence', ['ledger', 'adsb']), p('adsb')]).map((x) => x.name);
    expect(order).to.deep.equal(['ledger', 'adsb', 'evidence', 'core']);
  });

  it('refuses a missing provider, a duplicate name and a cycle, naming them', () => {
    expect(() => orderPlugins([p('core', ['evidence'])])).to.throw("plugin 'core' needs 'evidence', which no plugin provides");
    expect(() => orderPlugins([p('ui'), p('ui')])).to.throw("plugin 'ui' declared twice");
    expect(() => orderPlugins([p('stream', ['mesh']), p('mesh', ['verdicts']), p('verdicts', ['stream'])])).to.throw('plugin cycle: stream -> mesh -> verdicts -> stream');
  });

  it('builds in order with exactly the declared deps, and closes what it built when a build fails', async () => {
    const log: string[] = [];
    const failing = definePlugin({ name: 'ui', needs: [], build: () => { throw new Error('no assets'); } }) as unknown as Plugin;
    const err = await buildPlugins({} as Services, [p('ledger', [], log), p('cot', [], log), p('stream', ['cot'], log), failing]).then(() => null, (e: Error) => e);
    expect(err?.message).to.equal('no assets');
    expect(log).to.deep.equal(['ledger()', 'cot()', 'stream(cot)', 'close stream', 'close cot', 'close ledger']);
  });

  describe('the app', () => {
    const app = withTestApp();
    it('builds every feature as a plugin, each after its needs, and publishes no feature state on services', () => {
      const names = app().services.plugins();
      expect([...names].sort()).to.deep.equal(['adsb', 'core', 'cot', 'docs', 'energy', 'evidence', 'fleet', 'kernels', 'ledger', 'mesh', 'security', 'stream', 'ui', 'verdicts']);
      const at = (n: string) => names.indexOf(n as never);
      for (const [later, earlier] of [['verdicts', 'ledger'], ['stream', 'verdicts'], ['stream', 'cot'], ['mesh', 'stream'], ['evidence', 'adsb'], ['core', 'evidence'], ['security', 'ledger']]) {
        expect(at(later!), `${later} after ${earlier}`).to.be.above(at(earlier!));
      }
      for (const k of ['ledger', 'adsb', 'cot', 'enforcement']) expect(app().services, k).to.not.have.property(k);
    });
  });
});
