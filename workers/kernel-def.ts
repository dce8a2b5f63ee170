/**
 * The contract every kernel fulfils. A kernel is a pure, synchronous function of its validated
 * parameters and a seeded PRNG; the main thread uses the same definition to register the route,
 * validate and document it, the worker host uses it to execute. Everything a client reads about a
 * kernel (parameter descriptions, cross-parameter rules, summary) is declared here, in its file.
 */
import type { ObjectSchema } from 'joi';
import { Joi, seed, type Schema, type ValueOf } from '../src/lib/params.js';
import type { RngStreams } from '../src/lib/prng.js';

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

/** A kernel's own parameter schemas by name (`seed` is added for every kernel). */
export type ParamSchemas = Record<string, Schema>;

/** The validated parameters a kernel's schemas give its `run`: `seed`, then each key's value type. */
export type ParamValues<S extends ParamSchemas> = { seed: number } & { [K in keyof S]: ValueOf<S[K]> };

export const SEED_DOC = 'PRNG seed (uint32): every random ingredient is drawn from named streams of it, so the same seed and parameters give byte-identical bodies';

/**
 * `R` is the literal shape `run` returns, inferred by `defineKernel`: `npm run kernels:schemas`
 * (src/kernels/write-kernel-docs.ts) reads it with the TypeScript compiler to write the JSON Schemas of `result`, `checks` and `constants`.
 */
export interface KernelDef<P extends Record<string, unknown> = Record<string, any>, S extends ParamSchemas = ParamSchemas, R extends KernelOutput = KernelOutput> {
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
  /** `query`: parameters are query keys. `request`: they live in the JSON of the route's one `request` value. */
  input: 'query' | 'request';
  /** One-line description for README and OpenAPI. */
  summary: string;
  /** Short name of the technique. */
  technique: string;
  /** arXiv ids, RFCs or DOIs of the technique. */
  references: string[];
  /** One sentence: what is real (the algorithm) and what is synthetic (the data). */
  honesty: string;
  /**
   * Parameter schemas in the order of the kernel note's table, without `seed` (added for every
   * kernel). Each carries its `.description()` (OpenAPI appends bounds and default) and, for a rule
   * on one parameter that `constraints` checks, documentation-only JSON Schema keywords in
   * `.meta({ jsonSchema })`. Their value types are the types `run` and `constraints` receive.
   */
  params: S;
  /** Cross-parameter rules, checked on the main thread after the per-key schemas pass. */
  constraints?(params: P): ConstraintViolation[];
  /** The messages `constraints` can return, verbatim: the route's description lists them. Required with `constraints`. */
  rules?: readonly string[];
  /** The in-bounds parameter set that costs the most (bench and the budget test run it). */
  worstCase: Record<string, unknown>;
  run(params: P, rng: RngStreams): R;
}

/** A kernel whose parameter types and output shape are inferred from its `params` schemas and `run` (no type argument to write). */
export function defineKernel<S extends ParamSchemas, R extends KernelOutput>(def: KernelDef<NoInfer<ParamValues<S>>, S, R>): KernelDef<ParamValues<S>, S, R> {
  return def;
}

/** The kernel's route, relative to the API prefix (mounted under it like every API route). */
export function kernelPath(def: KernelDef): string {
  return `/${def.id}`;
}

const paramsSchemas = new WeakMap<KernelDef, ObjectSchema>();

/** The full parameter schema of a kernel: `seed` first, then its own keys; unknown keys are refused. Built once per kernel. */
export function kernelParamsSchema(def: KernelDef): ObjectSchema {
  const cached = paramsSchemas.get(def);
  if (cached) return cached;
  const schema: ObjectSchema = Joi.object({ seed: seed().description(SEED_DOC), ...def.params }).unknown(false);
  paramsSchemas.set(def, schema);
  return schema;
}

/** Effective params in declaration order, so the same query always serialises to the same bytes. */
export function orderParams(def: KernelDef, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { seed: value.seed };
  for (const key of Object.keys(def.params)) out[key] = value[key];
  return out;
}
