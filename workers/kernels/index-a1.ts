/** Kernels of slice a1, in the order of their kernel note. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import herotqQuantize from './herotq-quantize.js';
import gitthoughtsTree from './gitthoughts-tree.js';
import keylessAttention from './keyless-attention.js';
import operaReward from './opera-reward.js';
import ctxreadyUnroll from './ctxready-unroll.js';
import dlaAttention from './dla-attention.js';

export const SLICE: readonly KernelDef[] = [herotqQuantize, gitthoughtsTree, keylessAttention, operaReward, ctxreadyUnroll, dlaAttention];
