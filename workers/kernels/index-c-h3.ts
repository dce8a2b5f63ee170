/** Kernels of slice c (kernels-c.md), batch h3, in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import catqCalibrate from './catq-calibrate.js';
import genieRollout from './genie-rollout.js';
import inplacetttAdapt from './inplacettt-adapt.js';
import matgranTruncate from './matgran-truncate.js';

export const SLICE: readonly KernelDef[] = [catqCalibrate, genieRollout, inplacetttAdapt, matgranTruncate];
