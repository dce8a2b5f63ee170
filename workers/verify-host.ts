/**
 * Entry of a pool that only verifies ledger signatures (the offline fsck's threads): it loads no
 * kernel registry, so its threads boot in milliseconds. The kernel host runs the same loop.
 */
import { createPublicKey, verify } from 'node:crypto';
import type { Task, TaskResult, VerifyTask } from '../src/lib/tasks.js';

/** For each item, whether its DER ECDSA signature verifies over its PAE with the key it names. */
export function verifyItems(task: VerifyTask): boolean[] {
  const keys = new Map(Object.entries(task.keys).map(([id, der]) => [id, createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' })]));
  return task.items.map((it) => {
    const key = keys.get(it.keyid);
    return key !== undefined && verify('sha256', it.pae, key, it.sig);
  });
}

export default function handle(task: Task): TaskResult<unknown> {
  if (task.kind !== 'verify') return { ok: false, error: { code: 'BAD_TASK', msg: 'this pool only verifies signatures' }, stats: { runMs: 0 } };
  const started = performance.now();
  const value = verifyItems(task);
  return { ok: true, value, stats: { runMs: performance.now() - started } };
}
