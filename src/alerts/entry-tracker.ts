/**
 * Edge-triggered zone entries: a target raises an entry for a zone when it is seen inside it and
 * was not inside (or not known) at its previous sighting; staying inside raises nothing, and a
 * re-entry raises again only once the last entry for that target and zone is `debounceMs` old.
 * Both maps are bounded: the least recently seen targets are forgotten first.
 */

/** A Map that forgets its least recently set keys beyond `capacity`. */
class BoundedMap<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.map.get(key);
  }

  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  delete(key: string): void {
    this.map.delete(key);
  }
}

/** Targets (and target–zone pairs) remembered at most. */
export const TRACKED_MAX = 20_000;

export class EntryTracker {
  private readonly inside = new BoundedMap<ReadonlySet<string>>(TRACKED_MAX);
  private readonly lastEntry = new BoundedMap<number>(TRACKED_MAX);

  constructor(private readonly debounceMs: number) {}

  /**
   * Records that `target` is inside `zones` at `atMs` and returns the zones it has just entered
   * (not inside at its previous sighting, and past the debounce).
   */
  observe(target: string, zones: readonly string[], atMs: number): string[] {
    const before = this.inside.get(target);
    const now = new Set(zones);
    // a target seen outside every zone is remembered too, so its next entry is an edge
    this.inside.set(target, now);
    const entered: string[] = [];
    for (const z of now) {
      if (before?.has(z)) continue;
      const key = `${target}\u0000${z}`;
      const last = this.lastEntry.get(key);
      if (last !== undefined && atMs - last < this.debounceMs) continue;
      entered.push(z);
    }
    return entered;
  }

  /** Marks an entry as alerted: the debounce of a re-entry counts from here. */
  alerted(target: string, zone: string, atMs: number): void {
    this.lastEntry.set(`${target}\u0000${zone}`, atMs);
  }

  /** Forgets that `target` is inside `zone` (its alert could not be recorded), so its next sighting inside is an entry again. */
  forget(target: string, zone: string): void {
    const z = this.inside.get(target);
    if (!z?.has(zone)) return;
    const rest = new Set(z);
    rest.delete(zone);
    this.inside.set(target, rest);
  }

  /** Forgets every target not in `seen` (an aircraft absent from a snapshot is unknown at its next one). */
  keepOnly(targets: readonly string[], seen: ReadonlySet<string>): void {
    for (const t of targets) if (!seen.has(t)) this.inside.delete(t);
  }
}
