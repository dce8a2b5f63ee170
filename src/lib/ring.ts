/** Fixed-size ring buffer; oldest entries are overwritten. */
export class Ring<T> {
  private readonly items: T[] = [];
  private next = 0;
  total = 0;

  constructor(readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    this.total++;
  }

  /** Oldest first. */
  toArray(): T[] {
    return this.items.length < this.capacity ? [...this.items] : [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }

  get size(): number {
    return this.items.length;
  }
}
