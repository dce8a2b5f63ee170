/** Quantisation and compression of weights, activations and embeddings. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import herotqQuantize from './herotq-quantize.js';
import nvfp4Quantize from './nvfp4-quantize.js';
import ternaryQuantize from './ternary-quantize.js';
import catqCalibrate from './catq-calibrate.js';
import slidesparsePack from './slidesparse-pack.js';
import matgranTruncate from './matgran-truncate.js';

export const KERNELS: readonly KernelDef[] = [herotqQuantize, nvfp4Quantize, ternaryQuantize, catqCalibrate, slidesparsePack, matgranTruncate];
