/** The TAK outputs on /metrics: per output (fixed label set) events sent, dropped, errors and state; the thread queue; live tracks. */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { OutputState } from './output.js';
import { OUTPUT_NAMES } from './outputs.js';
import type { QueueState } from './tak-host.js';

export interface TakMetrics {
  /** A status snapshot from the TAK thread: the counters advance by what changed since the last one. */
  observe(outputs: Readonly<Record<string, OutputState>>): void;
}

export function takMetrics(registry: Registry, read: { queue(): QueueState; liveTracks(): number }): TakMetrics {
  const registers = [registry];
  const labelNames = ['output'];
  const sent = new Counter({ name: 'svc_tak_events_sent_total', help: 'CoT events each TAK output handed to its peers (mesh: datagrams sent; server, listener: events written)', labelNames, registers });
  const dropped = new Counter({ name: 'svc_tak_events_dropped_total', help: 'CoT events a TAK output dropped (its bound was full, or it was not connected and its buffer was full)', labelNames, registers });
  const errors = new Counter({ name: 'svc_tak_errors_total', help: 'Errors of each TAK output (a failed send, connection or handshake)', labelNames, registers });
  const state = new Gauge({ name: 'svc_tak_output_state', help: 'The state each TAK output last reported: 1 for the current state (off when not wired)', labelNames: ['output', 'state'], registers });
  new Gauge({
    name: 'svc_tak_queue_depth',
    help: 'CoT events waiting for the TAK thread',
    registers,
    collect() {
      this.set(read.queue().depth);
    },
  });
  new Gauge({
    name: 'svc_tak_queue_dropped',
    help: 'CoT events dropped from the TAK thread\u2019s queue since start (the oldest goes when it is full)',
    registers,
    collect() {
      this.set(read.queue().dropped);
    },
  });
  new Gauge({
    name: 'svc_tak_live_tracks',
    help: 'Tracks currently resent to TAK (verdicts, aircraft, relayed events)',
    registers,
    collect() {
      this.set(read.liveTracks());
    },
  });
  const last = new Map<string, { sent: number; dropped: number; errors: number }>();
  for (const output of OUTPUT_NAMES) {
    sent.inc({ output }, 0);
    dropped.inc({ output }, 0);
    errors.inc({ output }, 0);
    state.set({ output, state: 'off' }, 1);
    last.set(output, { sent: 0, dropped: 0, errors: 0 });
  }
  return {
    observe(outputs) {
      for (const [output, s] of Object.entries(outputs)) {
        const prev = last.get(output) ?? { sent: 0, dropped: 0, errors: 0 };
        if (s.sent > prev.sent) sent.inc({ output }, s.sent - prev.sent);
        if (s.dropped > prev.dropped) dropped.inc({ output }, s.dropped - prev.dropped);
        if (s.errors > prev.errors) errors.inc({ output }, s.errors - prev.errors);
        last.set(output, { sent: Math.max(prev.sent, s.sent), dropped: Math.max(prev.dropped, s.dropped), errors: Math.max(prev.errors, s.errors) });
      }
      state.reset();
      for (const output of OUTPUT_NAMES) state.set({ output, state: outputs[output]?.state ?? 'off' }, 1);
    },
  };
}
