/** Kernels of slice c1 (kernels-c.md §1–§11), in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import ssmScan from './ssm-scan.js';
import nestedSchedule from './nested-schedule.js';

export const SLICE: readonly KernelDef[] = [ssmScan, nestedSchedule];
