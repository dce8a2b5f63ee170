import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { PluginServices } from '../platform/plugin.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';

/** What the stream's modules read: the ledger, its store and checkpoints (ledger plugin), and the verdict service. */
export type StreamSources = Pick<LedgerCore, 'ledger' | 'store' | 'checkpoints'> & VerdictCore;

/** The config the stream reads: its own slice, the no-fly zones (ledger), write tokens (guard), Retry-After (pool), key URLs (server). */
export type StreamServices = PluginServices<'stream' | 'ledger' | 'guard' | 'pool' | 'server'>;
