/**
 * Describes every schema of a route table ahead of use, one schema per step with the loop free
 * between slices (the largest schema took ~25 ms cold; joi validates every description it builds
 * against its own manifest), so start-up warms schema-walk's cache without one long block and no
 * request pays for it on the loop.
 */
import type { Schema } from 'joi';
import { inSlices } from '../core/slices.js';
import { described } from './schema-walk.js';

export function describeInSlices(schemas: Iterable<Schema>, stop?: () => boolean): Promise<void> {
  return inSlices(schemas, (schema) => void described(schema), stop);
}
