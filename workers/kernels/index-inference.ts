/** Inference-time compute: speculative decoding, routing, search and test-time scaling. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import specexecTree from './specexec-tree.js';
import specdecodeSimulate from './specdecode-simulate.js';
import testtimeScaling from './testtime-scaling.js';
import moeRoute from './moe-route.js';
import morRoute from './mor-route.js';
import s3searchSearch from './s3search-search.js';
import gitthoughtsTree from './gitthoughts-tree.js';
import hrmSolve from './hrm-solve.js';

export const KERNELS: readonly KernelDef[] = [specexecTree, specdecodeSimulate, testtimeScaling, moeRoute, morRoute, s3searchSearch, gitthoughtsTree, hrmSolve];
