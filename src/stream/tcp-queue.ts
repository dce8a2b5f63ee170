/**
 * The kernel send queue of TCP sockets on Linux: bytes written and not yet acknowledged by the
 * peer, the `tx_queue` column of /proc/net/tcp and /proc/net/tcp6 (write_seq - snd_una, the value
 * SIOCOUTQ gives). Node exposes neither that ioctl, nor TCP_INFO, nor SO_SNDBUF on TCP sockets
 * (setSendBufferSize exists on dgram sockets only), so this table is the one honest view it has
 * of what a viewer that stopped reading holds in the kernel.
 */
import { readFile } from 'node:fs/promises';
import { accessSync } from 'node:fs';
import { isIPv4, isIPv6, type Socket } from 'node:net';
import { endianness } from 'node:os';

export type SendQueueProbe = (sockets: readonly Socket[]) => Promise<(number | null)[]>;

const LITTLE = endianness() === 'LE';
const hex2 = (b: number): string => b.toString(16).toUpperCase().padStart(2, '0');

/** The 4 or 16 bytes of an address as Node prints it (v4, v6, v4-mapped v6, with or without a zone). */
export function ipBytes(address: string): number[] | null {
  const ip = address.split('%')[0]!;
  if (isIPv4(ip)) return ip.split('.').map(Number);
  if (!isIPv6(ip)) return null;
  let v6 = ip;
  let v4tail: number[] = [];
  if (ip.includes('.')) {
    const cut = ip.lastIndexOf(':');
    v4tail = ip.slice(cut + 1).split('.').map(Number);
    v6 = `${ip.slice(0, cut + 1)}0:0`;
  }
  const [head, rest] = v6.includes('::') ? v6.split('::') as [string, string] : [v6, null];
  const h = head === '' ? [] : head.split(':');
  const t = rest === null || rest === '' ? [] : rest.split(':');
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t].map((g) => parseInt(g, 16));
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (v4tail.length) bytes.splice(12, 4, ...v4tail);
  return bytes;
}

/** An address:port as the kernel prints it there: each 32-bit word in host byte order, then the port. */
export function procAddress(address: string, port: number, v6: boolean): string | null {
  let bytes = ipBytes(address);
  if (!bytes) return null;
  if (v6 && bytes.length === 4) bytes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...bytes];
  if (!v6 && bytes.length === 16) {
    // a v4-mapped address of a dual-stack socket is listed in tcp6, never in tcp
    return null;
  }
  let out = '';
  for (let w = 0; w < bytes.length; w += 4) {
    const word = bytes.slice(w, w + 4);
    out += (LITTLE ? word.reverse() : word).map(hex2).join('');
  }
  return `${out}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The key of a socket in /proc/net/tcp{,6}: "local remote", and which table lists it. */
function procKey(s: Socket): { key: string; table: 'tcp' | 'tcp6' } | null {
  if (!s.localAddress || !s.remoteAddress || s.localPort === undefined || s.remotePort === undefined) return null;
  // a socket is in tcp6 when it was made by an IPv6 (or dual-stack) listener: its local address says so
  const v6 = isIPv6(s.localAddress.split('%')[0]!);
  const local = procAddress(s.localAddress, s.localPort, v6);
  const remote = procAddress(s.remoteAddress, s.remotePort, v6);
  return local && remote ? { key: `${local} ${remote}`, table: v6 ? 'tcp6' : 'tcp' } : null;
}

/** tx_queue of every line whose "local remote" pair is wanted. */
export function parseSendQueues(text: string, wanted: ReadonlySet<string>, into: Map<string, number>): void {
  let start = text.indexOf('\n') + 1; // the header line
  while (start > 0 && start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const f = text.slice(start, end).trim().split(/\s+/, 5);
    start = end + 1;
    if (f.length < 5) continue;
    const key = `${f[1]} ${f[2]}`;
    if (wanted.has(key)) into.set(key, parseInt(f[4]!.slice(0, f[4]!.indexOf(':')), 16));
  }
}

/** The probe, or undefined where the tables do not exist (not Linux, or /proc not mounted). */
export function procSendQueueProbe(dir = '/proc/net'): SendQueueProbe | undefined {
  try {
    accessSync(`${dir}/tcp`);
  } catch {
    return undefined;
  }
  return async (sockets) => {
    const keys = sockets.map(procKey);
    const wanted = new Set<string>();
    const tables = new Set<'tcp' | 'tcp6'>();
    for (const k of keys) {
      if (!k) continue;
      wanted.add(k.key);
      tables.add(k.table);
    }
    const found = new Map<string, number>();
    for (const table of tables) {
      const text = await readFile(`${dir}/${table}`, 'latin1').catch(() => '');
      parseSendQueues(text, wanted, found);
    }
    return keys.map((k) => (k ? (found.get(k.key) ?? null) : null));
  };
}
