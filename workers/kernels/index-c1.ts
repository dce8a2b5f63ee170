/** Kernels of slice c1 (kernels-c.md §1–§11), in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import morRoute from './mor-route.js';
import rauqScore from './rauq-score.js';
import ssmScan from './ssm-scan.js';
import bltEntropyPatch from './blt-entropy-patch.js';
import formalmathRetrieve from './formalmath-retrieve.js';
import hrmSolve from './hrm-solve.js';
import kvcacheH2oEvict from './kvcache-h2o-evict.js';
import nestedSchedule from './nested-schedule.js';
import ringattnSimulate from './ringattn-simulate.js';
import steeringSweep from './steering-sweep.js';
import catqCalibrate from './catq-calibrate.js';

export const SLICE: readonly KernelDef[] = [
  morRoute,
  rauqScore,
  ssmScan,
  bltEntropyPatch,
  formalmathRetrieve,
  hrmSolve,
  kvcacheH2oEvict,
  nestedSchedule,
  ringattnSimulate,
  steeringSweep,
  catqCalibrate,
];
