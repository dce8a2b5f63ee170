/** Test apps that serve the fixture kernel too: `buildTestApp(overrides, { kernels: FIXTURE_APP })`. */
import { FIXTURE_KERNELS } from '../fixtures/kernels/registry.js';

/** The fixture registry and the kernel worker that runs it (the production host over that registry). */
export const FIXTURE_APP = { registry: FIXTURE_KERNELS, worker: new URL('../fixtures/kernels/worker.ts', import.meta.url) };
