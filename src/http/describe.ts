/**
 * joi's `describe()`, computed once per schema. It is costly (joi validates every description it
 * builds against its own manifest schema: ~1 ms for a kernel's schema), and views that walk the
 * route table (attack surface, posture, OpenAPI) called it for every route on every request, which
 * blocked the loop for over 100 ms. Schemas are immutable, so a description never goes stale.
 */
import type { Description, Schema } from 'joi';
import { inSlices } from '../core/slices.js';

const cache = new WeakMap<Schema, Description>();

export function described(schema: Schema): Description {
  let d = cache.get(schema);
  if (!d) cache.set(schema, (d = schema.describe()));
  return d;
}

/**
 * Describes every schema of a route table ahead of use, one schema per step with the loop free
 * between slices (the largest schema took ~25 ms cold), so start-up warms the cache without one
 * long block and no request pays for it on the loop.
 */
export function describeInSlices(schemas: Iterable<Schema>, stop?: () => boolean): Promise<void> {
  return inSlices(schemas, (schema) => void described(schema), stop);
}
