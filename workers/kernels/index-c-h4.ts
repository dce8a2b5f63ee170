/** Kernels of slice c (kernels-c.md), batch h4, in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import nsaSimulate from './nsa-simulate.js';
import dllmDenoise from './dllm-denoise.js';
import interpretabilityFeatures from './interpretability-features.js';

export const SLICE: readonly KernelDef[] = [nsaSimulate, dllmDenoise, interpretabilityFeatures];
