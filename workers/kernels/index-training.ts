/** Training, optimisation, generative sampling and model probing. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import muonOrthogonalize from './muon-orthogonalize.js';
import kanFit from './kan-fit.js';
import flowmatchSample from './flowmatch-sample.js';
import elfFlow from './elf-flow.js';
import dllmDenoise from './dllm-denoise.js';
import grpoRewardDynamics from './grpo-reward-dynamics.js';
import operaReward from './opera-reward.js';
import nestedSchedule from './nested-schedule.js';
import interpretabilityFeatures from './interpretability-features.js';
import steeringSweep from './steering-sweep.js';

export const KERNELS: readonly KernelDef[] = [muonOrthogonalize, kanFit, flowmatchSample, elfFlow, dllmDenoise, grpoRewardDynamics, operaReward, nestedSchedule, interpretabilityFeatures, steeringSweep];
