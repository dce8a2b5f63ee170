/** What the main thread and the TAK thread say to each other (structured-clone values only). */
import type { CotOut, OutputState } from './output.js';
import type { OutputPlan } from './outputs.js';

export interface TakThreadData {
  plan: OutputPlan;
  statusIntervalMs: number;
}

/** Main → thread. */
export type ToTakThread = { type: 'events'; events: CotOut[] } | { type: 'status' } | { type: 'close' };

/** Thread → main: `ack` answers each `events` batch, after every output took it. */
export type FromTakThread =
  | { type: 'started'; errors: Record<string, string> }
  | { type: 'ack' }
  | { type: 'status'; outputs: Record<string, OutputState> }
  | { type: 'closed' };
