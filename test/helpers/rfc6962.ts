/**
 * The RFC 6962 Merkle tree hash (section 2.1), written here from the RFC as the tests' own oracle
 * for the ledger's roots: recursive, slow and independent of src/lib/merkle.ts.
 */
import { createHash } from 'node:crypto';

export const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** MTH over leaves given as their data (here: node digests), each hashed with the 0x00 prefix. */
export function mth(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha();
  if (leaves.length === 1) return sha(Uint8Array.of(0), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha(Uint8Array.of(1), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}
