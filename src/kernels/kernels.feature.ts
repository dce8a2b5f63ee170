/** The kernels plugin: one route per kernel of the app's registry, run in the worker pool. */
import type { KernelRegistry } from '../../workers/registry.js';
import { definePlugin, type Plugin } from '../platform/plugin.js';
import { kernelRoutes } from './kernels.routes.js';
import type { KernelDocs } from './kernel-docs.js';

declare module '../platform/plugin.js' {
  interface Provides {
    /** The kernels the app serves: every listing of kernels (routes, posture inventory) reads them here. */
    kernels: { registry: KernelRegistry };
  }
}

/** `registry`: the service's kernels, or a test's with fixture kernels added (and their generated `docs`). */
export function kernelsPlugin(registry: KernelRegistry, docs?: KernelDocs): Plugin<'kernels', never> {
  return definePlugin({ name: 'kernels', needs: [], config: [], build: (s) => ({ routes: kernelRoutes({ pool: s.pool, metrics: s.metrics, registry, ...(docs ? { docs } : {}) }), provides: { registry } }) });
}
