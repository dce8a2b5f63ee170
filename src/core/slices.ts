/**
 * Start-up work done in slices: a loop over items that gives the event loop back (setImmediate)
 * whenever it has run for SLICE_MS, so precomputing a view never becomes one long main-thread task
 * (over ~50 ms, the long-task threshold, every other request waits) and requests keep being served
 * meanwhile.
 */

/** Longest stretch of work in one turn of the loop before yielding. */
export const SLICE_MS = 5;

export const yieldLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `step` for every item, yielding between items once a slice has lasted `sliceMs`; stops early when `stop()` says so. */
export async function inSlices<T>(items: Iterable<T>, step: (item: T) => void, stop: () => boolean = () => false, sliceMs = SLICE_MS): Promise<void> {
  let sliceStart = performance.now();
  for (const item of items) {
    if (stop()) return;
    if (performance.now() - sliceStart > sliceMs) {
      await yieldLoop();
      sliceStart = performance.now();
    }
    step(item);
  }
}
