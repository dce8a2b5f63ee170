/** The Piscina entry of the kernel lane: the service's kernels (registry.ts), handled by kernel-host.ts. */
import { REGISTRY } from './registry.js';
import { kernelHost } from './kernel-host.js';

export default kernelHost(REGISTRY);
