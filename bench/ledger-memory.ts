/**
 * `npm run bench -- ledger-memory`: bytes of memory per ledger node in memory mode. Appends
 * 100,000 realistic nodes (a 200-byte receipt payload and a DER signature each) to a Ledger in this
 * process and divides the growth of heap + array buffers, after a full GC, by the node count.
 * Run with --expose-gc (run.ts re-executes itself with it when needed).
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { pae, PAYLOAD_TYPE } from '../src/ledger/dsse.js';
import { Ledger } from '../src/ledger/ledger.js';

function used(): number {
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export function ledgerMemory(nodes = 100_000): { nodes: number; bytesPerNode: number; gc: boolean } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyid = 'a'.repeat(64);
  // signatures are costly to make: 256 distinct ones, reused; each node still stores its own copy
  const sigs = Array.from({ length: 256 }, (_, i) => sign('sha256', Buffer.from(String(i)), privateKey));
  const ledger = new Ledger(nodes);
  const before = used();
  for (let i = 0; i < nodes; i++) {
    const tsUtc = new Date(Date.UTC(2026, 0, 1) + i * 250).toISOString();
    const text = `{"doctrine":"v11","kind":"counter_uas_decision","payload":{"breaches":[],"decision":"ALLOW","geofence_inside":false,"lambda":0.9${i % 1000},"lambda_floor":0.7},"schema":"svc.receipt/v1","ts_utc":"${tsUtc}"}`;
    const payload = Buffer.alloc(Buffer.byteLength(text));
    payload.write(text);
    const paeSha256 = createHash('sha256').update(pae(PAYLOAD_TYPE, payload)).digest();
    const sig = Buffer.alloc(sigs[i % 256]!.length);
    sig.set(sigs[i % 256]!);
    ledger.append({ kind: 'counter_uas_decision', tsUtc, payload, paeSha256, sig, keyid, simulated: i % 4 === 0 });
  }
  ledger.root();
  const bytesPerNode = (used() - before) / nodes;
  return { nodes: ledger.size, bytesPerNode, gc: typeof (globalThis as { gc?: unknown }).gc === 'function' };
}

if (process.argv[1]?.endsWith('ledger-memory.ts')) {
  const r = ledgerMemory(Number(process.argv[2] ?? 100_000));
  console.log(`ledger memory: ${r.nodes} nodes, ${r.bytesPerNode.toFixed(0)} bytes per node${r.gc ? '' : ' (no --expose-gc: figures include garbage)'}`);
}
