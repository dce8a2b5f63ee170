/**
 * The client going away before its answer is written, read straight from the response: what an
 * AbortSignal tied to the connection tells (route.ts's `signal`), without an AbortController per
 * request, which cost a kernel request ~20 µs of main-thread CPU (its creation and listeners).
 */
import type { ServerResponse } from 'node:http';

export interface Departure {
  /** The connection closed before the answer was written. */
  readonly departed: boolean;
  /** Calls `fn` once if the client goes; returns what stops listening. */
  onDepart(fn: () => void): () => void;
}

class ResponseDeparture implements Departure {
  constructor(private readonly res: ServerResponse) {}

  get departed(): boolean {
    return this.res.closed && !this.res.writableFinished;
  }

  onDepart(fn: () => void): () => void {
    const res = this.res;
    const onClose = (): void => {
      if (!res.writableFinished) fn();
    };
    res.once('close', onClose);
    return () => res.off('close', onClose);
  }
}

export function departureOf(res: ServerResponse): Departure {
  return new ResponseDeparture(res);
}
