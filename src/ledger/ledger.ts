/**
 * The khipu ledger, owned by the main thread: append-only, capped, never evicted or rewritten.
 *   node_digest_i = SHA-256("svc.khipu.node.v1\n" ‖ uint64_be(i) ‖ prev_i ‖ pae_sha256_i), prev_0 = 0³²
 *   khipu_root    = RFC 9162 Merkle tree hash over the node digests
 * (ledger-signing note 6.3/6.4). Appends are synchronous: index, chain link and Merkle update
 * happen in one tick, so concurrent verdicts get contiguous indices.
 */
import { leafHash } from '../lib/merkle.js';
import { sha256 } from '../lib/receipt-bytes.js';
import { MerkleLog } from './merkle-log.js';
import { NodeTable } from './node-table.js';

export const NODE_DOMAIN = Buffer.from('svc.khipu.node.v1\n', 'utf8');
export const ZERO_DIGEST = Buffer.alloc(32);

export interface LedgerNode {
  index: number;
  kind: string;
  tsUtc: string;
  /** The exact signed payload bytes (never re-serialised). */
  payload: Buffer;
  paeSha256: Buffer;
  /** ASN.1 DER ECDSA signature over the PAE. */
  sig: Buffer;
  keyid: string;
  prev: Buffer;
  nodeDigest: Buffer;
  /** Marks nodes produced by the simulated flight. */
  simulated: boolean;
}

/** What a caller supplies; index, chain link and digest are the ledger's to assign. */
export type AppendInput = Omit<LedgerNode, 'index' | 'prev' | 'nodeDigest' | 'simulated'> & { simulated?: boolean };

export class LedgerFullError extends Error {
  constructor(readonly maxNodes: number) {
    super(`ledger is full (${maxNodes} nodes); appends are refused, nothing is evicted`);
  }
}

export function nodeDigest(index: number, prev: Uint8Array, paeSha256: Uint8Array): Buffer {
  // one buffer, one hash call: this runs for every node of a replay
  const buf = Buffer.allocUnsafe(NODE_DOMAIN.length + 8 + 64);
  NODE_DOMAIN.copy(buf, 0);
  buf.writeUInt32BE(Math.floor(index / 2 ** 32), NODE_DOMAIN.length);
  buf.writeUInt32BE(index >>> 0, NODE_DOMAIN.length + 4);
  buf.set(prev, NODE_DOMAIN.length + 8);
  buf.set(paeSha256, NODE_DOMAIN.length + 40);
  return sha256(buf);
}

/** `own`: appended by this process (its own commit), as opposed to replayed or caught up from another replica. */
export type AppendListener = (node: LedgerNode, own: boolean) => void;

export class Ledger {
  private readonly nodes = new NodeTable();
  private readonly merkle = new MerkleLog();
  private readonly listeners = new Set<AppendListener>();
  /** Slots promised to appends in flight (signing), so the cap is never overshot. */
  private reserved = 0;
  /** Integrity is re-checked incrementally from here (O(new nodes) per probe). */
  private verifiedUpTo = 0;
  private verifiedDigest: Buffer = ZERO_DIGEST;

  constructor(readonly maxNodes: number) {}

  get size(): number {
    return this.nodes.length;
  }

  get full(): boolean {
    return this.nodes.length + this.reserved >= this.maxNodes;
  }

  /** Claims `n` future slots or throws LedgerFullError; release what is not appended. */
  reserve(n = 1): void {
    if (this.nodes.length + this.reserved + n > this.maxNodes) throw new LedgerFullError(this.maxNodes);
    this.reserved += n;
  }

  release(n = 1): void {
    this.reserved = Math.max(0, this.reserved - n);
  }

  /** The digest new nodes link to (zero before genesis). */
  get head(): Buffer {
    return this.nodes.length ? this.nodes.digest(this.nodes.length - 1) : ZERO_DIGEST;
  }

  /** Sequences and appends one node in memory at once (memory-only callers and tests). */
  append(input: AppendInput): LedgerNode {
    if (this.reserved > 0) this.reserved--;
    else if (this.nodes.length >= this.maxNodes) throw new LedgerFullError(this.maxNodes);
    const index = this.nodes.length;
    const prev = this.head;
    return this.apply({ ...input, simulated: input.simulated ?? false, index, prev, nodeDigest: nodeDigest(index, prev, input.paeSha256) }, true);
  }

  /**
   * Adds a node sequenced elsewhere (a store's durable commit or replay, another replica's append)
   * after checking that it extends this chain: next index, link to the head, digest recomputes.
   * `fromReservation` consumes a slot claimed with reserve(). A store's replay has recomputed the
   * digest from the stored bytes already (`replayed`): it is not hashed a second time, and the
   * node counts as verified for the incremental integrity probe.
   */
  applyNode(node: LedgerNode, fromReservation = false, replayed = false): LedgerNode {
    if (node.index !== this.nodes.length) throw new Error(`node ${node.index} does not extend a ledger of ${this.nodes.length} nodes`);
    if (!node.prev.equals(this.head)) throw new Error(`node ${node.index}: prev does not match node ${node.index - 1}`);
    if (!replayed && !nodeDigest(node.index, node.prev, node.paeSha256).equals(node.nodeDigest)) throw new Error(`node ${node.index}: digest does not recompute`);
    if (fromReservation && this.reserved > 0) this.reserved--;
    this.apply(node, fromReservation);
    if (replayed && this.verifiedUpTo === node.index) {
      this.verifiedUpTo = node.index + 1;
      this.verifiedDigest = node.nodeDigest;
    }
    return node;
  }

  private apply(node: LedgerNode, own: boolean): LedgerNode {
    this.nodes.push(node);
    this.merkle.append(node.nodeDigest);
    for (const l of this.listeners) l(node, own);
    return node;
  }

  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(index: number): LedgerNode | undefined {
    return this.nodes.get(index);
  }

  newest(): LedgerNode | undefined {
    return this.nodes.get(this.nodes.length - 1);
  }

  /** The last `n` nodes, oldest first. */
  tail(n: number): LedgerNode[] {
    const out: LedgerNode[] = [];
    for (let i = Math.max(0, this.nodes.length - n); i < this.nodes.length; i++) out.push(this.nodes.get(i)!);
    return out;
  }

  indexOfPae(paeSha256Hex: string): number | undefined {
    return /^[0-9a-f]{64}$/.test(paeSha256Hex) ? this.nodes.indexOfPae(Buffer.from(paeSha256Hex, 'hex')) : undefined;
  }

  /** Nodes whose digest starts with `prefix` (hex), at most `limit`. */
  findByDigestPrefix(prefix: string, limit = 2): LedgerNode[] {
    const out: LedgerNode[] = [];
    for (let i = 0; i < this.nodes.length && out.length < limit; i++) {
      if (this.nodes.digest(i).toString('hex').startsWith(prefix)) out.push(this.nodes.get(i)!);
    }
    return out;
  }

  root(size = this.size): Buffer {
    return this.merkle.root(size);
  }

  inclusionProof(index: number, size = this.size): Buffer[] {
    return this.merkle.inclusionProof(index, size);
  }

  consistencyProof(m: number, n = this.size): Buffer[] {
    return this.merkle.consistencyProof(m, n);
  }

  /**
   * Recomputes chain links, digests and Merkle leaves from the last verified node (or from
   * genesis when `full`). Read-only: it changes nothing a client can observe.
   */
  verifyIntegrity(full = false): { verified: boolean; nodes: number; root: string; reason: string } {
    if (full) {
      this.verifiedUpTo = 0;
      this.verifiedDigest = ZERO_DIGEST;
    }
    let prev = this.verifiedDigest;
    for (let i = this.verifiedUpTo; i < this.nodes.length; i++) {
      const n = this.nodes.get(i)!;
      if (!n.prev.equals(prev)) return { verified: false, nodes: this.nodes.length, root: this.root().toString('hex'), reason: `chain broken at node ${i}: prev does not match node ${i - 1}` };
      if (!nodeDigest(i, prev, n.paeSha256).equals(n.nodeDigest)) {
        return { verified: false, nodes: this.nodes.length, root: this.root().toString('hex'), reason: `node ${i}: digest does not recompute` };
      }
      if (!this.merkle.leaf(i).equals(leafHash(n.nodeDigest))) return { verified: false, nodes: this.nodes.length, root: this.root().toString('hex'), reason: `node ${i}: Merkle leaf differs from its digest` };
      prev = n.nodeDigest;
      this.verifiedUpTo = i + 1;
      this.verifiedDigest = n.nodeDigest;
    }
    return { verified: true, nodes: this.nodes.length, root: this.root().toString('hex'), reason: `chain and Merkle leaves recomputed for ${this.nodes.length} nodes` };
  }
}

