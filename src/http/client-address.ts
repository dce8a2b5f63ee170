/**
 * Who a client is, for the per-address limits (anonymous write quotas, connections per address).
 *
 * - The address is the TCP peer's. Behind a trusted proxy (`guard.trustProxy`: addresses or CIDR
 *   ranges) it is the right-most `X-Forwarded-For` entry that is not itself a trusted proxy: every
 *   entry to its right was appended by a proxy we trust, everything to its left is whatever the
 *   client sent. From any other peer the header is ignored.
 * - An IPv4 address counts as itself (an IPv4-mapped IPv6 peer as its IPv4 form); an IPv6 address
 *   counts as its /64, the block one subscriber is usually given, so rotating through it gains nothing.
 */
import { BlockList, isIP } from 'node:net';

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** The address as compared: IPv4-mapped IPv6 unwrapped, zone id dropped, lower case. */
export function normalizeAddress(addr: string): string {
  const bare = addr.includes('%') ? addr.slice(0, addr.indexOf('%')) : addr;
  const mapped = MAPPED_V4.exec(bare);
  return mapped ? mapped[1]! : bare.toLowerCase();
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad becomes the last two). */
function ipv6Groups(addr: string): string[] {
  let text = addr;
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => g.replace(/^0+(?=.)/, ''));
}

/** The key a per-address limit counts under: the IPv4 address, or the IPv6 address's /64. */
export function addressKey(addr: string | undefined): string {
  if (addr === undefined || addr === '') return 'unknown';
  const a = normalizeAddress(addr);
  return isIP(a) === 6 ? `${ipv6Groups(a).slice(0, 4).join(':')}::/64` : a;
}

/** One `X-Forwarded-For` entry as an address, or null (a port or brackets are dropped). */
function forwardedEntry(raw: string): string | null {
  let e = raw.trim();
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracket) e = bracket[1]!;
  else if (/^\d{1,3}(?:\.\d{1,3}){3}:\d+$/.test(e)) e = e.slice(0, e.lastIndexOf(':'));
  const a = normalizeAddress(e);
  return isIP(a) ? a : null;
}

export class ClientAddresses {
  private readonly trusted = new BlockList();
  readonly trustsAny: boolean;

  /** `trustProxy`: addresses (`10.0.0.5`, `::1`) or CIDR ranges (`10.0.0.0/8`). */
  constructor(trustProxy: readonly string[]) {
    for (const entry of trustProxy) {
      const [addr, prefix] = entry.split('/') as [string, string | undefined];
      const a = normalizeAddress(addr);
      const type = isIP(a) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.trusted.addAddress(a, type);
      else this.trusted.addSubnet(a, Number(prefix), type);
    }
    this.trustsAny = trustProxy.length > 0;
  }

  isTrusted(addr: string | undefined): boolean {
    if (!this.trustsAny || addr === undefined) return false;
    const a = normalizeAddress(addr);
    const v = isIP(a);
    return v !== 0 && this.trusted.check(a, v === 6 ? 'ipv6' : 'ipv4');
  }

  /** The client's address: the peer's, or from a trusted peer the right-most untrusted forwarded one. */
  of(peer: string | undefined, forwardedFor: string | undefined): string {
    if (peer === undefined || !forwardedFor || !this.isTrusted(peer)) return addressKey(peer);
    const entries = forwardedFor.split(',');
    let client = peer;
    for (let i = entries.length - 1; i >= 0; i--) {
      const a = forwardedEntry(entries[i]!);
      // a trusted proxy appends a real address: anything else means the chain cannot be read, and
      // the requests are counted against the proxy that passed them on
      if (a === null) return addressKey(client);
      client = a;
      if (!this.isTrusted(a)) break;
    }
    return addressKey(client);
  }
}

/** The client address of a Koa request, as the per-address limits count it. */
export function clientAddressOf(trustProxy: readonly string[]): (ctx: { req: { socket: { remoteAddress?: string }; headers: Record<string, unknown> } }) => string {
  const addresses = new ClientAddresses(trustProxy);
  return (ctx) => addresses.of(ctx.req.socket.remoteAddress, ctx.req.headers['x-forwarded-for'] as string | undefined);
}
