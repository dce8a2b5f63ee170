/** Uncertainty and hallucination scores over sampled answers and attention. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import sementInfo from './sement-info.js';
import sementEstimate from './sement-estimate.js';
import qhallQuantify from './qhall-quantify.js';
import rauqScore from './rauq-score.js';

export const KERNELS: readonly KernelDef[] = [sementInfo, sementEstimate, qhallQuantify, rauqScore];
