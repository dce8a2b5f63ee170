/**
 * The ledger's node digests recomputed from the documented formula alone, not from src/ledger:
 * d_i = SHA-256("svc.khipu.node.v1\n" ‖ uint64_be(i) ‖ d_(i−1) ‖ pae_sha256_i), d_(−1) = 0³².
 */
import { createHash } from 'node:crypto';

export function referenceNodeDigest(index: number, prev: Uint8Array, paeSha256: Uint8Array): Buffer {
  const u64 = Buffer.alloc(8);
  u64.writeBigUInt64BE(BigInt(index));
  return createHash('sha256').update('svc.khipu.node.v1\n').update(u64).update(prev).update(paeSha256).digest();
}

/** The digests of a chain of nodes with these PAE digests, from index 0. */
export function referenceChain(paes: readonly { paeSha256: Uint8Array }[]): Buffer[] {
  const out: Buffer[] = [];
  paes.forEach((p, i) => out.push(referenceNodeDigest(i, out[i - 1] ?? Buffer.alloc(32), p.paeSha256)));
  return out;
}
