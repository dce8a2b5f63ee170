/**
 * The fleet feature: loads the committed synthetic dataset (refusing it if its SHA-256 does not
 * match), computes every view once, and serves them read-only.
 */
import type { Feature } from '../feature.js';
import type { Services } from '../services.js';
import { loadDataset } from './dataset/load.js';
import { fleetRoutes } from './fleet.routes.js';
import { buildFleetViews } from './views.js';

export function fleetFeature(_s: Services): Feature {
  return { routes: fleetRoutes(buildFleetViews(loadDataset())) };
}
