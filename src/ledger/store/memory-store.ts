/** memory mode: nothing is persisted; a commit is the sequencing itself. */
import type { AppendInput, LedgerNode } from '../ledger.js';
import { sequence, type AdapterStatus, type LedgerStore, type ReplayReport, type Tip } from './store.js';

export class MemoryStore implements LedgerStore {
  readonly mode = 'memory' as const;
  readonly scope = 'PROCESS_MEMORY' as const;

  replay(): Promise<ReplayReport> {
    return Promise.resolve({ nodes: 0, trimmed: null, corruptAt: null, ms: 0 });
  }

  commit(inputs: readonly AppendInput[], tip: Tip): Promise<LedgerNode[]> {
    return Promise.resolve(sequence(inputs, tip));
  }

  readFrom(): Promise<LedgerNode[]> {
    return Promise.resolve([]);
  }

  onRemoteAppend(): void {}

  private readonly keys = new Map<string, string>();

  loadKeys(): Promise<string[]> {
    return Promise.resolve([...this.keys.values()]);
  }

  private readonly keyTimes = new Map<string, string>();

  /** Returns when this process first recorded the key: nothing outlives it in memory mode. */
  recordKey(keyid: string, spkiPem: string, createdAt: string = new Date().toISOString()): Promise<string> {
    if (!this.keys.has(keyid)) {
      this.keys.set(keyid, spkiPem);
      this.keyTimes.set(keyid, createdAt);
    }
    return Promise.resolve(this.keyTimes.get(keyid)!);
  }

  status(): AdapterStatus {
    return { configured: false, state: 'NOT_APPLICABLE', reason: 'memory mode: nothing is persisted', recovery: { attempts: 0, retry_after_s: 0, last_error: null } };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
