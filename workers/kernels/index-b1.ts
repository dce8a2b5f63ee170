/** Kernels of slice b1 (kernels-b.md §1, 2, 5–10), in the order of their kernel note. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import quantTdaFracture from './quant-tda-fracture.js';
import trackfusionAssociate from './trackfusion-associate.js';
import testtimeScaling from './testtime-scaling.js';
import specdecodeSimulate from './specdecode-simulate.js';
import worldmodelPredict from './worldmodel-predict.js';
import episodicRecall from './episodic-recall.js';
import qecSurfaceCode from './qec-surface-code.js';
import energyReceipt from './energy-receipt.js';

export const SLICE: readonly KernelDef[] = [
  quantTdaFracture,
  trackfusionAssociate,
  testtimeScaling,
  specdecodeSimulate,
  worldmodelPredict,
  episodicRecall,
  qecSurfaceCode,
  energyReceipt,
];
