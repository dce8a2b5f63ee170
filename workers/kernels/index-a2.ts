/** Kernels of slice a2, in the order of their kernel note. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import nvfp4Quantize from './nvfp4-quantize.js';
import specexecTree from './specexec-tree.js';
import muonOrthogonalize from './muon-orthogonalize.js';
import ccAttestInfo from './cc-attest-info.js';
import sementInfo from './sement-info.js';
import flowerGraph from './flower-graph.js';
import ccAttestVerify from './cc-attest-verify.js';
import sementEstimate from './sement-estimate.js';

export const SLICE: readonly KernelDef[] = [
  nvfp4Quantize,
  specexecTree,
  muonOrthogonalize,
  ccAttestInfo,
  sementInfo,
  flowerGraph,
  ccAttestVerify,
  sementEstimate,
];
