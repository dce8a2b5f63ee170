/** Kernels of slice c (kernels-c.md), batch h1, in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import morRoute from './mor-route.js';
import rauqScore from './rauq-score.js';
import bltEntropyPatch from './blt-entropy-patch.js';
import formalmathRetrieve from './formalmath-retrieve.js';

export const SLICE: readonly KernelDef[] = [morRoute, rauqScore, bltEntropyPatch, formalmathRetrieve];
