/**
 * What the TAK outputs share: the event they send and the contract each output keeps. The feed
 * (feed.ts) decides what goes out and when; an output only moves events to its peers, never blocks
 * its caller, and bounds what it holds.
 */

/** The fields of a CoT event that TAK Protocol v1 carries outside its XML detail. */
export interface CotFields {
  uid: string;
  type: string;
  how: string;
  /** Milliseconds since the epoch. */
  timeMs: number;
  startMs: number;
  staleMs: number;
  lat: number;
  lon: number;
  /** Metres; 9999999 when unknown, as CoT says. */
  hae: number;
  ce: number;
  le: number;
  /** The inner XML of `<detail>` (no wrapper), as TAK Protocol v1's `xmlDetail` holds it. */
  detailXml: string;
  /** CoT `access` and `opex` attributes, when set. */
  access?: string;
  opex?: string;
}

/** One event as every output may send it: the XML `<event>` (no declaration) and its fields. */
export interface CotOut {
  fields: CotFields;
  /** The complete `<event …>…</event>` element, serialised once by the feed. */
  xml: string;
}

/** Where an output stands, as /cot/status and the metrics report it. */
export interface OutputState {
  /** The output is configured on and running in this process. */
  wired: boolean;
  /** e.g. `sending`, `connected`, `connecting`, `backoff`, `listening`, `error`. */
  state: string;
  /** Counters since start. */
  sent: number;
  dropped: number;
  errors: number;
  /** Output-specific details (peers, queue depth, last error, negotiated protocol…). */
  detail: Record<string, unknown>;
}

export interface TakOutput {
  readonly name: 'mesh' | 'server' | 'listener';
  start(): Promise<void>;
  /** Never blocks and never throws: an event the output cannot hold is dropped and counted. */
  send(event: CotOut): void;
  status(): OutputState;
  close(): Promise<void>;
}
