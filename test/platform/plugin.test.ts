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
    config: [],
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
    const failing = definePlugin({ name: 'ui', needs: [], config: [], build: () => { throw new Error('no assets'); } }) as unknown as Plugin;
    const err = await buildPlugins({} as Services, [p('ledger', [], log), p('cot', [], log), p('stream', ['cot'], log), failing]).then(() => null, (e: Error) => e);
    expect(err?.message).to.equal('no assets');
    expect(log).to.deep.equal(['ledger()', 'cot()', 'stream(cot)', 'close stream', 'close cot', 'close ledger']);
  });

  it('hands each plugin only the config sections it declared, the rest of the services as they are', async () => {
    const seen: Record<string, { config: object; log: unknown; inProcess: unknown }> = {};
    let inProcessReads = 0;
    const services = {
      config: { adsb: { enabled: true }, ledger: { mode: 'memory' }, pool: { threads: 1 } },
      log: 'the logger',
      get inProcess() {
        inProcessReads++;
        return 'the client';
      },
    } as unknown as Services;
    const adsb = definePlugin({
      name: 'adsb',
      needs: [],
      config: ['adsb', 'ledger'],
      build(s) {
        seen.adsb = { config: s.config, log: s.log, inProcess: undefined };
        // @ts-expect-error: the pool's section was not declared
        void s.config.pool;
        return { routes: [], provides: { feed: null as never, status: () => null as never } };
      },
    });
    const fleet = definePlugin({
      name: 'fleet',
      needs: [],
      config: [],
      build(s, deps) {
        seen.fleet = { config: s.config, log: s.log, inProcess: s.inProcess };
        // @ts-expect-error: no section was declared
        void s.config.adsb;
        // @ts-expect-error: nor a need: what other plugins provide is not there either
        void deps.adsb;
        return { routes: [], provides: {} };
      },
    });
    await buildPlugins(services, [adsb, fleet] as unknown as Plugin[]);
    expect(seen.adsb!.config).to.deep.equal({ adsb: { enabled: true }, ledger: { mode: 'memory' } });
    expect(Object.isFrozen(seen.adsb!.config)).to.equal(true);
    expect((seen.adsb!.config as { adsb: unknown }).adsb).to.equal(services.config.adsb);
    expect(seen.fleet!.config).to.deep.equal({});
    expect([seen.adsb!.log, seen.fleet!.log]).to.deep.equal(['the logger', 'the logger']);
    // getters are read when a plugin reads them, not when its services are made
    expect([seen.fleet!.inProcess, inProcessReads]).to.deep.equal(['the client', 1]);
  });

  describe('the app', () => {
    const app = withTestApp();
    it('builds every feature as a plugin, each after its needs, and publishes no feature state on services', () => {
      const names = app().services.plugins();
      expect([...names].sort()).to.deep.equal(['adsb', 'alerts', 'core', 'cot', 'docs', 'energy', 'evidence', 'fleet', 'kernels', 'ledger', 'mesh', 'security', 'stream', 'tak', 'ui', 'verdicts']);
      const at = (n: string) => names.indexOf(n as never);
      for (const [later, earlier] of [['verdicts', 'ledger'], ['stream', 'verdicts'], ['stream', 'cot'], ['mesh', 'stream'], ['evidence', 'adsb'], ['core', 'evidence'], ['security', 'ledger']]) {
        expect(at(later!), `${later} after ${earlier}`).to.be.above(at(earlier!));
      }
      for (const k of ['ledger', 'adsb', 'cot', 'enforcement']) expect(app().services, k).to.not.have.property(k);
    });
  });
});
