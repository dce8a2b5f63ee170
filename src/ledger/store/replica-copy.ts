/**
 * A postgres replica's local copy of the shared chain: a file-mode directory (khipu.jsonl and its
 * tiles) that the ledger reads receipts and tiles from, so a replica's memory does not grow with
 * the chain and its start opens at a checkpoint instead of reading every row. The database stays
 * the one truth: the copy is written without O_DSYNC, trusted only up to what it synced, and
 * emptied and rebuilt from the rows whenever it does not match them.
 */
import { join } from 'node:path';
import { FileStore, LockHeldError, type FileStoreOptions } from './file-store.js';

/** Replicas sharing one data directory each lock a slot of their own. */
const SLOTS = 16;

export function openReplicaCopy(dataDir: string, opts: Omit<FileStoreOptions, 'dataDir' | 'copy'>): FileStore {
  for (let slot = 0; slot < SLOTS; slot++) {
    try {
      return FileStore.open({ ...opts, dataDir: join(dataDir, 'replica', String(slot)), copy: true });
    } catch (err) {
      if (!(err instanceof LockHeldError)) throw err;
    }
  }
  throw new Error(`ledger.mode postgres: all ${SLOTS} replica copy slots under ${join(dataDir, 'replica')} are locked by other processes`);
}
