/** The fleet feature: its routes and services. */
import type { Feature } from '../feature.js';
import type { Services } from '../services.js';

export function fleetFeature(_s: Services): Feature {
  return { routes: [] };
}
