/**
 * Entry of the signing lane's pool: it signs (and checks ledger signatures at start) and nothing
 * else, so it boots in milliseconds (no kernel registry to load) and a kernel flood on the kernel pool never delays a receipt. Besides
 * bare PAEs it takes whole receipts: serialising, hashing and signing them here keeps that work
 * (about a tenth of a verdict's main-thread time) off the main thread, whose core the HTTP front
 * end needs.
 */
import { sign, type KeyObject } from 'node:crypto';
import { workerData } from 'node:worker_threads';
import { pae, PAYLOAD_TYPE, RECEIPT_KIND, receiptPayload, receiptSubject, sha256 } from '../src/lib/receipt-bytes.js';
import type { PackedReceipts, ReceiptTask, Task, TaskResult } from '../src/lib/tasks.js';
import { verifyItems } from './verify-host.js';

// handed over once at pool start (KeyObjects clone across threads); never logged, never returned
const signingKey = ((workerData ?? {}) as { signingKey?: KeyObject }).signingKey;

/**
 * Each receipt's canonical payload, PAE SHA-256 and signature, packed into one buffer (tasks.ts).
 * A receipt that cannot be serialised (a non-finite number) fails alone.
 */
export function signReceipts(items: ReceiptTask['items'], key: KeyObject): PackedReceipts {
  const parts: Buffer[] = [];
  const out: PackedReceipts = { bytes: new Uint8Array(0), at: [], payloadLen: [], sigLen: [], errors: [] };
  let at = 0;
  for (const { body, tsUtc, frame } of items) {
    let payload: Buffer;
    try {
      payload = receiptPayload(body, tsUtc, RECEIPT_KIND, frame === undefined ? undefined : receiptSubject(frame));
    } catch (err) {
      out.at.push(at);
      out.payloadLen.push(-1);
      out.sigLen.push(0);
      out.errors.push((err as Error).message);
      continue;
    }
    const paeBytes = pae(PAYLOAD_TYPE, payload);
    const sig = sign('sha256', paeBytes, key);
    parts.push(payload, sha256(paeBytes), sig);
    out.at.push(at);
    out.payloadLen.push(payload.length);
    out.sigLen.push(sig.length);
    out.errors.push(null);
    at += payload.length + 32 + sig.length;
  }
  out.bytes = new Uint8Array(at);
  let offset = 0;
  for (const p of parts) {
    out.bytes.set(p, offset);
    offset += p.length;
  }
  return out;
}

export default function handle(task: Task): TaskResult<unknown> {
  // signature checks at start come here too: this lane is up long before the kernel threads are warm
  if (task.kind === 'verify') {
    const started = performance.now();
    return { ok: true, value: verifyItems(task), stats: { runMs: performance.now() - started } };
  }
  if (task.kind !== 'sign' && task.kind !== 'receipts') return { ok: false, error: { code: 'BAD_TASK', msg: 'the signing lane only signs and checks signatures' }, stats: { runMs: 0 } };
  if (!signingKey) return { ok: false, error: { code: 'NO_SIGNING_KEY', msg: 'pool started without a signing key' }, stats: { runMs: 0 } };
  const started = performance.now();
  const value = task.kind === 'sign' ? task.paes.map((p) => sign('sha256', p, signingKey)) : signReceipts(task.items, signingKey);
  return { ok: true, value, stats: { runMs: performance.now() - started } };
}
