/**
 * The 8 energy routes and the /energy-sovereign panel. Each answer takes one fresh reading and
 * becomes the next link of the energy snapshot chain (chain.ts). No query parameters: an
 * unknown one is 422 extra_forbidden.
 */
import Joi from 'joi';
import type { Context } from 'koa';
import { RECEIPT_DOCTRINE } from '../core/doctrine.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { PluginServices } from '../platform/plugin.js';
import type { SnapshotChain } from './chain.js';
import type { EnergyMeter, Reading } from './meter.js';
import { metricsBody } from './metrics-view.js';
import { renderPanel } from './panel.js';
import type { SeriesSampler } from './series.js';
import { jtokenBody, kvcacheBody, type receiptDefaultsExample } from './reference-views.js';
import { carbonBody, sovereignBody } from './sovereign.js';
import { gatewayBody, routerBody, throughputBody } from './traffic-views.js';
import type { CounterSnapshot, RequestWindows, ServerTap } from './traffic.js';
import { ENERGY_RESPONSES, PANEL } from './energy.responses.js';


/** The config the energy views read: its own slice (the power model), and the pool's queue bound. */
export type EnergyServices = PluginServices<'energy' | 'pool'>;

export interface EnergyDeps {
  s: EnergyServices;
  meter: EnergyMeter;
  windows: RequestWindows;
  tap: ServerTap;
  series: SeriesSampler;
  chain: SnapshotChain;
  example: () => ReturnType<typeof receiptDefaultsExample>;
}

type Builder = (r: Reading, now: CounterSnapshot) => Promise<Record<string, unknown>> | Record<string, unknown>;

export function energyRoutes(deps: EnergyDeps): RouteDef[] {
  const { s, meter, windows, tap, series, chain } = deps;
  /** The snapshot plus the measured series it is the latest point of (one body for the JSON and the panel). */
  const sovereign = (r: Reading) => ({ ...sovereignBody(r, s.config.energy, s.startedAt), series: series.document() });
  const noParams = Joi.object({});
  /** One reading, one chain link; doctrine right after the schema id, as on every body. */
  const snapshot = async (ctx: Context, build: Builder): Promise<Record<string, unknown>> => {
    tap.attach(ctx.req, ctx.res);
    const reading = await meter.read();
    const now = await windows.snapshot();
    const { schema, ...rest } = await build(reading, now);
    ctx.set('Cache-Control', 'no-store');
    return chain.link({ schema, doctrine: RECEIPT_DOCTRINE, ...rest });
  };
  const view = (name: keyof typeof ENERGY_RESPONSES, summary: string, build: Builder): RouteDef =>
    defineRoute({ method: 'GET', path: `/energy/${name}`, uses: ['metrics-registry', 'worker-pool'], summary, tag: 'energy', query: noParams, response: ENERGY_RESPONSES[name], handler: ({ ctx }) => snapshot(ctx, build) });

  return [
    view('sovereign', 'Process CPU time, requests and event-loop use through the stated CPU power model; energy and carbon in-process; `series`: the same readings sampled on a fixed interval (bounded ring)', sovereign),
    view('jtoken', 'Energy per token: published references kept apart, the receipt formula, and this service per request', async (r) => {
      const router = await routerBody(s, r);
      const top = [...router.routes].sort((a, b) => (b.energy_j_marginal.value ?? 0) - (a.energy_j_marginal.value ?? 0)).slice(0, 5).map((x) => ({ method: x.method, template: x.template, energy_j_marginal: x.energy_j_marginal }));
      const perRequest = sovereignBody(r, s.config.energy, s.startedAt).per_request.j_marginal;
      return jtokenBody(await deps.example(), perRequest, top, r.at.toISOString());
    }),
    view('throughput', 'Request windows, latency percentiles and worker-pool throughput, all measured', (r, now) => throughputBody(s, r, windows, now)),
    view('kvcache', 'KV-cache size model for published model configurations (GQA KV heads)', (r) => kvcacheBody(r.at.toISOString())),
    view('gateway', 'Gateway RED and saturation: in flight, errors by code, duration histogram, bytes, event loop', (r, now) => gatewayBody(s, r, tap, windows, now)),
    view('router', 'Per-route requests, errors, latency and an approximate CPU/energy attribution', (r) => routerBody(s, r)),
    view('carbon', 'Location-based carbon of the modelled energy, and the Software Carbon Intensity per request', (r) => carbonBody(r, s.config.energy)),
    view('metrics', 'JSON view of the process, nodejs, http and energy families of the /metrics registry', () => metricsBody(s.metrics.registry)),
    defineRoute({
      method: 'GET',
      path: '/energy-sovereign',
      root: true,
      uses: ['metrics-registry', 'worker-pool'],
      summary: 'HTML panel of /energy/sovereign: the measured series as a chart, the snapshot as a table (same object, embedded as JSON)',
      tag: 'energy',
      query: noParams,
      produces: 'text/html',
      response: PANEL,
      html: 'ui',
      async handler({ ctx }) {
        const snap = await snapshot(ctx, sovereign);
        ctx.type = 'text/html; charset=utf-8';
        return renderPanel(snap as Parameters<typeof renderPanel>[0]);
      },
    }),
  ];
}
