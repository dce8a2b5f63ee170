/** Networks and signals: graph spectra, topological data analysis, multi-sensor tracking, quantum error correction. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import flowerGraph from './flower-graph.js';
import quantTdaFracture from './quant-tda-fracture.js';
import trackfusionAssociate from './trackfusion-associate.js';
import qecSurfaceCode from './qec-surface-code.js';

export const KERNELS: readonly KernelDef[] = [flowerGraph, quantTdaFracture, trackfusionAssociate, qecSurfaceCode];
