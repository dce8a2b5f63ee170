/**
 * The one table of kernels, and every listing derives from it: the routes and /openapi.json, the
 * warm-up, the posture baseline's route inventory and the kernel table of docs/kernels.md. The
 * main thread reads it to register routes and validate parameters; the worker host reads it to
 * execute. Add a kernel by importing its file into its domain's list
 * (workers/kernels/index-<domain>.ts).
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

export interface KernelRegistry {
  /** In route order: routes, /openapi.json and the kernel table list them in this order. */
  readonly kernels: readonly KernelDef[];
  get(id: string): KernelDef | undefined;
}

/** A registry of `kernels`; throws on a duplicate id or path. */
export function kernelRegistry(kernels: readonly KernelDef[]): KernelRegistry {
  const byId = new Map<string, KernelDef>();
  const paths = new Set<string>();
  for (const def of kernels) {
    if (byId.has(def.id)) throw new Error(`duplicate kernel id ${def.id}`);
    if (paths.has(kernelPath(def))) throw new Error(`duplicate kernel path ${kernelPath(def)}`);
    byId.set(def.id, def);
    paths.add(kernelPath(def));
  }
  const list = Object.freeze([...kernels]);
  return {
    kernels: list,
    get(id) {
      return byId.get(id);
    },
  };
}

/** `base` with `more` registered after its kernels (an app built with extra kernels: tests, fixtures). */
export function withKernels(base: KernelRegistry, more: readonly KernelDef[]): KernelRegistry {
  return kernelRegistry([...base.kernels, ...more]);
}

/** The service's kernels, grouped by domain (one list file each). */
export const REGISTRY: KernelRegistry = kernelRegistry([...attention, ...quantization, ...training, ...inference, ...agents, ...uncertainty, ...assurance, ...signals, ...fgbrain]);

export const KERNELS: readonly KernelDef[] = REGISTRY.kernels;
