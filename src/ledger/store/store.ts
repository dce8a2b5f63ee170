/**
 * Where ledger nodes are persisted. The main thread still owns ordering (the Ledger mirror and the
 * LedgerWriter's group commit); a store only makes a sequenced batch durable and replays what it
 * holds at start. Three modes, chosen by `ledger.mode`, never falling back from one to another:
 *   memory   — nothing persisted (tests, throwaway demos)
 *   file     — an append-only JSON Lines log in the data directory, one O_DSYNC write per batch
 *   postgres — one chain in one table shared by every replica
 */
import { nodeDigest, ZERO_DIGEST, type AppendInput, type LedgerNode, type LedgerStorage } from '../ledger.js';
import { ServiceError } from '../../lib/service-error.js';

export type LedgerMode = 'memory' | 'file' | 'postgres';
export type PersistenceScope = 'PROCESS_MEMORY' | 'LOCAL_FILE' | 'POSTGRES';

/** The adapter states readiness reports as `adapter_state`. */
export type AdapterState = 'NOT_APPLICABLE' | 'READY' | 'REPLAYING' | 'UNAVAILABLE' | 'CORRUPT' | 'LOCKED';

/** The end of the chain a batch is sequenced against. */
export interface Tip {
  size: number;
  head: Buffer;
}

export interface ReplayReport {
  /** Nodes read, verified and handed over in index order. */
  nodes: number;
  /** A torn last line (crash mid-write) that was trimmed, with what was cut. */
  trimmed: { bytes: number; reason: string } | null;
  /** First damaged index when the stored log is not a valid chain; the prefix before it is served. */
  corruptAt: { index: number; reason: string } | null;
  ms: number;
  /** Nodes opened at the last persisted checkpoint (their tiles' root checked against it, not re-read). */
  fromCheckpoint?: number;
}

export interface ReplayOptions {
  apply(node: LedgerNode): void;
  /** The first node whose signature does not verify with its key from the keyring, or null. */
  verifySignatures(nodes: readonly LedgerNode[]): Promise<{ index: number; reason: string } | null>;
  /** The size and root of the last checkpoint persisted before, if any (stores with derived tiles). */
  anchor?: { size: number; root: Buffer } | null;
  /** The newest persisted checkpoint of at most `size` nodes, when it verifies (a replica's copy opens there). */
  anchorAtMost?(size: number): Promise<{ size: number; root: Buffer } | null>;
  /** Opens the ledger's stored tiles at `size` and returns their root (throws when they cannot hold it). */
  resume?(size: number): Buffer;
  /** The ledger's head after resume(). */
  head?(): Buffer;
}

export interface AdapterStatus {
  configured: boolean;
  state: AdapterState;
  /** Human-readable cause of the current state. */
  reason: string;
  recovery: { attempts: number; retry_after_s: number; last_error: string | null };
}

export interface LedgerStore {
  readonly mode: LedgerMode;
  readonly scope: PersistenceScope;
  /**
   * Reads every stored node in index order and checks it (index, link, PAE and node digests, then
   * every signature through `verifySignatures`), and hands the valid prefix to `apply`. Stops at
   * the first damaged node, reports it as `corruptAt` and refuses appends from then on.
   */
  replay(opts: ReplayOptions): Promise<ReplayReport>;
  /**
   * Makes `inputs`, sequenced after `tip`, durable, and resolves with every node from `tip.size`
   * on in index order, the batch's own nodes last (in postgres mode other replicas' nodes may come
   * first). Throws a StoreUnavailableError when nothing of the batch was made durable.
   */
  commit(inputs: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]>;
  /** Nodes from `from` on that this process has not seen (other replicas'); [] where none can exist. */
  readFrom(from: number, limit: number): Promise<LedgerNode[]>;
  /** Called with the store's size when another writer may have appended (postgres NOTIFY). */
  onRemoteAppend(listener: (size: number) => void): void;
  /** Public keys (SPKI PEM) of every key that has signed into this ledger: the keyring. */
  loadKeys(): Promise<string[]>;
  /**
   * Publishes a public key in the keyring (idempotent; private keys are never stored here) with
   * `createdAt` (default now) unless the store already holds a time for it; returns the time it
   * holds, the key's `created_at` on every later start.
   */
  recordKey(keyid: string, spkiPem: string, createdAt?: string): Promise<string>;
  status(): AdapterStatus;
  /** Where the ledger keeps its tiles and reads receipts (absent or null: all in process memory). */
  storage?(): LedgerStorage | null;
  /** Makes the store's own derived data durable (before a checkpoint is persisted). */
  syncDerived?(): Promise<void>;
  /** Where signed checkpoints are persisted before they are served (absent: nowhere, memory mode). */
  checkpointStore?(origin: string): CheckpointStore;
  /** Where the durable records end (file mode: a byte offset in khipu.jsonl). */
  recordsEnd?(): number;
  /**
   * The file-mode directory the background fsck checks after a start from a checkpoint, and where
   * its records end now: the log itself (file mode) or this replica's copy (postgres mode).
   */
  fsckTarget?(): { dataDir: string; recordsEnd(): number } | null;
  /** Damage found after start (by the background fsck): appends are refused from now on. */
  damaged?(bad: { index: number; reason: string }): void;
  close(): Promise<void>;
  /**
   * Leadership among replicas sharing this store (postgres: a session advisory lock on a dedicated
   * connection): true when this process holds `name`; `onLost` is called if it is lost. Absent
   * where a process is alone with its store (memory, file): it always leads.
   */
  tryLead?(name: string, onLost: () => void): Promise<boolean>;
  resign?(name: string): Promise<void>;
}

/** Persisted signed checkpoints of one origin. */
export interface CheckpointStore {
  /** The newest persisted checkpoint note (of at most `atMost` nodes where the store keeps several), or null. */
  newest(atMost?: number): Promise<string | null>;
  /**
   * Persists `note` (a checkpoint of `size` nodes) durably and resolves with the note to serve
   * for that size: `note` itself, or the one another replica stored first.
   */
  save(size: number, note: string): Promise<string>;
}

/** A durable store's status: recovery says how long until the next reconnect attempt. */
export function durableStatus(state: AdapterState, reason: string, attempts: number, retryAt: number, lastError: string | null): AdapterStatus {
  const retryAfterS = state === 'UNAVAILABLE' ? Math.max(0, Math.ceil((retryAt - Date.now()) / 1000)) : 0;
  return { configured: true, state, reason, recovery: { attempts, retry_after_s: retryAfterS, last_error: lastError } };
}

/** Appends are refused for now (store down, damaged, or locked); the client may retry. */
export class StoreUnavailableError extends ServiceError {
  readonly code = 'SVC_STORE_UNAVAILABLE';

  constructor(
    message: string,
    readonly retryAfterS: number,
  ) {
    super(message);
  }
}

/** Chains `inputs` after `tip`: the one place index, prev and node digest are assigned. */
export function sequence(inputs: readonly AppendInput[], tip: Tip): LedgerNode[] {
  let prev = tip.size === 0 ? ZERO_DIGEST : tip.head;
  return inputs.map((input, k) => {
    const index = tip.size + k;
    const digest = nodeDigest(index, prev, input.paeSha256);
    // written out, not spread: every node of every batch gets the same object shape
    const node: LedgerNode = { index, kind: input.kind, tsUtc: input.tsUtc, payload: input.payload, paeSha256: input.paeSha256, sig: input.sig, keyid: input.keyid, prev, nodeDigest: digest, simulated: input.simulated ?? false };
    if (input.detail) node.detail = input.detail;
    prev = digest;
    return node;
  });
}
