/** Kernels of slice c (kernels-c.md), batch h2, in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import hrmSolve from './hrm-solve.js';
import kvcacheH2oEvict from './kvcache-h2o-evict.js';
import ringattnSimulate from './ringattn-simulate.js';
import steeringSweep from './steering-sweep.js';

export const SLICE: readonly KernelDef[] = [hrmSolve, kvcacheH2oEvict, ringattnSimulate, steeringSweep];
