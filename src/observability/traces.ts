/**
 * W3C trace context (interface wire D): an inbound `traceparent` is continued with a new span id,
 * otherwise a new trace starts. A ring buffer keeps recent traces for the mesh wire board.
 */
import { randomFillSync } from 'node:crypto';

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/**
 * Random hex from a pooled buffer: one getrandom refill per ~2,700 traces instead of two
 * randomBytes calls per request (measured: per-request randomness cost ~40% of a trivial route).
 */
class RandomHex {
  private readonly buf = Buffer.allocUnsafe(65536);
  private pos = this.buf.length;

  take(bytes: number): string {
    if (this.pos + bytes > this.buf.length) {
      randomFillSync(this.buf);
      this.pos = 0;
    }
    const out = this.buf.toString('hex', this.pos, this.pos + bytes);
    this.pos += bytes;
    return out;
  }
}

const random = new RandomHex();

export interface TraceContext {
  traceId: string;
  parentId: string | null;
  spanId: string;
  flags: string;
  traceparent: string;
}

export function continueTrace(header: string | undefined): TraceContext {
  const m = header ? TRACEPARENT.exec(header.trim().toLowerCase()) : null;
  const valid = m && m[1] !== ZERO_TRACE && m[2] !== ZERO_SPAN;
  let traceId = valid ? m[1]! : random.take(16);
  while (traceId === ZERO_TRACE) traceId = random.take(16);
  const parentId = valid ? m[2]! : null;
  const flags = valid ? m[3]! : '01';
  let spanId = random.take(8);
  while (spanId === ZERO_SPAN) spanId = random.take(8);
  return { traceId, parentId, spanId, flags, traceparent: `00-${traceId}-${spanId}-${flags}` };
}

export interface TraceRecord {
  traceparent: string;
  /** When the request arrived (epoch ms): formatted only when the ring is read (traceView). */
  arrivedAt: number;
  method: string;
  route: string;
  status: number;
  ms: number;
}

/** A trace as the views show it: the arrival as an ISO time. */
export function traceView(t: TraceRecord): { traceparent: string; at: string; method: string; route: string; status: number; ms: number } {
  return { traceparent: t.traceparent, at: new Date(t.arrivedAt).toISOString(), method: t.method, route: t.route, status: t.status, ms: t.ms };
}
