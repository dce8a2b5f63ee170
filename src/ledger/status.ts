/** What the ledger plugin publishes of its state: read by the evidence and security views. */
export interface LedgerStatus {
  size(): number;
  maxNodes: number;
  /** Hex RFC 9162 root over the node digests, null when empty. */
  root(): string | null;
  /** Recomputes the whole chain and Merkle root from the stored receipts. */
  verifyIntegrity(): { verified: boolean; nodes: number; root: string | null; reason: string };
  keyid: string;
  ephemeralKey: boolean;
  /** ledger.mode, and whether acknowledged nodes survive a restart. */
  mode: 'memory' | 'file' | 'postgres';
  durable: boolean;
}
