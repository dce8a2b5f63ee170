/** Attention and sequence mixing: linear, sparse, latent, ring and analog attention, state-space scans, KV-cache eviction, patching. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import keylessAttention from './keyless-attention.js';
import dlaAttention from './dla-attention.js';
import klaUpdate from './kla-update.js';
import aimcAttend from './aimc-attend.js';
import ssmScan from './ssm-scan.js';
import nsaSimulate from './nsa-simulate.js';
import ringattnSimulate from './ringattn-simulate.js';
import mlaLatentCompress from './mla-latent-compress.js';
import goatTransport from './goat-transport.js';
import kvcacheH2oEvict from './kvcache-h2o-evict.js';
import ctxreadyUnroll from './ctxready-unroll.js';
import bltEntropyPatch from './blt-entropy-patch.js';
import inplacetttAdapt from './inplacettt-adapt.js';

export const KERNELS: readonly KernelDef[] = [keylessAttention, dlaAttention, klaUpdate, aimcAttend, ssmScan, nsaSimulate, ringattnSimulate, mlaLatentCompress, goatTransport, kvcacheH2oEvict, ctxreadyUnroll, bltEntropyPatch, inplacetttAdapt];
