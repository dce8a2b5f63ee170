/**
 * Disjoint-set forest with path halving and union by size (Tarjan 1975; Tarjan & van Leeuwen
 * 1984): amortised O(α(n)) per operation. Shared by the Rips H0 persistence (Kruskal), the
 * track-association gating clusters and the union–find surface-code decoder (kernels-b 0.4).
 *
 * `union` reports which root survived and which was absorbed, so callers that keep per-cluster
 * data (parity, boundary flag, vertex lists) can merge it into the surviving root.
 */
export class UnionFind {
  readonly parent: Int32Array;
  readonly size: Int32Array;

  constructor(n: number) {
    this.parent = new Int32Array(n);
    this.size = new Int32Array(n);
    this.reset();
  }

  get length(): number {
    return this.parent.length;
  }

  /** Every element back in its own singleton set (reuses the buffers). */
  reset(): void {
    for (let i = 0; i < this.parent.length; i++) this.parent[i] = i;
    this.size.fill(1);
  }

  /** Root of x, halving the path on the way (every node on it points to its grandparent). */
  find(x: number): number {
    const parent = this.parent;
    while (parent[x]! !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  }

  connected(a: number, b: number): boolean {
    return this.find(a) === this.find(b);
  }

  /**
   * Merges the sets of a and b, the smaller under the larger (ties: b's root under a's root).
   * Returns null when they were already one set, else `{ root, absorbed }`.
   */
  union(a: number, b: number): { root: number; absorbed: number } | null {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return null;
    if (this.size[ra]! < this.size[rb]!) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.size[ra] = this.size[ra]! + this.size[rb]!;
    return { root: ra, absorbed: rb };
  }

  /** Size of the set holding x. */
  setSize(x: number): number {
    return this.size[this.find(x)]!;
  }

  /** Number of disjoint sets. */
  countSets(): number {
    let c = 0;
    for (let i = 0; i < this.parent.length; i++) if (this.parent[i] === i) c++;
    return c;
  }
}
