/**
 * What the process says about the address it listens on: a listen that fails for a reason the
 * operator can fix is one line naming the fix (no stack trace), and open writes on an address
 * beyond loopback are a warning, since anyone who reaches the port can then sign into the ledger.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** The one line for a listen error the operator can fix, or null for any other error. */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): string | null {
  switch (err.code) {
    case 'EADDRINUSE':
      return `port ${port} is in use (EADDRINUSE) on ${host}: stop the other process or set PORT to a free port`;
    case 'EACCES':
      return `port ${port} on ${host} needs privileges this process lacks (EACCES): set PORT above 1023 (a proxy can take 80/443) or grant CAP_NET_BIND_SERVICE`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine (EADDRNOTAVAIL): set HOST to one of its addresses, 0.0.0.0 for all of them, or 127.0.0.1`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} does not resolve (${err.code}): set HOST to an address of this machine, 0.0.0.0 for all of them, or 127.0.0.1`;
    default:
      return null;
  }
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1, the IPv4-mapped loopback, `localhost`. */
export function isLoopback(address: string): boolean {
  const a = address.toLowerCase();
  if (a === 'localhost' || a === '::1') return true;
  if (isIPv4(a)) return a.startsWith('127.');
  return isIPv6(a) && a.startsWith('::ffff:127.');
}

/** The start-up warning for writes anyone on the network may make, or null when they need a token or only this machine can reach the port. */
export function openWritesWarning(address: string, port: number, writeTokens: string): string | null {
  if (isLoopback(address) || writeTokens.split(',').some((t) => t.trim() !== '')) return null;
  return (
    `writes are open: listening on ${address}:${port} without write tokens, so anyone who can reach this port can append signed verdicts to the ledger ` +
    '(POST /api/svc/v1/verdict, /edge/3d, /cot/ingest); set SVC_WRITE_TOKENS (guard.writeTokens) to comma-separated bearer tokens, or HOST=127.0.0.1 to listen on loopback only'
  );
}
