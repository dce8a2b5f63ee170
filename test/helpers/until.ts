/** Waits for a condition, never for a fixed time: polls `probe` until it returns a value, or fails naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, wait));
  }
}

/**
 * How long to wait for work in a thread at the lowest priority (the background fsck, key-index
 * merges): on a loaded machine every other runnable thread goes first, and it may get well under
 * 1 % of a core, so only a wait this long tells "slow" from "never".
 */
export const LOWEST_PRIORITY_MS = 300_000;
