/**
 * RFC 9162 §2.1 Merkle tree hash with inclusion and consistency proofs. Shared by the ledger
 * (main thread) and the manifest kernel. Leaf hash SHA-256(0x00‖d), node hash SHA-256(0x01‖l‖r),
 * split at the largest power of two strictly below n, empty tree = SHA-256("").
 */
import { createHash, hash } from 'node:crypto';

const LEAF = 0x00;
const NODE = 0x01;

// prefix and data in one buffer, hashed in one call: no Hash object per hash (the ledger hashes
// a leaf and about one node per append, and the proofs of every verdict answer)
export function leafHash(data: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(1 + data.byteLength);
  buf[0] = LEAF;
  buf.set(data, 1);
  return hash('sha256', buf, 'buffer');
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const buf = Buffer.allocUnsafe(1 + left.byteLength + right.byteLength);
  buf[0] = NODE;
  buf.set(left, 1);
  buf.set(right, 1 + left.byteLength);
  return hash('sha256', buf, 'buffer');
}

export const EMPTY_ROOT: Buffer = createHash('sha256').digest();

/** Largest power of two strictly smaller than n (n >= 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH over already-hashed leaves. */
export function rootFromLeafHashes(leaves: readonly Uint8Array[], lo = 0, hi = leaves.length): Buffer {
  const n = hi - lo;
  if (n === 0) return EMPTY_ROOT;
  if (n === 1) return Buffer.from(leaves[lo]!);
  const k = splitPoint(n);
  return nodeHash(rootFromLeafHashes(leaves, lo, lo + k), rootFromLeafHashes(leaves, lo + k, hi));
}

export function merkleRoot(data: readonly Uint8Array[]): Buffer {
  return rootFromLeafHashes(data.map(leafHash));
}

/** PATH(m, D[n]) over leaf hashes (RFC 9162 §2.1.3.1). */
export function inclusionProof(leaves: readonly Uint8Array[], index: number, lo = 0, hi = leaves.length): Buffer[] {
  const n = hi - lo;
  if (index < 0 || index >= n) throw new RangeError(`leaf ${index} outside tree of size ${n}`);
  if (n === 1) return [];
  const k = splitPoint(n);
  if (index < k) return [...inclusionProof(leaves, index, lo, lo + k), rootFromLeafHashes(leaves, lo + k, hi)];
  return [...inclusionProof(leaves, index - k, lo + k, hi), rootFromLeafHashes(leaves, lo, lo + k)];
}

/** RFC 9162 §2.1.3.2 verification of an inclusion proof. */
export function verifyInclusion(leaf: Uint8Array, index: number, size: number, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(Buffer.from(root));
}

/** PROOF(m, D[n]) over leaf hashes (RFC 9162 §2.1.4.1). */
export function consistencyProof(leaves: readonly Uint8Array[], m: number): Buffer[] {
  const n = leaves.length;
  if (m < 1 || m > n) throw new RangeError(`old size ${m} outside 1..${n}`);
  return subproof(leaves, m, 0, n, true);
}

function subproof(leaves: readonly Uint8Array[], m: number, lo: number, hi: number, complete: boolean): Buffer[] {
  const n = hi - lo;
  if (m === n) return complete ? [] : [rootFromLeafHashes(leaves, lo, hi)];
  const k = splitPoint(n);
  if (m <= k) return [...subproof(leaves, m, lo, lo + k, complete), rootFromLeafHashes(leaves, lo + k, hi)];
  return [...subproof(leaves, m - k, lo + k, hi, false), rootFromLeafHashes(leaves, lo, lo + k)];
}

/** RFC 9162 §2.1.4.2 verification of a consistency proof between sizes m <= n. */
export function verifyConsistency(m: number, n: number, oldRoot: Uint8Array, newRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (m < 1 || m > n) return false;
  if (m === n) return proof.length === 0 && Buffer.from(oldRoot).equals(Buffer.from(newRoot));
  let path = proof.map((p) => Buffer.from(p));
  // when m is a power of two the old root itself is the first node of the path
  if ((m & (m - 1)) === 0) path = [Buffer.from(oldRoot), ...path];
  if (path.length === 0) return false;
  let fn = m - 1;
  let sn = n - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr: Buffer = path[0]!;
  let sr: Buffer = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(Buffer.from(oldRoot)) && sr.equals(Buffer.from(newRoot));
}
