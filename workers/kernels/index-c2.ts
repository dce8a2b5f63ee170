/** Kernels of slice c2 (kernels-c.md §12–§23), in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import genieRollout from './genie-rollout.js';
import inplacetttAdapt from './inplacettt-adapt.js';
import matgranTruncate from './matgran-truncate.js';
import nsaSimulate from './nsa-simulate.js';
import s3searchSearch from './s3search-search.js';
import ternaryQuantize from './ternary-quantize.js';
import dllmDenoise from './dllm-denoise.js';
import goatTransport from './goat-transport.js';
import interpretabilityFeatures from './interpretability-features.js';
import mlaLatentCompress from './mla-latent-compress.js';
import pfieldCoordinate from './pfield-coordinate.js';
import slidesparsePack from './slidesparse-pack.js';

export const SLICE: readonly KernelDef[] = [
  genieRollout,
  inplacetttAdapt,
  matgranTruncate,
  nsaSimulate,
  s3searchSearch,
  ternaryQuantize,
  dllmDenoise,
  goatTransport,
  interpretabilityFeatures,
  mlaLatentCompress,
  pfieldCoordinate,
  slidesparsePack,
];
