/**
 * Messages between the main thread and the worker host. Results are envelopes: errors never
 * cross the thread boundary as exceptions (their class and fields would be lost).
 */

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

/** Verifies DER ECDSA P-256 signatures over PAEs with public keys given as SPKI DER, by keyid. */
export interface VerifyTask {
  kind: 'verify';
  keys: Record<string, Uint8Array>;
  items: { pae: Uint8Array; sig: Uint8Array; keyid: string }[];
}

export type Task = KernelTask | SignTask | VerifyTask | ProbeTask;

export interface TaskStats {
  /** Wall time of the run inside the worker, in milliseconds. */
  runMs: number;
}

export type TaskFailureCode = 'UNKNOWN_KERNEL' | 'KERNEL_FAULT' | 'BAD_TASK' | 'NO_SIGNING_KEY';

export type TaskResult<T = string> =
  | { ok: true; value: T; stats: TaskStats }
  | { ok: false; error: { code: TaskFailureCode; msg: string }; stats: TaskStats };
