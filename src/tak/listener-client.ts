/**
 * One TAK client of the streaming listener: its send queue with a byte bound, the `t-x-takp`
 * negotiation that moves it from XML to TAK Protocol v1, answers to its pings, and a bounded read
 * of whatever else it sends, which is discarded (the listener relays nothing from clients).
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  decodeTakMessage,
  eventType,
  eventXml,
  parseProtocolRequest,
  ping,
  pong,
  protocolResponse,
  protocolSupport,
  StreamSplitter,
  streamFrame,
  streamXml,
  TAK_PROTOCOL_VERSION,
  TYPE_PING,
  TYPE_PROTOCOL_REQUEST,
  type StreamMessage,
} from './protocol.js';
import type { CotFields } from './output.js';

export type ClientProtocol = 'xml' | 'v1';

/** What a client did that the listener counts. */
export interface ClientEvents {
  /** The client's unsent bytes went over its bound: it was dropped, with `lostEvents` events still in its queue. */
  overflow(client: ListenerClient, lostEvents: number): void;
  /** The client sent something that is not a TAK message (or one over the size limit): it was closed. */
  protocolError(client: ListenerClient, reason: string): void;
  /** The socket closed, for any reason. */
  closed(client: ListenerClient): void;
  socketError(client: ListenerClient, err: Error): void;
  /** The current picture's message for a track, or null once it is gone. */
  pictureOf(uid: string): WireMessage | null;
}

/** A client as the listener's status reports it. */
export interface ClientSnapshot {
  id: number;
  address: string;
  /** The subject CN of its certificate (null on plain TCP). */
  subject: string | null;
  protocol: ClientProtocol;
  /** Bytes written and not yet taken by the kernel, plus bytes waiting for the socket to drain. */
  queuedBytes: number;
  eventsSent: number;
  /** Messages it sent that were read and discarded (its own SA, chat…). */
  discarded: number;
  /** Tracks of the picture it has still to receive. */
  pictureBacklog: number;
  connectedMs: number;
}

/** One message in both wire forms, encoded at most once however many clients receive it. */
export class WireMessage {
  private xml: Buffer | null = null;
  private v1: Buffer | null = null;

  constructor(
    private readonly fields: CotFields,
    private readonly xmlEvent: string | null = null,
  ) {}

  get uid(): string {
    return this.fields.uid;
  }

  as(protocol: ClientProtocol): Buffer {
    if (protocol === 'v1') return (this.v1 ??= streamFrame(this.fields));
    return (this.xml ??= Buffer.from(streamXml(this.xmlEvent ?? eventXml(this.fields)), 'utf8'));
  }
}

export class ListenerClient {
  protocol: ClientProtocol = 'xml';
  eventsSent = 0;
  discarded = 0;
  /** When the client last sent a byte: one silent for three ping intervals is gone. */
  lastHeardMs: number;
  readonly connectedMs: number;
  private readonly pending: { bytes: Buffer; event: boolean }[] = [];
  private pendingBytes = 0;
  /** Events (not pings or negotiation) among `pending`. */
  private pendingEvents = 0;
  private readonly splitter: StreamSplitter;
  private closed = false;
  /** Tracks of the picture not yet written, and the tracks a live event reached first (never overwritten by an older one). */
  private backlog: string[] = [];
  private backlogAt = 0;
  private readonly liveFirst = new Set<string>();
  /**
   * Bytes handed to the socket before the rest waits in our queue: a quarter of the bound, so a
   * picture being sent leaves room for live events whatever the runtime's socket high-water mark.
   */
  private readonly socketShare: number;
  private readonly onFlush: (err?: Error | null) => void;

  constructor(
    readonly id: number,
    private readonly socket: Socket | TLSSocket,
    readonly subject: string | null,
    private readonly maxQueuedBytes: number,
    maxMessageBytes: number,
    private readonly on: ClientEvents,
  ) {
    this.splitter = new StreamSplitter(maxMessageBytes);
    this.socketShare = Math.max(1, Math.floor(maxQueuedBytes / 4));
    this.onFlush = this.flushed.bind(this);
    this.connectedMs = this.lastHeardMs = Date.now();
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', (err) => this.on.socketError(this, err));
    socket.on('close', () => this.gone());
  }

  get address(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? 0}`;
  }

  /** Bytes this client has not taken yet: Node's socket buffer plus our queue behind it. */
  get queuedBytes(): number {
    return this.socket.writableLength + this.pendingBytes;
  }

  /** The offer every client gets first, in XML, once per connection. */
  offer(nowMs: number): void {
    this.write(new WireMessage(protocolSupport(nowMs, [TAK_PROTOCOL_VERSION])));
  }

  /**
   * The picture goes out as the socket takes it, never through the queue, so a picture larger than
   * the client's bound reaches a client that reads; each track is looked up when its turn comes.
   */
  givePicture(uids: string[]): void {
    this.backlog = uids;
    this.backlogAt = 0;
    this.pump();
  }

  /** Queues an event; a client over its bound is dropped here, and false is returned. */
  sendEvent(msg: WireMessage): boolean {
    if (this.backlogAt < this.backlog.length) this.liveFirst.add(msg.uid);
    if (!this.write(msg, true)) return false;
    this.eventsSent++;
    return true;
  }

  keepAlive(nowMs: number): void {
    this.write(new WireMessage(ping(nowMs)));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.destroy();
  }

  snapshot(nowMs: number): ClientSnapshot {
    return {
      id: this.id,
      address: this.address,
      subject: this.subject,
      protocol: this.protocol,
      queuedBytes: this.queuedBytes,
      eventsSent: this.eventsSent,
      discarded: this.discarded,
      pictureBacklog: this.backlog.length - this.backlogAt,
      connectedMs: nowMs - this.connectedMs,
    };
  }

  private write(msg: WireMessage, event = false): boolean {
    if (this.closed) return false;
    const bytes = msg.as(this.protocol);
    // straight to the socket while it takes more; behind a full socket, into our queue, so the
    // bound below counts every byte this client holds
    if (this.pending.length === 0 && this.socketHasRoom()) this.socket.write(bytes, this.onFlush);
    else {
      this.pending.push({ bytes, event });
      this.pendingBytes += bytes.length;
      if (event) this.pendingEvents++;
    }
    if (this.queuedBytes > this.maxQueuedBytes) {
      const lost = this.pendingEvents;
      this.close();
      this.on.overflow(this, lost);
      return false;
    }
    return true;
  }

  private socketHasRoom(): boolean {
    return !this.closed && !this.socket.destroyed && this.socket.writableLength < this.socketShare;
  }

  /** Every write reports when the socket has taken its bytes, which is when more may follow. */
  private flushed(err?: Error | null): void {
    if (!err) this.drained();
  }

  private drained(): void {
    while (this.pending.length > 0 && this.socketHasRoom()) {
      const next = this.pending.shift()!;
      this.pendingBytes -= next.bytes.length;
      if (next.event) this.pendingEvents--;
      this.socket.write(next.bytes, this.onFlush);
    }
    this.pump();
  }

  private pump(): void {
    while (this.backlogAt < this.backlog.length && this.pending.length === 0 && this.socketHasRoom()) {
      const uid = this.backlog[this.backlogAt++]!;
      const msg = this.liveFirst.has(uid) ? null : this.on.pictureOf(uid);
      if (msg) {
        this.socket.write(msg.as(this.protocol), this.onFlush);
        this.eventsSent++;
      }
    }
    if (this.backlogAt >= this.backlog.length && this.backlog.length > 0) {
      this.backlog = [];
      this.backlogAt = 0;
      this.liveFirst.clear();
    }
  }

  private received(chunk: Buffer): void {
    this.lastHeardMs = Date.now();
    this.splitter.push(chunk);
    for (let m = this.splitter.next(); m && !this.closed; m = this.splitter.next()) this.handle(m);
  }

  private handle(m: StreamMessage): void {
    if (m.kind === 'error') {
      this.close();
      this.on.protocolError(this, m.reason);
      return;
    }
    const now = Date.now();
    if (m.kind === 'xml') {
      const type = eventType(m.xml);
      if (type === TYPE_PROTOCOL_REQUEST) this.negotiate(parseProtocolRequest(m.xml), now);
      else if (type === TYPE_PING) this.write(new WireMessage(pong(now)));
      else this.discarded++;
      return;
    }
    const read = decodeTakMessage(m.message);
    if (!read.ok) {
      this.close();
      this.on.protocolError(this, read.reason);
    } else if (read.event?.type === TYPE_PING) this.write(new WireMessage(pong(now)));
    else this.discarded++;
  }

  /** A request for version 1 is granted: the answer goes out in XML, and everything after it in v1, both ways. */
  private negotiate(version: number | null, nowMs: number): void {
    const granted = this.protocol === 'xml' && version === TAK_PROTOCOL_VERSION;
    this.write(new WireMessage(protocolResponse(nowMs, granted)));
    if (!granted) return;
    this.protocol = 'v1';
    this.splitter.useV1();
  }

  private gone(): void {
    this.closed = true;
    this.pending.length = 0;
    this.pendingBytes = 0;
    this.pendingEvents = 0;
    this.on.closed(this);
  }
}
