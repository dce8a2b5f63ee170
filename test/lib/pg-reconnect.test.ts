// What the PostgreSQL-backed stores treat as the database being gone, and how long they wait to retry.
import { expect } from 'chai';
import { isConnectionError, reconnectDelayMs } from '../../src/lib/pg-reconnect.js';

describe('pg-reconnect', () => {
  it('a lost connection, an admin shutdown or a socket error is the database gone; a refused statement is not', () => {
    for (const code of ['08006', '08001', '57P01', '53300', 'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']) expect(isConnectionError({ code }), code).to.equal(true);
    for (const code of ['23505', '40001', '42P01', '57014', 'P0001']) expect(isConnectionError({ code }), code).to.equal(false);
    expect(isConnectionError(new Error('Connection terminated unexpectedly'))).to.equal(true);
    expect(isConnectionError(new Error('Query read timeout'))).to.equal(true);
    expect(isConnectionError(new Error('duplicate key value violates unique constraint'))).to.equal(false);
  });

  it('waits double from the base on each attempt, capped', () => {
    expect([0, 1, 2, 3, 4, 5, 40].map((a) => reconnectDelayMs(a))).to.deep.equal([200, 400, 800, 1600, 3200, 5000, 5000]);
    expect([0, 3, 9].map((a) => reconnectDelayMs(a, 500, 30_000))).to.deep.equal([500, 4000, 30_000]);
  });
});
