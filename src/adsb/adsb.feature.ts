/** The adsb feature: its routes and services. */
import type { Feature } from '../feature.js';
import type { Services } from '../services.js';

export function adsbFeature(_s: Services): Feature {
  return { routes: [] };
}
