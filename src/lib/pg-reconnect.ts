/** What every store on PostgreSQL (the ledger, the CoT ingest store) shares about losing it and coming back. */

/** Errors that mean the database (or the way to it) is gone, as opposed to a refused statement. */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (typeof e?.code === 'string') {
    if (/^(08|57P0|53)/.test(e.code)) return true; // connection exception, admin shutdown, resources
    return /^E[A-Z]+$/.test(e.code); // ECONNREFUSED, ECONNRESET, EPIPE, ETIMEDOUT…
  }
  // node-postgres raises a lost connection ("Connection terminated unexpectedly", a closed
  // client) as a plain Error with no code: its message is all there is to read
  return /connect|terminat|timeout|closed|ended|socket/i.test(e?.message ?? '');
}

/** The wait before reconnect attempt `attempt`: doubling from `baseMs`, capped at `maxMs`. */
export function reconnectDelayMs(attempt: number, baseMs = 200, maxMs = 5000): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 16));
}
