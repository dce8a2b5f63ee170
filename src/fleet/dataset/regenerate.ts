/**
 * Rewrites the committed dataset from the generator: `npx tsx src/fleet/dataset/regenerate.ts`.
 * Run it after changing generate.ts or activity.ts (bump DATASET_VERSION); the dataset test
 * fails until the file matches the generator again.
 */
import { writeFileSync } from 'node:fs';
import { generateDataset, serializeDataset } from './generate.js';
import { datasetPath } from './load.js';

const dataset = generateDataset();
writeFileSync(datasetPath(), serializeDataset(dataset));
process.stdout.write(`wrote ${datasetPath()} sha256=${dataset.sha256}\n`);
