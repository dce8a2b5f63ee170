/**
 * Results of a pure function of a short string key, kept for the most recently used keys: a
 * repeated query (a client calling a kernel at its defaults) skips the work, and a client sending
 * endless distinct keys costs at most `capacity` entries of keys up to `maxKeyLength` characters.
 */
export class RecentMemo<V> {
  private readonly map = new Map<string, V>();

  constructor(
    private readonly capacity: number,
    private readonly maxKeyLength: number,
  ) {}

  /** The value for `key`, computed at most once while it stays recent; a throw is not kept. */
  get(key: string, compute: () => V): V {
    if (key.length > this.maxKeyLength) return compute();
    const hit = this.map.get(key);
    if (hit !== undefined) {
      // most recently used last: eviction takes the first key
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const value = compute();
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
    return value;
  }

  get size(): number {
    return this.map.size;
  }
}
