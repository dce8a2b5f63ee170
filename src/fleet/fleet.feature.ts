/**
 * The fleet feature: loads the committed synthetic dataset (refusing it if its SHA-256 does not
 * match), computes every view once, and serves them read-only.
 */
import { definePlugin, type NoProvides } from '../platform/plugin.js';
import { loadDataset } from './dataset/load.js';
import { fleetRoutes } from './fleet.routes.js';
import { buildFleetViews } from './views.js';

declare module '../platform/plugin.js' {
  interface Provides {
    fleet: NoProvides;
  }
}

export const fleetPlugin = definePlugin({
  name: 'fleet',
  needs: [],
  config: [],
  build: () => ({ routes: fleetRoutes(buildFleetViews(loadDataset())), provides: {} }),
});
