/** The docs plugin: /openapi.json and /docs, built from the app's whole route table. */
import { definePlugin, type NoProvides } from '../platform/plugin.js';
import { docsRoutes } from './docs.routes.js';

declare module '../platform/plugin.js' {
  interface Provides {
    docs: NoProvides;
  }
}

export const docsPlugin = definePlugin({ name: 'docs', needs: [], config: [], build: (s) => ({ routes: docsRoutes(() => s.routeTable()), provides: {} }) });
