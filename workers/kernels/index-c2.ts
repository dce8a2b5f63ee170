/** Kernels of slice c2 (kernels-c.md §12–§23), in note order. Imported by workers/registry.ts. */
import type { KernelDef } from '../kernel-def.js';
import s3searchSearch from './s3search-search.js';
import goatTransport from './goat-transport.js';
import slidesparsePack from './slidesparse-pack.js';
import mlaLatentCompress from './mla-latent-compress.js';
import pfieldCoordinate from './pfield-coordinate.js';
import ternaryQuantize from './ternary-quantize.js';

export const SLICE: readonly KernelDef[] = [s3searchSearch, ternaryQuantize, goatTransport, mlaLatentCompress, pfieldCoordinate, slidesparsePack];
