/**
 * A reconnecting SSE viewer over node:http that behaves as a browser's EventSource does: it sends
 * the last event id it received as `Last-Event-ID`, waits the `retry:` the server last named before
 * reconnecting when a stream ends or breaks, and gives up for good on an answer that is not a 200
 * event stream. Unlike the `eventsource` package it keeps each event's exact bytes and the response
 * headers of every connection (which replica a load balancer picked).
 */
import { request, type ClientRequest } from 'node:http';

export interface ViewerEvent {
  id: string | null;
  event: string;
  data: string;
  /** The event's block exactly as received, its terminating blank line included. */
  raw: string;
  /** Index into `connections` of the connection that delivered it. */
  connection: number;
  at: number;
}

export interface ViewerConnection {
  /** The Last-Event-ID this connection was opened with (null: none). */
  lastEventId: string | null;
  status: number;
  /** The response header the caller asked to record (e.g. the backend a balancer chose). */
  tag: string | null;
  openedAt: number;
  endedAt: number | null;
}

export interface SseViewer {
  events: ViewerEvent[];
  connections: ViewerConnection[];
  /** Why the viewer gave up (a browser's EventSource closes for good on a non-200 answer). */
  failed: string | null;
  /** The reconnection delay in force, as the server last set it with `retry:`. */
  readonly retryMs: number;
  close(): void;
}

export interface ViewerOptions {
  lastEventId?: string;
  /** Response header recorded per connection. */
  tagHeader?: string;
  /** Delay before the first `retry:` arrives (browsers use a few seconds). */
  initialRetryMs?: number;
}

/** Splits an event stream into blocks; a block ends at a blank line (LF or CRLF). */
function blockSplitter(): (chunk: string) => string[] {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    const out: string[] = [];
    for (;;) {
      const m = /\r?\n\r?\n/.exec(buffer);
      if (!m) return out;
      out.push(buffer.slice(0, m.index + m[0].length));
      buffer = buffer.slice(m.index + m[0].length);
    }
  };
}

export function viewSse(url: string, opts: ViewerOptions = {}): SseViewer {
  let lastEventId = opts.lastEventId ?? '';
  let retryMs = opts.initialRetryMs ?? 3000;
  let closed = false;
  let req: ClientRequest | null = null;
  let timer: NodeJS.Timeout | null = null;
  const v: SseViewer = {
    events: [],
    connections: [],
    failed: null,
    get retryMs() {
      return retryMs;
    },
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      req?.destroy();
    },
  };

  const reconnectLater = (conn: ViewerConnection): void => {
    // `end`, `error` and `close` may all fire for one connection: it is retried once
    if (conn.endedAt !== null) return;
    conn.endedAt = Date.now();
    if (closed || v.failed) return;
    timer = setTimeout(open, retryMs);
  };

  const dispatch = (block: string, connection: number): void => {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
      else if (field === 'id' && !value.includes('\0')) id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    // as in a browser, an id field moves the last event id even on a block without data
    if (id !== null) lastEventId = id;
    if (data.length) v.events.push({ id, event, data: data.join('\n'), raw: block, connection, at: Date.now() });
  };

  function open(): void {
    timer = null;
    if (closed) return;
    const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache' };
    if (lastEventId !== '') headers['last-event-id'] = lastEventId;
    const conn: ViewerConnection = { lastEventId: lastEventId === '' ? null : lastEventId, status: 0, tag: null, openedAt: Date.now(), endedAt: null };
    const index = v.connections.push(conn) - 1;
    req = request(url, { headers, agent: false }, (res) => {
      conn.status = res.statusCode ?? 0;
      const tag = opts.tagHeader ? res.headers[opts.tagHeader.toLowerCase()] : undefined;
      conn.tag = typeof tag === 'string' ? tag : null;
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        v.failed = `connection ${index}: HTTP ${res.statusCode} ${String(res.headers['content-type'])}`;
        conn.endedAt = Date.now();
        res.resume();
        return;
      }
      const blocks = blockSplitter();
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const block of blocks(chunk)) dispatch(block, index);
      });
      res.on('end', () => reconnectLater(conn));
      res.on('error', () => reconnectLater(conn));
      res.on('close', () => reconnectLater(conn));
    });
    // refused or reset before an answer: a network error, which a browser retries too
    req.on('error', () => {
      if (conn.status === 0) reconnectLater(conn);
    });
    req.end();
  }

  open();
  return v;
}
