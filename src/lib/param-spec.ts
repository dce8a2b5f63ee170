/**
 * How a kernel declares its parameters: plain data, so a worker thread holds its kernels without
 * loading a validation library (joi is ~150 ms of CPU at every thread's start; bench/README.md,
 * "Starting an app"). The main thread compiles each declaration into its joi schema
 * (`compileParam` in params.ts), which parses and bounds the value; a worker needs only the
 * defaults (warm-up, `defaultParams` in workers/kernel-def.ts).
 */
import type { Schema, StrictJoi } from './params.js';

export type ParamSpec =
  | { readonly kind: 'int'; readonly min: number; readonly max: number; readonly default: number }
  | { readonly kind: 'num'; readonly min: number; readonly max: number; readonly default: number }
  | { readonly kind: 'bool'; readonly default: boolean }
  | { readonly kind: 'str'; readonly maxLen: number; readonly default: string }
  /** Any other joi schema, built on the main thread; its default is stated here too (checked when compiled). */
  | { readonly kind: 'joi'; readonly default: unknown; readonly build: (joi: StrictJoi) => Schema };

/** Integer parameter in [min, max] with a default. */
export const int = (min: number, max: number, dflt: number): ParamSpec => ({ kind: 'int', min, max, default: dflt });

/** Finite number parameter in [min, max] with a default. */
export const num = (min: number, max: number, dflt: number): ParamSpec => ({ kind: 'num', min, max, default: dflt });

export const bool = (dflt: boolean): ParamSpec => ({ kind: 'bool', default: dflt });

/** String parameter of 0..maxLen characters with a default. */
export const str = (maxLen: number, dflt: string): ParamSpec => ({ kind: 'str', maxLen, default: dflt });

/** A parameter the four kinds above do not describe (a choice, a list, a pattern): `dflt` is its default, undefined for none. */
export const joi = (dflt: unknown, build: (joi: StrictJoi) => Schema): ParamSpec => ({ kind: 'joi', default: dflt, build });

/** The seed every kernel takes: uint32, default 42 (maps one-to-one onto the PRNG state). */
export const SEED_MAX = 4294967295;
export const seedSpec = (): ParamSpec => int(0, SEED_MAX, 42);
