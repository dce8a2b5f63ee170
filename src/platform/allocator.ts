/**
 * glibc's allocator gives a worker thread's freed memory back to the kernel at once unless
 * MALLOC_TOP_PAD_ asks it to keep some, and a kernel that allocates megabytes per call then faults
 * them in again on every call (2x slower for /blt/entropy-patch). glibc reads the variable when the
 * process starts, so the service can only say so: `npm start` and the Procfile set it, another
 * launcher may not.
 */
export interface AllocatorFacts {
  env: NodeJS.ProcessEnv;
  /** `process.report.getReport().header.glibcVersionRuntime`: absent on musl and off Linux. */
  glibc: string | undefined;
}

export function allocatorFacts(): AllocatorFacts {
  const header = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header;
  return { env: process.env, glibc: header?.glibcVersionRuntime };
}

/** Why the allocator is not tuned, or null when it is (or is not glibc's). */
export function allocatorAdvice({ env, glibc }: AllocatorFacts): string | null {
  if (glibc === undefined) return null;
  if (env.MALLOC_TOP_PAD_ !== undefined || /glibc\.malloc\.top_pad=/.test(env.GLIBC_TUNABLES ?? '')) return null;
  return `glibc ${glibc} without MALLOC_TOP_PAD_: kernels that allocate megabytes per call run up to 2x slower in worker threads; launch with MALLOC_TOP_PAD_=33554432 as npm start and the Procfile do`;
}
