/**
 * Signature checks of ledger nodes in the worker pool, in chunks spread over its threads (about
 * 13k verifications/s per core). At start they run in the signing lane, which is up in
 * milliseconds, so checking the records after the last checkpoint never waits for the kernel
 * threads' warm-up; the background fsck uses the kernel lane.
 */
import type { RunOptions, WorkerPool } from '../platform/pool.js';
import { pae, PAYLOAD_TYPE } from './dsse.js';
import type { Keyring } from './keyring.js';
import type { LedgerNode } from './ledger.js';

const CHUNK = 2048;

export function signatureVerifier(pool: WorkerPool, keyring: Keyring, lane?: RunOptions['lane']) {
  return async (nodes: readonly LedgerNode[]): Promise<{ index: number; reason: string } | null> => {
    const keys: Record<string, Uint8Array> = {};
    for (const k of keyring.list()) keys[k.keyid] = k.publicKey.export({ type: 'spki', format: 'der' });
    const chunks: Promise<{ index: number; reason: string } | null>[] = [];
    for (let from = 0; from < nodes.length; from += CHUNK) {
      const slice = nodes.slice(from, from + CHUNK);
      const items = slice.map((n) => ({ pae: pae(PAYLOAD_TYPE, n.payload), sig: n.sig, keyid: n.keyid }));
      chunks.push(
        pool.run<boolean[]>({ kind: 'verify', keys, items }, { deadlineMs: 60_000, lane }).then(({ value }) => {
          const bad = value.indexOf(false);
          if (bad < 0) return null;
          const n = slice[bad]!;
          const reason = keyring.get(n.keyid) ? 'signature does not verify over its PAE' : `signed by key ${n.keyid}, which is not in the keyring`;
          return { index: n.index, reason: `node ${n.index}: ${reason}` };
        }),
      );
    }
    const found = (await Promise.all(chunks)).filter((x) => x !== null);
    return found.length ? found.reduce((a, b) => (a.index <= b.index ? a : b)) : null;
  };
}
