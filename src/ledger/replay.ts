/**
 * Start-up replay: the store reads and checks the chain; every signature is re-verified in the
 * worker pool, spread over its threads, before the service reports READY (scale-out note 2.4:
 * about 13k verifications/s per core, so a 100,000-node ledger costs a few seconds).
 */
import type { WorkerPool } from '../platform/pool.js';
import { pae, PAYLOAD_TYPE } from './dsse.js';
import type { Keyring } from './keyring.js';
import type { LedgerNode } from './ledger.js';

const CHUNK = 2048;

export function signatureVerifier(pool: WorkerPool, keyring: Keyring) {
  return async (nodes: readonly LedgerNode[]): Promise<{ index: number; reason: string } | null> => {
    const keys: Record<string, Uint8Array> = {};
    for (const k of keyring.list()) keys[k.keyid] = k.publicKey.export({ type: 'spki', format: 'der' });
    const chunks: Promise<{ index: number; reason: string } | null>[] = [];
    for (let from = 0; from < nodes.length; from += CHUNK) {
      const slice = nodes.slice(from, from + CHUNK);
      const items = slice.map((n) => ({ pae: pae(PAYLOAD_TYPE, n.payload), sig: n.sig, keyid: n.keyid }));
      chunks.push(
        pool.run<boolean[]>({ kind: 'verify', keys, items }, { deadlineMs: 60_000 }).then(({ value }) => {
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
