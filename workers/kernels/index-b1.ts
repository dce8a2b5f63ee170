/** Kernels of slice b1, in the order of their kernel note. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';

export const SLICE: readonly KernelDef[] = [];
