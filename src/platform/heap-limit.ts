/**
 * V8 bounds how far a heap may grow between full collections by the heap's limit
 * (`HeapController::MaxGrowingFactor`, src/heap/heap-controller.cc): up to 4x once the old
 * generation may reach 2048 MB on Node's 64-bit builds, 1.3-2x below that. Node sets the main
 * thread's limit from the machine's (or the container's) memory, so on a small machine the main
 * thread collects its old space several times as often under load: with a 512 MB limit, four to
 * eight times the full collections, and up to twice the p99 latency of verdicts and kernel calls. A
 * flag fixes it only at start-up, so the service can only say so. Worker threads have their own cap
 * (pool.maxOldGenerationSizeMb, 2048 by default).
 */
import { getHeapStatistics } from 'node:v8';

/** The least old-generation limit at which V8 lets a heap grow 4x between full collections. */
export const FULL_GROWTH_HEAP_MB = 2048;

/** The main thread's heap limit in MB: old generation plus the young generation's reservation. */
export function heapLimitMb(): number {
  return getHeapStatistics().heap_size_limit / 2 ** 20;
}

/**
 * Why the main thread's heap limit slows it, or null. The limit V8 reports includes the young
 * generation, so a limit under 2048 MB always means the slower regime (a limit a little above it
 * may too; that case is left quiet rather than guessed).
 */
export function heapLimitAdvice(limitMb: number): string | null {
  if (limitMb >= FULL_GROWTH_HEAP_MB) return null;
  return `main-thread heap limit ${Math.round(limitMb)} MB: under ${FULL_GROWTH_HEAP_MB} MB V8 runs full collections several times as often under load (at 512 MB: 4-8x as many, up to twice the p99 latency); where the memory is there, launch with NODE_OPTIONS=--max-old-space-size=${FULL_GROWTH_HEAP_MB}`;
}
