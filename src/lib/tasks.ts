/**
 * Messages between the main thread and the worker host (here because both threads read them).
 * Results are envelopes: errors never cross the thread boundary as exceptions (their class and
 * fields would be lost).
 */
import type { ReceiptBody } from './receipt-bytes.js';
import type { CotPrepareInput } from './cot/prepare.js';

export interface KernelTask {
  kind: 'kernel';
  id: string;
  params: Record<string, unknown>;
  requestLabel?: string | null;
}

/** Answers at once: lets readiness checks prove a worker is alive without running a kernel. */
export interface ProbeTask {
  kind: 'probe';
}

/** Signs each PAE with the ledger key the pool was started with (ECDSA P-256, SHA-256, DER). */
export interface SignTask {
  kind: 'sign';
  paes: Uint8Array[];
}

/**
 * Serialises, hashes and signs receipts in the signing lane (taking them off the main thread): per
 * item the canonical payload (receipt.ts), SHA-256 of its PAE and the signature over the PAE.
 */
export interface ReceiptTask {
  kind: 'receipts';
  /** `frame`: the telemetry frame the receipt decides; the lane binds the receipt to it (receipt-bytes.ts). */
  items: { body: ReceiptBody; tsUtc: string; frame?: { track_id: string } }[];
}

/**
 * The receipts of one batch, packed into one buffer (small Buffers are views of shared 8 KiB slabs,
 * and each would drag its slab through the clone). Item i is at `at[i]`: payload (`payloadLen[i]`
 * bytes), then its 32-byte PAE SHA-256, then the signature (`sigLen[i]` bytes). An item that could
 * not be serialised has payloadLen -1 and its reason in `errors[i]`; the others are unaffected.
 */
export interface PackedReceipts {
  bytes: Uint8Array;
  at: number[];
  payloadLen: number[];
  sigLen: number[];
  errors: (string | null)[];
}

/** Verifies DER ECDSA P-256 signatures over PAEs with public keys given as SPKI DER, by keyid. */
export interface VerifyTask {
  kind: 'verify';
  keys: Record<string, Uint8Array>;
  items: { pae: Uint8Array; sig: Uint8Array; keyid: string }[];
}

/** The costly half of a CoT ingest (src/cot/prepare.ts): parse, validate, serialise the export. */
export interface CotTask extends CotPrepareInput {
  kind: 'cot';
}

export type Task = KernelTask | SignTask | ReceiptTask | VerifyTask | ProbeTask | CotTask;

export interface TaskStats {
  /** Wall time of the run inside the worker, in milliseconds. */
  runMs: number;
}

export type TaskFailureCode = 'UNKNOWN_KERNEL' | 'KERNEL_FAULT' | 'BAD_TASK' | 'NO_SIGNING_KEY';

export type TaskResult<T = string> =
  | { ok: true; value: T; stats: TaskStats }
  | { ok: false; error: { code: TaskFailureCode; msg: string }; stats: TaskStats };

/** What a kernel thread's warm-up ran (workers/warm.ts), reported in every probe answer. */
export interface WarmReport {
  /** Kernels run to a body (every registered kernel unless one failed at its defaults). */
  kernels: number;
  passes: number;
  /** Kernels whose default call failed (their ids); they still warm up on their first request. */
  failed: string[];
  ms: number;
}
