/** The static, UI and asset routes (interface 4.9). Files are read once, here, at start-up. */
import type { Feature } from '../feature.js';
import type { Services } from '../services.js';
import { loadAssets } from './assets.js';
import { uiRoutes } from './ui.routes.js';

export function uiFeature(s: Services): Feature {
  const cat = loadAssets();
  s.log.debug({ assets: cat.all.length }, 'ui assets loaded');
  return { routes: uiRoutes(cat) };
}
