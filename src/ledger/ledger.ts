/**
 * The khipu ledger, owned by the main thread: append-only, never evicted or rewritten.
 *   node_digest_i = SHA-256("svc.khipu.node.v1\n" ‖ uint64_be(i) ‖ prev_i ‖ pae_sha256_i), prev_0 = 0³²
 *   khipu_root    = RFC 9162 Merkle tree hash over the node digests
 * Every field of a digest has a fixed length, so its encoding is unambiguous, and the signature is
 * left out, so the main thread links a node without waiting for a worker. Appends are synchronous:
 * index, chain link and Merkle update happen in one tick, so concurrent verdicts get contiguous
 * indices. The tree lives in C2SP tiles and the receipts in the store's records (see
 * LedgerStorage): this object holds the right edge of the tree and bounded caches, nothing per
 * node.
 */
import { leafHash } from '../lib/merkle.js';
import { sha256 } from '../lib/receipt-bytes.js';
import { HASH_SIZE } from '../lib/tlog-tiles.js';
import { MemoryRecords, type RecordSource } from './records.js';
import { MemoryColumn, type Column } from './tlog/column.js';
import { KeyIndex, type Merger } from './tlog/key-index.js';
import { memoryTileColumns, TileLog, type TileColumns } from './tlog/tile-log.js';
import { ServiceError } from '../lib/service-error.js';

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
  /**
   * What the evaluation reported beyond the signed receipt (the frame, the axes, PAC-Bayes), as
   * JSON text: kept with the node so every replica serves the same verdict body, but outside the
   * node digest (unsigned; its frame is bound by the receipt's frame_sha256). Null where absent.
   */
  detail?: Buffer | null;
}

/** What a caller supplies; index, chain link and digest are the ledger's to assign. */
export type AppendInput = Omit<LedgerNode, 'index' | 'prev' | 'nodeDigest' | 'simulated'> & { simulated?: boolean };

export class LedgerFullError extends ServiceError {
  readonly code = 'SVC_LEDGER_FULL';

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

/** Where a ledger keeps its tree, its PAE digests and its receipts. */
export interface LedgerStorage {
  tiles: TileColumns;
  /** pae_sha256 of every node (32-byte items), for lookups by receipt. */
  paes: Column;
  records: RecordSource;
  /** Where the key indexes write their sorted runs (null: in memory). */
  indexDir: string | null;
  /** Where their merges run (default: the calling thread; the service gives them a thread). */
  indexMerger?: Merger;
  /** Writes what is buffered and releases files. */
  close?(): void;
}

/** Everything in process memory (memory and postgres modes, tests). */
export function memoryStorage(): LedgerStorage {
  return {
    tiles: memoryTileColumns(),
    paes: new MemoryColumn(HASH_SIZE),
    records: new MemoryRecords(),
    indexDir: null,
  };
}

export class Ledger {
  private readonly tiles: TileLog;
  private readonly paeIndex: KeyIndex;
  private readonly digestIndex: KeyIndex;
  private readonly listeners = new Set<AppendListener>();
  /** Slots promised to appends in flight (signing), so the cap is never overshot. */
  private reserved = 0;
  /** Integrity is re-checked incrementally from here (O(new nodes) per probe). */
  private verifiedUpTo = 0;
  private headDigest: Buffer = ZERO_DIGEST;

  /**
   * `maxNodes`: the cap of a ledger held in memory; Infinity where disk is the limit. A ledger over
   * stored columns is opened with resume() (the store's replay does it); a new one starts empty.
   */
  constructor(
    readonly maxNodes: number,
    private readonly storage: LedgerStorage = memoryStorage(),
  ) {
    this.tiles = new TileLog(storage.tiles);
    const paes = storage.paes;
    const merger = { merger: storage.indexMerger };
    this.paeIndex = new KeyIndex('pae', storage.indexDir, (i) => paes.read(i, 1), (from, n) => paes.read(from, n), merger);
    this.digestIndex = new KeyIndex('digest', storage.indexDir, (i) => this.tiles.entry(i), (from, n) => digestsOf(this.tiles.entryRecords(from, n)), merger);
  }

  /**
   * Opens the stored tree at `size` nodes (cutting derived data written after it) and returns its
   * root, O(log n) reads; throws when the stored tiles cannot hold a tree of that size.
   */
  resume(size: number): Buffer {
    this.tiles.resume(size);
    this.storage.paes.truncate(size);
    if (this.storage.paes.length !== size) throw new Error(`PAE column holds ${this.storage.paes.length} digests, not ${size}`);
    this.paeIndex.resume(size);
    this.digestIndex.resume(size);
    this.headDigest = size ? this.tiles.entry(size - 1) : ZERO_DIGEST;
    this.verifiedUpTo = size;
    return this.tiles.root(size);
  }

  get size(): number {
    return this.tiles.size;
  }

  get full(): boolean {
    return this.size + this.reserved >= this.maxNodes;
  }

  /** Claims `n` future slots or throws LedgerFullError; release what is not appended. */
  reserve(n = 1): void {
    if (this.size + this.reserved + n > this.maxNodes) throw new LedgerFullError(this.maxNodes);
    this.reserved += n;
  }

  release(n = 1): void {
    this.reserved = Math.max(0, this.reserved - n);
  }

  /** The digest new nodes link to (zero before genesis). */
  get head(): Buffer {
    return this.headDigest;
  }

  /** Sequences and appends one node in memory at once (memory-only callers and tests). */
  append(input: AppendInput): LedgerNode {
    if (this.reserved > 0) this.reserved--;
    else if (this.size >= this.maxNodes) throw new LedgerFullError(this.maxNodes);
    const index = this.size;
    const prev = this.head;
    const node: LedgerNode = { ...input, simulated: input.simulated ?? false, index, prev, nodeDigest: nodeDigest(index, prev, input.paeSha256) };
    this.apply([node], true);
    return node;
  }

  /**
   * Adds a node sequenced elsewhere (a store's durable commit or replay, another replica's append)
   * after checking that it extends this chain: next index, link to the head, digest recomputes.
   * `fromReservation` consumes a slot claimed with reserve(). A store's replay has recomputed the
   * digest from the stored bytes already (`replayed`): it is not hashed a second time, and the
   * node counts as verified for the incremental integrity probe.
   */
  applyNode(node: LedgerNode, fromReservation = false, replayed = false): LedgerNode {
    this.applyNodes([node], fromReservation ? 1 : 0, replayed);
    return node;
  }

  /** applyNode for a batch, written to the tiles once; the last `own` nodes are this process's. */
  applyNodes(nodes: readonly LedgerNode[], own = 0, replayed = false): void {
    let head = this.head;
    nodes.forEach((node, k) => {
      const index = this.size + k;
      if (node.index !== index) throw new Error(`node ${node.index} does not extend a ledger of ${index} nodes`);
      if (!node.prev.equals(head)) throw new Error(`node ${node.index}: prev does not match node ${node.index - 1}`);
      if (!replayed && !nodeDigest(node.index, node.prev, node.paeSha256).equals(node.nodeDigest)) throw new Error(`node ${node.index}: digest does not recompute`);
      head = node.nodeDigest;
    });
    const ownFrom = nodes.length - own;
    this.reserved = Math.max(0, this.reserved - own);
    const verified = replayed && this.verifiedUpTo === this.size;
    this.apply(nodes, ownFrom);
    if (verified) this.verifiedUpTo = this.size;
  }

  private apply(nodes: readonly LedgerNode[], ownFrom: number | true): void {
    if (nodes.length === 0) return;
    const from = this.size;
    this.tiles.append(nodes.map((n) => n.nodeDigest));
    this.storage.paes.append(Buffer.concat(nodes.map((n) => n.paeSha256)));
    this.headDigest = nodes.at(-1)!.nodeDigest;
    nodes.forEach((n, k) => {
      this.paeIndex.add(n.paeSha256, from + k);
      this.digestIndex.add(n.nodeDigest, from + k);
      this.storage.records.remember(n);
    });
    nodes.forEach((n, k) => {
      const own = ownFrom === true || k >= ownFrom;
      for (const l of this.listeners) l(n, own);
    });
  }

  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get(index: number): LedgerNode | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.size) return undefined;
    return this.storage.records.get(index);
  }

  newest(): LedgerNode | undefined {
    return this.get(this.size - 1);
  }

  /** The last `n` nodes, oldest first. */
  tail(n: number): LedgerNode[] {
    const out: LedgerNode[] = [];
    for (let i = Math.max(0, this.size - n); i < this.size; i++) out.push(this.get(i)!);
    return out;
  }

  indexOfPae(paeSha256Hex: string): number | undefined {
    return /^[0-9a-f]{64}$/.test(paeSha256Hex) ? this.paeIndex.newest(Buffer.from(paeSha256Hex, 'hex')) : undefined;
  }

  /** Nodes whose digest starts with `prefix` (hex), at most `limit`, oldest first. */
  findByDigestPrefix(prefix: string, limit = 2): LedgerNode[] {
    if (!/^[0-9a-f]{0,64}$/.test(prefix) || limit < 1) return [];
    return this.digestIndex.withPrefix(prefix, limit).map((i) => this.get(i)!);
  }

  root(size = this.size): Buffer {
    return this.tiles.root(size);
  }

  inclusionProof(index: number, size = this.size): Buffer[] {
    return this.tiles.inclusionProof(index, size);
  }

  consistencyProof(m: number, n = this.size): Buffer[] {
    return this.tiles.consistencyProof(m, n);
  }

  /** The tiles, for the tile routes and the checker. */
  get tlog(): TileLog {
    return this.tiles;
  }

  /** Runs each key index keeps (a lookup by key reads one block of each). */
  keyIndexRuns(): { pae: number; digest: number } {
    return { pae: this.paeIndex.runLevels.length, digest: this.digestIndex.runLevels.length };
  }

  /** Whether each key index's last merge failed. */
  keyIndexMergeFailing(): { pae: boolean; digest: boolean } {
    return { pae: this.paeIndex.lastMergeFailure !== null, digest: this.digestIndex.lastMergeFailure !== null };
  }

  /** Resolves once neither key index has a merge under way or due. */
  async keyIndexesSettled(): Promise<void> {
    await Promise.all([this.paeIndex.settled(), this.digestIndex.settled()]);
  }

  /** Makes every derived column durable (before a checkpoint naming this size is persisted). */
  async sync(): Promise<void> {
    await Promise.all([this.tiles.sync(), this.storage.paes.sync(), this.paeIndex.sync(), this.digestIndex.sync()]);
  }

  /**
   * Recomputes chain links, digests and Merkle leaves of the nodes appended since the last check
   * (or since start: what was there at start is checked by the start-up replay and by fsck), or
   * of every node when `full` (O(n): for tests and small logs; fsck checks large ones off-thread).
   * Read-only: it changes nothing a client can observe.
   */
  verifyIntegrity(full = false): { verified: boolean; nodes: number; root: string; reason: string } {
    if (full) this.verifiedUpTo = 0;
    let prev = this.verifiedUpTo === 0 ? ZERO_DIGEST : this.tiles.entry(this.verifiedUpTo - 1);
    const size = this.size;
    const fail = (reason: string): { verified: boolean; nodes: number; root: string; reason: string } => ({ verified: false, nodes: size, root: this.root().toString('hex'), reason });
    for (let i = this.verifiedUpTo; i < size; i++) {
      const n = this.get(i)!;
      if (!n.prev.equals(prev)) return fail(`chain broken at node ${i}: prev does not match node ${i - 1}`);
      if (!nodeDigest(i, prev, n.paeSha256).equals(n.nodeDigest)) return fail(`node ${i}: digest does not recompute`);
      if (!this.tiles.leaf(i).equals(leafHash(n.nodeDigest))) return fail(`node ${i}: Merkle leaf differs from its digest`);
      prev = n.nodeDigest;
      this.verifiedUpTo = i + 1;
    }
    return { verified: true, nodes: size, root: this.root().toString('hex'), reason: `chain and Merkle leaves recomputed for ${size} nodes` };
  }

  close(): void {
    this.storage.records.close();
    this.paeIndex.close();
    this.digestIndex.close();
    this.storage.close?.();
  }
}

/** The 32-byte entries of a run of entry-bundle records. */
function digestsOf(records: Buffer): Buffer {
  const n = records.length / (2 + HASH_SIZE);
  const out = Buffer.allocUnsafe(n * HASH_SIZE);
  for (let i = 0; i < n; i++) records.copy(out, i * HASH_SIZE, i * (2 + HASH_SIZE) + 2, (i + 1) * (2 + HASH_SIZE));
  return out;
}
