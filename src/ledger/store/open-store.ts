/** Builds the store `ledger.mode` names; no mode ever falls back to another. */
import type { LedgerConfig } from '../ledger.config.js';
import { FileStore } from './file-store.js';
import { MemoryStore } from './memory-store.js';
import { PostgresStore } from './postgres-store.js';
import { openReplicaCopy } from './replica-copy.js';
import { hostname } from 'node:os';
import type { LedgerStore } from './store.js';

export interface StoreDeps {
  retryAfterS: number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** Registered by mode; postgres adds itself here. */
export const STORE_FACTORIES: Record<string, (cfg: LedgerConfig, deps: StoreDeps) => Promise<LedgerStore>> = {
  memory: () => Promise.resolve(new MemoryStore()),
  file: (cfg, deps) => Promise.resolve(FileStore.open({ dataDir: cfg.dataDir, retryAfterS: deps.retryAfterS, log: deps.log })),
  postgres: (cfg, deps) =>
    PostgresStore.open({
      url: cfg.databaseUrl!,
      retryAfterS: deps.retryAfterS,
      replicaId: `${hostname()}:${process.pid}`,
      statementTimeoutMs: cfg.pgStatementTimeoutMs,
      queryTimeoutMs: cfg.pgQueryTimeoutMs,
      connectTimeoutMs: cfg.pgConnectTimeoutMs,
      copy: openReplicaCopy(cfg.dataDir, { retryAfterS: deps.retryAfterS, log: deps.log }),
      log: deps.log,
    }),
};

export async function openStore(cfg: LedgerConfig, deps: StoreDeps): Promise<LedgerStore> {
  const factory = STORE_FACTORIES[cfg.mode];
  if (!factory) throw new Error(`ledger.mode ${cfg.mode} has no store`);
  return factory(cfg, deps);
}
