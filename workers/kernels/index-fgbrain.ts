/** The fgbrain family: one seeded spiking dependency graph and the views over it. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import fgbrainGraph from './fgbrain-graph.js';
import fgbrainFire from './fgbrain-fire.js';
import fgbrainRepair from './fgbrain-repair.js';
import fgbrainPlasticity from './fgbrain-plasticity.js';
import fgbrainMemory from './fgbrain-memory.js';
import fgbrainVitals from './fgbrain-vitals.js';
import fgbrainVitalsEnergy from './fgbrain-vitals-energy.js';
import fgbrainEvolve from './fgbrain-evolve.js';
import fgbrainManifest from './fgbrain-manifest.js';

export const KERNELS: readonly KernelDef[] = [fgbrainGraph, fgbrainFire, fgbrainRepair, fgbrainPlasticity, fgbrainMemory, fgbrainVitals, fgbrainVitalsEnergy, fgbrainEvolve, fgbrainManifest];
