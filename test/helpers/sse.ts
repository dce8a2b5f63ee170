/** A raw SSE reader over node:http: exact control of headers, and of not reading at all. */
import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

export interface SseReader {
  res: IncomingMessage;
  req: ClientRequest;
  events: SseEvent[];
  comments: string[];
  /** Resolves once `n` events have arrived (rejects after `ms`, a limit a loaded machine stays within). */
  waitFor(n: number, ms?: number): Promise<SseEvent[]>;
  close(): void;
}

/** A feeder for chunks of an event stream: each call returns the blocks completed so far (without their blank line). */
export function sseBlocks(): (chunk: string) => string[] {
  let buffer = '';
  return (chunk) => {
    buffer += chunk;
    const out: string[] = [];
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      out.push(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
    }
    return out;
  };
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const blocks = sseBlocks();
      const waiters: (() => void)[] = [];
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        for (const block of blocks(chunk)) {
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ id, event, data: data.join('\n') });
        }
        waiters.splice(0).forEach((w) => w());
      });
      res.on('error', () => {});
      resolve({
        res,
        req,
        events,
        comments,
        waitFor(n, ms = 60_000) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`only ${events.length} of ${n} events within ${ms} ms`)), ms);
            const check = (): void => {
              if (events.length >= n) {
                clearTimeout(timer);
                ok(events.slice(0, n));
              } else waiters.push(check);
            };
            check();
          });
        },
        close() {
          req.destroy();
        },
      });
    });
    req.on('error', reject);
    req.end();
  });
}
