import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';

/** What the stream's modules read: the ledger, its store and checkpoints (ledger plugin), and the verdict service. */
export type StreamSources = Pick<LedgerCore, 'ledger' | 'store' | 'checkpoints'> & VerdictCore;
