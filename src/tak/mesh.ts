/**
 * Mesh SA: UDP multicast of one CoT event per datagram to the group every ATAK, WinTAK and iTAK on
 * the segment listens on (239.2.3.1:6969 by default). Protocol v0 sends the XML document; v1 sends
 * the mesh header and a TakMessage, through an encoder given at construction.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { CotFields, CotOut, OutputState, TakOutput } from './output.js';

/** Settings of the mesh output (env SVC_TAK_MESH_*). */
export interface MeshConfig {
  enabled: boolean;
  /** Multicast group (or any IPv4 address: a unicast peer works too). */
  group: string;
  port: number;
  /** Multicast hops; 1 keeps datagrams on the local segment. */
  ttl: number;
  /** IPv4 address of the interface to send from; null lets the OS choose. */
  interface: string | null;
  protocol: 'xml' | 'v1';
  /** Datagrams handed to the OS and not yet reported sent, at most; beyond it events are dropped. */
  maxInFlight: number;
}

/** The largest UDP payload over IPv4. */
const MAX_DATAGRAM = 65_507;
const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';

export class MeshOutput implements TakOutput {
  readonly name = 'mesh' as const;
  private socket: Socket | null = null;
  private state = 'stopped';
  private sent = 0;
  private dropped = 0;
  private errors = 0;
  private inFlight = 0;
  private lastError: string | null = null;

  /** `encodeV1`: the mesh form of TAK Protocol v1 (header and TakMessage); needed when `protocol` is 'v1'. */
  constructor(
    private readonly cfg: Readonly<MeshConfig>,
    private readonly encodeV1: ((f: CotFields) => Uint8Array) | null = null,
  ) {
    if (cfg.protocol === 'v1' && !encodeV1) throw new Error('mesh protocol v1 needs a TAK Protocol v1 encoder');
  }

  async start(): Promise<void> {
    if (this.socket) return;
    const socket = createSocket({ type: 'udp4', reuseAddr: true });
    socket.on('error', (err) => this.failed(err));
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, this.cfg.interface ?? undefined, () => {
        socket.off('error', reject);
        resolve();
      });
    });
    socket.setMulticastTTL(this.cfg.ttl);
    if (this.cfg.interface) socket.setMulticastInterface(this.cfg.interface);
    socket.unref();
    this.socket = socket;
    this.state = 'sending';
  }

  send(event: CotOut): void {
    const socket = this.socket;
    if (!socket || this.inFlight >= this.cfg.maxInFlight) {
      this.dropped++;
      return;
    }
    let payload: Uint8Array;
    try {
      payload = this.cfg.protocol === 'v1' ? this.encodeV1!(event.fields) : Buffer.from(XML_HEAD + event.xml, 'utf8');
    } catch (err) {
      this.failed(err as Error);
      return;
    }
    if (payload.byteLength > MAX_DATAGRAM) {
      this.failed(new Error(`event ${event.fields.uid} is ${payload.byteLength} bytes, more than one datagram holds`));
      return;
    }
    this.inFlight++;
    socket.send(payload, this.cfg.port, this.cfg.group, (err) => this.settled(err));
  }

  private settled(err: Error | null): void {
    this.inFlight--;
    if (err) return this.failed(err);
    this.sent++;
    if (this.socket) this.state = 'sending';
  }

  private failed(err: Error): void {
    this.errors++;
    this.lastError = err.message;
    if (this.socket) this.state = 'error';
  }

  status(): OutputState {
    return {
      wired: true,
      state: this.state,
      sent: this.sent,
      dropped: this.dropped,
      errors: this.errors,
      detail: { target: `${this.cfg.group}:${this.cfg.port}`, protocol: this.cfg.protocol, ttl: this.cfg.ttl, interface: this.cfg.interface, in_flight: this.inFlight, last_error: this.lastError },
    };
  }

  async close(): Promise<void> {
    const socket = this.socket;
    if (!socket) return;
    this.socket = null;
    this.state = 'stopped';
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}
