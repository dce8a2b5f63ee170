import { expect } from 'chai';
import { healthReasons, ledgerWhere } from '../../src/ui/client/jackin/status-text.js';

describe('src/ui/client/jackin/status-text: the entry page words the ledger mode and the health checks from the API', () => {
  it('names where verdicts go for each ledger mode /ledger/readiness reports', () => {
    expect(ledgerWhere('EPHEMERAL', 'PROCESS_MEMORY')).to.equal('the ledger in process memory, which resets on restart');
    expect(ledgerWhere('DURABLE', 'LOCAL_FILE')).to.equal('the ledger file in the data directory (durable: kept across restarts)');
    expect(ledgerWhere('DURABLE', 'POSTGRES')).to.equal('the PostgreSQL ledger shared by every replica (durable: kept across restarts)');
    expect(ledgerWhere(null, null)).to.equal('the ledger (its storage is unknown: /ledger/readiness did not answer)');
    for (const scope of ['LOCAL_FILE', 'POSTGRES']) expect(ledgerWhere('DURABLE', scope)).to.not.match(/memory|resets/);
  });

  it('lists each check that does not pass with its output, or its observed value when it has none', () => {
    const checks = {
      'ledger:nodes': { status: 'pass', output: 'cap Infinity' },
      'adsb:cache-age': { status: 'warn', output: 'no snapshot: every upstream failed', observedValue: null, observedUnit: 's' },
      'event-loop:delay': { status: 'warn', observedValue: 140.5, observedUnit: 'ms' },
      'ledger:integrity': { status: 'fail', output: 'node 3: hash mismatch' },
    };
    expect(healthReasons(checks)).to.deep.equal(['adsb:cache-age warn: no snapshot: every upstream failed', 'event-loop:delay warn: 140.5 ms', 'ledger:integrity fail: node 3: hash mismatch']);
    expect(healthReasons(undefined)).to.deep.equal([]);
  });
});
