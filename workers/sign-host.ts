/**
 * Entry of the signing lane's pool: it signs and nothing else, so it boots in milliseconds (no
 * kernel registry to load) and a kernel flood on the kernel pool never delays a receipt.
 */
import { sign, type KeyObject } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import type { Task, TaskResult } from './tasks.js';

// handed over once at pool start (KeyObjects clone across threads); never logged, never returned
const signingKey = ((workerData ?? {}) as { signingKey?: KeyObject }).signingKey;

export default function handle(task: Task): TaskResult<unknown> {
  if (task.kind !== 'sign') return { ok: false, error: { code: 'BAD_TASK', msg: 'the signing lane only signs' }, stats: { runMs: 0 } };
  if (!signingKey) return { ok: false, error: { code: 'NO_SIGNING_KEY', msg: 'pool started without a signing key' }, stats: { runMs: 0 } };
  const started = performance.now();
  const sigs = task.paes.map((p) => sign('sha256', p, signingKey));
  return { ok: true, value: sigs, stats: { runMs: performance.now() - started } };
}
