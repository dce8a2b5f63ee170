/**
 * The generated documentation of each kernel (npm run kernels:schemas): the JSON Schemas of its
 * `result`, `checks` and `constants` read from its TypeScript declaration, and its example request
 * and body. Read from the committed JSON files once, on first use; a kernel without an entry (a
 * test's fixture kernel) has none there, and an app built with it is handed them as `KernelDocs`.
 */
import { join } from 'node:path';
import { projectJson } from '../config/load.js';
import type { KernelOutputSchemas } from './kernel-output-schemas.js';
import type { KernelExample } from './kernel-examples.js';

/**
 * Generated documentation of kernels the committed files do not hold, by id: what the same
 * generators give for a test's fixture kernel, handed to the app built with it.
 */
export interface KernelDocs {
  schemas: Readonly<Record<string, KernelOutputSchemas>>;
  examples: Readonly<Record<string, KernelExample>>;
}

export const RESULT_SCHEMAS_FILE = join('src', 'kernels', 'result-schemas.json');
export const KERNEL_EXAMPLES_FILE = join('src', 'kernels', 'kernel-examples.json');

let schemas: Readonly<Record<string, KernelOutputSchemas>> | undefined;
let examples: Readonly<Record<string, KernelExample>> | undefined;

export function kernelOutputSchemasOf(id: string): KernelOutputSchemas | undefined {
  schemas ??= projectJson<Record<string, KernelOutputSchemas>>(RESULT_SCHEMAS_FILE);
  return Object.hasOwn(schemas, id) ? schemas[id] : undefined;
}

export function kernelExampleOf(id: string): KernelExample | undefined {
  examples ??= projectJson<Record<string, KernelExample>>(KERNEL_EXAMPLES_FILE);
  return Object.hasOwn(examples, id) ? examples[id] : undefined;
}
