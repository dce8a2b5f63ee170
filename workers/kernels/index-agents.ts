/** Agents, memory and world models: retrieval, associative and episodic memory, coordination, latent rollouts. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import episodicRecall from './episodic-recall.js';
import graphmemTraverse from './graphmem-traverse.js';
import titansRecall from './titans-recall.js';
import agentcohSync from './agentcoh-sync.js';
import formalmathRetrieve from './formalmath-retrieve.js';
import pfieldCoordinate from './pfield-coordinate.js';
import genieRollout from './genie-rollout.js';
import worldmodelPredict from './worldmodel-predict.js';

export const KERNELS: readonly KernelDef[] = [episodicRecall, graphmemTraverse, titansRecall, agentcohSync, formalmathRetrieve, pfieldCoordinate, genieRollout, worldmodelPredict];
