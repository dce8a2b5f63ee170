/**
 * The energy feature: one meter (baselines taken now, when the app is built), request windows,
 * a server tap, the sampler of the measured series, the snapshot chain, and two model gauges
 * published on the app's registry so /metrics carries the energy estimate too.
 */
import { Gauge } from 'prom-client';
import { definePlugin, type Built, type NoProvides } from '../platform/plugin.js';
import { SnapshotChain } from './chain.js';
import { energyRoutes, type EnergyServices } from './energy.routes.js';
import { EnergyMeter, powerModel } from './meter.js';
import { receiptDefaultsExample } from './reference-views.js';
import { SeriesSampler } from './series.js';
import { RequestWindows, ServerTap } from './traffic.js';

declare module '../platform/plugin.js' {
  interface Provides {
    energy: NoProvides;
  }
}

export const energyPlugin = definePlugin({ name: 'energy', needs: [], config: ['energy', 'pool'], build: buildEnergy });

function buildEnergy(s: EnergyServices): Built<'energy'> {
  const cfg = s.config.energy;
  const meter = new EnergyMeter(s.metrics.registry, cfg.raplPath);
  const windows = new RequestWindows(s.metrics.registry);
  const tap = new ServerTap();
  const series = new SeriesSampler(meter, cfg);
  let example: ReturnType<typeof receiptDefaultsExample> | null = null;
  const registers = [s.metrics.registry];
  new Gauge({
    name: 'svc_energy_model_joules',
    help: 'Modelled energy since start (CPU power model, see /api/svc/v1/energy/sovereign)',
    labelNames: ['kind'],
    registers,
    async collect() {
      const m = powerModel(await meter.read(), cfg);
      this.set({ kind: 'total' }, m.energyJTotal);
      this.set({ kind: 'marginal' }, m.energyJMarginal);
    },
  });
  new Gauge({
    name: 'svc_energy_model_gco2e',
    help: 'Modelled emissions since start: energy_kwh x configured grid intensity',
    registers,
    async collect() {
      this.set(powerModel(await meter.read(), cfg).energyKwh * cfg.gridGco2PerKwh);
    },
  });
  return {
    routes: energyRoutes({
      s,
      meter,
      windows,
      tap,
      series,
      chain: new SnapshotChain(),
      example: () =>
        (example ??= receiptDefaultsExample(s.pool).catch((err: unknown) => {
          example = null; // a shed or failed run is retried by the next request
          throw err;
        })),
    }),
    provides: {},
    // sampling starts once the app is built (building blocks the loop on purpose)
    ready() {
      series.start();
    },
    close() {
      series.close();
      windows.close();
      tap.detach();
    },
  };
}
