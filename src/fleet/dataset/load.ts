/**
 * Loads the committed dataset at start-up, by path from the project root (the build compiles
 * src/**\/*.ts only, so the JSON is read from the source tree, never imported), and refuses a file
 * whose content no longer matches the SHA-256 recorded in it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../config/load.js';
import { datasetSha256 } from './generate.js';
import type { FleetDataset } from './types.js';
import { ServiceError } from '../../lib/service-error.js';

export function datasetPath(): string {
  return join(projectRoot(), 'src', 'fleet', 'dataset', 'fleet-dataset.json');
}

export class DatasetIntegrityError extends ServiceError {
  readonly code = 'SVC_DATASET_INTEGRITY';
}

export function loadDataset(path = datasetPath()): FleetDataset {
  const dataset = JSON.parse(readFileSync(path, 'utf8')) as FleetDataset;
  const actual = datasetSha256(dataset);
  if (actual !== dataset.sha256) throw new DatasetIntegrityError(`fleet dataset ${path}: sha256 ${actual} does not match the recorded ${dataset.sha256}`);
  return dataset;
}
