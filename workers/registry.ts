/**
 * The one table of kernels. The main thread reads it to register routes and validate parameters;
 * the worker host reads it to execute. Add a kernel by importing its file into its domain's index file (workers/kernels/index-*.ts).
 */
import type { KernelDef } from './kernel-def.js';
import { kernelPath } from './kernel-def.js';
import { KERNELS as attention } from './kernels/index-attention.js';
import { KERNELS as quantization } from './kernels/index-quantization.js';
import { KERNELS as training } from './kernels/index-training.js';
import { KERNELS as inference } from './kernels/index-inference.js';
import { KERNELS as agents } from './kernels/index-agents.js';
import { KERNELS as uncertainty } from './kernels/index-uncertainty.js';
import { KERNELS as assurance } from './kernels/index-assurance.js';
import { KERNELS as signals } from './kernels/index-signals.js';
import { KERNELS as fgbrain } from './kernels/index-fgbrain.js';

/** Grouped by domain (one index file each); routes and /openapi.json list them in this order. */
export const KERNELS: readonly KernelDef[] = [...attention, ...quantization, ...training, ...inference, ...agents, ...uncertainty, ...assurance, ...signals, ...fgbrain];

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
