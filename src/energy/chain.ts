/**
 * Every energy view is a link of one per-process hash chain, with exactly the formula of the
 * /energy/receipt kernel (workers/kernels/energy-receipt.ts): hash = hex SHA-256 of the RFC 8785
 * canonical JSON of the body, whose `receipt_link.prev_hash` names the previous link (genesis =
 * 64 zeros). A client passes any view's `hash` as `prev_hash` to /energy/receipt to anchor a
 * token receipt to a measured snapshot; the chain then continues through the kernel's receipts.
 */
import { canonicalJson, sha256Hex } from '../lib/numbers.js';
import { GENESIS, HASH_FORMULA } from '../lib/energy-receipt.js';
import { API } from '../isomorphic/api.js';

export const RECEIPT_PATH = `${API}/energy/receipt`;

export class SnapshotChain {
  private head = GENESIS;
  private length = 0;

  /**
   * Adds `body` as the next link. The hash covers the body with `receipt_link` minus its own
   * `hash` field, so a reader recomputes it by deleting `receipt_link.hash` and hashing the rest.
   */
  link<T extends Record<string, unknown>>(body: T): T & { receipt_link: Record<string, unknown> } {
    const receipt_link: Record<string, unknown> = {
      basis: 'computed', // seq counts this process's links; the hashes are computed
      seq: this.length,
      prev_hash: this.head,
      hash_formula: `${HASH_FORMULA}; computed over this body without receipt_link.hash`,
      continue_with: `${RECEIPT_PATH}?prev_hash=<hash>`,
    };
    const linked = { ...body, receipt_link };
    const hash = sha256Hex(canonicalJson(linked));
    receipt_link.hash = hash;
    this.head = hash;
    this.length++;
    return linked;
  }
}
