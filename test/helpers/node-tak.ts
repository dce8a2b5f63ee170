/**
 * @tak-ps/node-tak, the TAK streaming client CloudTAK and its ETL tasks use, as a test peer. Loaded
 * with a dynamic import: it ships TypeScript sources as its types, which we do not type-check.
 * Version 8.9 connects with `rejectUnauthorized: false` (it does not check the server), sends a
 * `t-x-c-t` ping on connect and every 5 s, and emits 'ping' for each `t-x-c-t-r` and 'cot' for every
 * other event except a `t-x-takp-v` that names a server version.
 */
import type { EventEmitter } from 'node:events';
import type { TLSSocket } from 'node:tls';
import type { NodeCot } from './cot-oracle.js';

export interface NodeTak extends EventEmitter {
  /** True once a pong has arrived. */
  open: boolean;
  client?: TLSSocket;
  destroy(): void;
  on(event: 'cot', listener: (cot: NodeCot) => void): this;
  on(event: 'ping' | 'end' | 'secureConnect', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
}

interface NodeTakClass {
  connect(id: string, url: URL, auth: { cert: string; key: string }): Promise<NodeTak>;
}

let takClass: NodeTakClass | null = null;

/** Loads the package (several seconds the first time, so a test's timing starts after it). */
export async function loadNodeTak(): Promise<NodeTakClass> {
  if (!takClass) {
    const specifier = '@tak-ps/node-tak';
    takClass = ((await import(specifier)) as { default: NodeTakClass }).default;
  }
  return takClass;
}

/** Connects the way a TAK client does: `ssl://host:port` with a client certificate and key (PEM text). */
export async function nodeTakConnect(id: string, port: number, auth: { cert: string; key: string }): Promise<NodeTak> {
  const tak = await (await loadNodeTak()).connect(id, new URL(`ssl://127.0.0.1:${port}`), auth);
  // a refused handshake surfaces as an error event; the tests read it from the listener's status
  tak.on('error', () => undefined);
  return tak;
}
