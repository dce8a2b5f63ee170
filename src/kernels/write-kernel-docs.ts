/**
 * `npm run kernels:schemas`: writes src/kernels/result-schemas.json (each kernel's `result`,
 * `checks` and `constants` as JSON Schema, from the return type of its `run`) and
 * src/kernels/kernel-examples.json (each kernel's request and body at its defaults).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../config/load.js';
import { REGISTRY } from '../../workers/registry.js';
import { KERNEL_EXAMPLES_FILE, RESULT_SCHEMAS_FILE } from './kernel-docs.js';
import { renderResultSchemas } from './kernel-output-schemas.js';
import { renderKernelExamples } from './kernel-examples.js';

const root = projectRoot();
let started = performance.now();
writeFileSync(join(root, RESULT_SCHEMAS_FILE), renderResultSchemas(root, REGISTRY.kernels));
console.log(`${RESULT_SCHEMAS_FILE}: ${REGISTRY.kernels.length} kernels in ${Math.round(performance.now() - started)} ms`);
started = performance.now();
writeFileSync(join(root, KERNEL_EXAMPLES_FILE), renderKernelExamples(REGISTRY.kernels));
console.log(`${KERNEL_EXAMPLES_FILE}: ${REGISTRY.kernels.length} kernels in ${Math.round(performance.now() - started)} ms`);
