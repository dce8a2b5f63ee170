/**
 * The one table of kernels. The main thread reads it to register routes and validate parameters;
 * the worker host reads it to execute. Add a kernel by importing its file into its slice below.
 */
import type { KernelDef } from './kernel-def.js';
import { kernelPath } from './kernel-def.js';
import { SLICE as fgbrain } from './kernels/index-fgbrain.js';
import { SLICE as a1 } from './kernels/index-a1.js';
import { SLICE as a2 } from './kernels/index-a2.js';
import { SLICE as b1 } from './kernels/index-b1.js';
import { SLICE as b2 } from './kernels/index-b2.js';
import { SLICE as c1 } from './kernels/index-c1.js';
import { SLICE as c2 } from './kernels/index-c2.js';

export const KERNELS: readonly KernelDef[] = [...a1, ...fgbrain, ...a2, ...b1, ...b2, ...c1, ...c2];

export const KERNELS_BY_ID: ReadonlyMap<string, KernelDef> = (() => {
  const map = new Map<string, KernelDef>();
  const paths = new Set<string>();
  for (const def of KERNELS) {
    if (map.has(def.id)) throw new Error(`duplicate kernel id ${def.id}`);
    if (paths.has(kernelPath(def))) throw new Error(`duplicate kernel path ${kernelPath(def)}`);
    map.set(def.id, def);
    paths.add(kernelPath(def));
  }
  return map;
})();
