/**
 * An append-only RFC 9162 Merkle log over 32-byte leaves that caches every complete subtree hash
 * level by level: append is O(log n) amortised, the root O(log n), and inclusion/consistency
 * proofs O(log² n) — the SSE flight keeps appending, so no request may rehash the whole tree.
 */
import { EMPTY_ROOT, leafHash, nodeHash, splitPoint } from '../lib/merkle.js';
import { HashColumn } from './columns.js';

export class MerkleLog {
  /** levels[k][j] = MTH of leaves [j·2^k, (j+1)·2^k); level 0 holds the leaf hashes (packed). */
  private readonly levels: HashColumn[] = [new HashColumn()];
  /** The current root, computed once per size (it is read several times per request). */
  private cachedRoot: { size: number; hash: Buffer } | null = null;
  /**
   * Hashes of the incomplete subtrees along the right edge of the current tree, MTH(D[lo:size]) by
   * lo: every inclusion proof against the current size needs some of them, and the answers of one
   * group commit (all proved against the same size) share them. Dropped when the tree grows.
   */
  private edge: { size: number; byLo: Map<number, Buffer> } = { size: 0, byLo: new Map() };

  get size(): number {
    return this.levels[0]!.length;
  }

  append(leafData: Uint8Array): void {
    let h = leafHash(leafData);
    let k = 0;
    this.levels[0]!.push(h);
    // a completed pair at level k becomes a node at level k+1
    while (this.levels[k]!.length % 2 === 0) {
      const lvl = this.levels[k]!;
      h = nodeHash(lvl.get(lvl.length - 2), lvl.get(lvl.length - 1));
      k++;
      (this.levels[k] ??= new HashColumn()).push(h);
    }
  }

  leaf(index: number): Buffer {
    return this.levels[0]!.get(index);
  }

  /** MTH(D[lo:hi]) using cached perfect subtrees. */
  rangeHash(lo: number, hi: number): Buffer {
    const n = hi - lo;
    if (n === 0) return EMPTY_ROOT;
    if ((n & (n - 1)) === 0 && lo % n === 0) {
      const k = Math.log2(n);
      const level = this.levels[k];
      if (level && lo / n < level.length) return level.get(lo / n);
    }
    if (n === 1) return this.levels[0]!.get(lo);
    const onEdge = hi === this.size;
    if (onEdge) {
      if (this.edge.size !== hi) this.edge = { size: hi, byLo: new Map() };
      const known = this.edge.byLo.get(lo);
      if (known) return known;
    }
    const k = splitPoint(n);
    const hash = nodeHash(this.rangeHash(lo, lo + k), this.rangeHash(lo + k, hi));
    if (onEdge) this.edge.byLo.set(lo, hash);
    return hash;
  }

  root(size = this.size): Buffer {
    if (size !== this.size) return this.rangeHash(0, size);
    if (this.cachedRoot?.size !== size) this.cachedRoot = { size, hash: this.rangeHash(0, size) };
    return this.cachedRoot.hash;
  }

  /** Audit path for leaf `index` in the tree of the first `size` leaves (RFC 9162 §2.1.3.1). */
  inclusionProof(index: number, size = this.size): Buffer[] {
    if (index < 0 || index >= size || size > this.size) throw new RangeError(`leaf ${index} outside tree of size ${size}`);
    const path: Buffer[] = [];
    const walk = (m: number, lo: number, hi: number): void => {
      const n = hi - lo;
      if (n === 1) return;
      const k = splitPoint(n);
      if (m < k) {
        walk(m, lo, lo + k);
        path.push(this.rangeHash(lo + k, hi));
      } else {
        walk(m - k, lo + k, hi);
        path.push(this.rangeHash(lo, lo + k));
      }
    };
    walk(index, 0, size);
    return path;
  }

  /** Proof that the tree of size `m` is a prefix of the tree of size `n` (RFC 9162 §2.1.4.1). */
  consistencyProof(m: number, n = this.size): Buffer[] {
    if (m < 1 || m > n || n > this.size) throw new RangeError(`sizes ${m} -> ${n} invalid for a tree of ${this.size}`);
    const path: Buffer[] = [];
    const sub = (mm: number, lo: number, hi: number, complete: boolean): void => {
      const len = hi - lo;
      if (mm === len) {
        if (!complete) path.push(this.rangeHash(lo, hi));
        return;
      }
      const k = splitPoint(len);
      if (mm <= k) {
        sub(mm, lo, lo + k, complete);
        path.push(this.rangeHash(lo + k, hi));
      } else {
        sub(mm - k, lo + k, hi, false);
        path.push(this.rangeHash(lo, lo + k));
      }
    };
    sub(m, 0, n, true);
    return path;
  }
}
