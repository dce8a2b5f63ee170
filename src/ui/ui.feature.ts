/** The static, UI and asset routes. The UI build is loaded (or built) once, here, at start-up. */
import { definePlugin, type NoProvides, type PluginServices } from '../platform/plugin.js';

import { catalogue } from './assets.js';
import { loadUiBuild } from './build.js';
import { uiRoutes } from './ui.routes.js';

declare module '../platform/plugin.js' {
  interface Provides {
    ui: NoProvides;
  }
}

export const uiPlugin = definePlugin({
  name: 'ui',
  needs: [],
  config: [],
  build(s: PluginServices<never>) {
    const build = loadUiBuild();
    const cat = catalogue(build);
    s.log.info({ assets: cat.all.length, from: build.from, ms: Math.round(build.buildMs) }, 'ui assets loaded');
    return { routes: uiRoutes(cat), provides: {} };
  },
});
