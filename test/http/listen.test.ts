import { expect } from 'chai';
import { isLoopback, listenFailure, openWritesWarning } from '../../src/http/listen.js';

const failure = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`listen ${code}`), { code });

describe('src/http/listen.ts (what start-up says about its address)', () => {
  it('a listen error the operator can fix is one line naming the port or host and the fix', () => {
    expect(listenFailure(failure('EADDRINUSE'), '0.0.0.0', 8000)).to.equal('port 8000 is in use (EADDRINUSE) on 0.0.0.0: stop the other process or set PORT to a free port');
    expect(listenFailure(failure('EACCES'), '0.0.0.0', 80)).to.match(/^port 80 on 0\.0\.0\.0 needs privileges this process lacks \(EACCES\): set PORT above 1023/);
    expect(listenFailure(failure('EADDRNOTAVAIL'), '10.9.9.9', 8000)).to.match(/^HOST 10\.9\.9\.9 is not an address of this machine \(EADDRNOTAVAIL\): set HOST/);
    expect(listenFailure(failure('ENOTFOUND'), 'no-such-host.invalid', 8000)).to.match(/^HOST no-such-host\.invalid does not resolve \(ENOTFOUND\)/);
    for (const line of ['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'ENOTFOUND'].map((c) => listenFailure(failure(c), 'h', 1))) expect(line).to.not.include('\n');
  });

  it('any other error is not explained away (null: it is thrown with its stack)', () => {
    expect(listenFailure(failure('EMFILE'), '0.0.0.0', 8000)).to.equal(null);
    expect(listenFailure(new Error('boom'), '0.0.0.0', 8000)).to.equal(null);
  });

  it('loopback: 127.0.0.0/8, ::1, the IPv4-mapped loopback and localhost; nothing else', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) expect(isLoopback(a), a).to.equal(true);
    for (const a of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.1', '::ffff:10.0.0.1', 'fe80::1', '128.0.0.1', 'example.org', '127.example.org']) expect(isLoopback(a), a).to.equal(false);
  });

  it('open writes are a warning beyond loopback only, and only without a token (blank entries are none)', () => {
    const warning = openWritesWarning('0.0.0.0', 8000, '');
    expect(warning).to.match(/^writes are open: listening on 0\.0\.0\.0:8000 without write tokens, so anyone who can reach this port can append signed verdicts to the ledger/);
    expect(warning).to.include('SVC_WRITE_TOKENS');
    expect(openWritesWarning('::', 8000, ' , ')).to.equal(openWritesWarning('::', 8000, ''));
    expect(openWritesWarning('0.0.0.0', 8000, 'alpha-token')).to.equal(null);
    expect(openWritesWarning('127.0.0.1', 8000, '')).to.equal(null);
    expect(openWritesWarning('::1', 8000, '')).to.equal(null);
  });
});
