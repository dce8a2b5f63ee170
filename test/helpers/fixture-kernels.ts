/** Test apps that serve the fixture kernel too: `buildTestApp(overrides, { kernels: FIXTURE_APP })`. */
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import type { KernelDocs } from '../../src/kernels/kernel-docs.js';
import { kernelExample } from '../../src/kernels/kernel-examples.js';
import { kernelOutputSchemas } from '../../src/kernels/kernel-output-schemas.js';
import { FIXTURE_KERNELS } from '../fixtures/kernels/registry.js';

/** The fixture registry and the kernel worker that runs it (the production host over that registry). */
export const FIXTURE_APP = { registry: FIXTURE_KERNELS, worker: new URL('../fixtures/kernels/worker.ts', import.meta.url) };

/** The fixture kernel's file, as `npm run kernels:schemas` would find a kernel's under workers/kernels/. */
export const FIXTURE_KERNEL_FILE = join(projectRoot(), 'test', 'fixtures', 'kernels', 'dice-tally.ts');

/**
 * What `npm run kernels:schemas` writes for a kernel, computed by the same functions for the fixture
 * kernel (its file read by the TypeScript checker, its example run in process): a few seconds, so
 * only the test that documents the fixture asks for it.
 */
export function fixtureKernelDocs(): KernelDocs {
  const fixture = FIXTURE_KERNELS.get('fixture/dice-tally')!;
  return { schemas: kernelOutputSchemas(projectRoot(), [FIXTURE_KERNEL_FILE]), examples: { [fixture.id]: kernelExample(fixture, FIXTURE_KERNELS) } };
}
