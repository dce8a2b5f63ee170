/**
 * The contract every kernel fulfils. A kernel is a pure, synchronous function of its validated
 * parameters and a seeded PRNG; the main thread uses the same definition to register the route
 * and validate, the worker host uses it to execute.
 */
import type { ObjectSchema } from 'joi';
import { Joi, seed, type Schema } from '../src/lib/params.js';
import type { RngStreams } from '../src/lib/prng.js';
import { KERNEL_DOCS, SEED_DOC } from './kernel-docs.js';

/** A cross-parameter rule that failed; becomes a 422 `value_error` naming `param`. */
export interface ConstraintViolation {
  param: string;
  msg: string;
}

export interface KernelOutput {
  /** Kernel-specific fields. */
  result: Record<string, unknown>;
  /** The kernel's own residuals for its invariants. Informative only; tests recompute. */
  checks?: Record<string, unknown>;
  /** Fixed internal sizes and hyper-parameters the computation used. */
  constants?: Record<string, unknown>;
}

export interface KernelDef<P extends Record<string, unknown> = Record<string, any>> {
  /** Route id below the API prefix, e.g. `ssm/scan`; also the PRNG stream prefix. */
  id: string;
  /** Bumped whenever the same parameters would give a different body. */
  version: number;
  /**
   * Fields of `result` (dotted paths) that are diagnostics, not answers: rounding-level gaps between
   * two computations inside the kernel, or values with no unique correct answer. Each with the reason;
   * the body lists them under `informative` so a client knows which numbers the tests do not recompute.
   */
  informative?: Readonly<Record<string, string>>;
  /** `query`: parameters are query keys. `request`: they live in the JSON `request` query value (design 3). */
  input: 'query' | 'request';
  /** One-line description for README and OpenAPI. */
  summary: string;
  /** Short name of the technique. */
  technique: string;
  /** arXiv ids, RFCs or DOIs of the technique. */
  references: string[];
  /** One sentence: what is real (the algorithm) and what is synthetic (the data). */
  honesty: string;
  /** Parameter schemas in the order of the kernel note's table, without `seed` (added for every kernel). */
  params: Record<string, Schema>;
  /** Cross-parameter rules, checked on the main thread after the per-key schemas pass. */
  constraints?(params: P): ConstraintViolation[];
  /** The in-bounds parameter set that costs the most (bench and the budget test run it). */
  worstCase: Record<string, unknown>;
  run(params: P, rng: RngStreams): KernelOutput;
}

export function defineKernel<P extends Record<string, unknown>>(def: KernelDef<P>): KernelDef<P> {
  return def;
}

/** The kernel's route, relative to the API prefix (mounted under it like every API route). */
export function kernelPath(def: KernelDef): string {
  return `/${def.id}`;
}

const paramsSchemas = new WeakMap<KernelDef, ObjectSchema>();

/**
 * The full parameter schema of a kernel: `seed` first, then its own keys; unknown keys are refused.
 * Each key carries its description from kernel-docs.ts (and any documentation-only JSON Schema
 * keyword). Built once per kernel.
 */
export function kernelParamsSchema(def: KernelDef): ObjectSchema {
  const cached = paramsSchemas.get(def);
  if (cached) return cached;
  const docs = KERNEL_DOCS[def.id];
  const keys: Record<string, Schema> = { seed: seed().description(SEED_DOC) };
  for (const [k, s] of Object.entries(def.params)) {
    let d = s;
    const text = docs?.params[k];
    if (text) d = d.description(text);
    const keywords = docs?.keywords?.[k];
    if (keywords) d = d.meta({ jsonSchema: keywords });
    keys[k] = d;
  }
  const schema: ObjectSchema = Joi.object(keys).unknown(false);
  paramsSchemas.set(def, schema);
  return schema;
}

/** Effective params in declaration order, so the same query always serialises to the same bytes. */
export function orderParams(def: KernelDef, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { seed: value.seed };
  for (const key of Object.keys(def.params)) out[key] = value[key];
  return out;
}
