/** Kernels of slice b2 (kernels-b.md §11–§21), in the order of their kernel note. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import agentcohSync from './agentcoh-sync.js';
import elfFlow from './elf-flow.js';
import graphmemTraverse from './graphmem-traverse.js';
import kanFit from './kan-fit.js';
import moeRoute from './moe-route.js';
import qhallQuantify from './qhall-quantify.js';
import titansRecall from './titans-recall.js';
import aimcAttend from './aimc-attend.js';
import flowmatchSample from './flowmatch-sample.js';
import grpoRewardDynamics from './grpo-reward-dynamics.js';
import klaUpdate from './kla-update.js';

export const SLICE: readonly KernelDef[] = [
  agentcohSync,
  elfFlow,
  graphmemTraverse,
  kanFit,
  moeRoute,
  qhallQuantify,
  titansRecall,
  aimcAttend,
  flowmatchSample,
  grpoRewardDynamics,
  klaUpdate,
];
