/**
 * The ledger's write path on /metrics: how full the ledger is, whether its store is durable, and
 * the two stages every verdict waits for, the signing batch and the group commit, each with its
 * size. Observed once per batch, not per verdict (a batch serves up to `signBatchMax` or
 * `groupCommitMax` of them), through the hot-path histograms of request-metrics.ts.
 */
import { Gauge, type Registry } from 'prom-client';
import { SeriesHistogram } from '../observability/request-metrics.js';
import type { Ledger } from './ledger.js';
import type { LedgerStore } from './store/store.js';
import { DURABILITY_STATES, durabilityState } from './documents.js';
import type { BatchObserver, SigningLane } from './signer.js';
import type { FsckState, FsckStatus } from './background-fsck.js';

/** A batch's round trip or a commit, in seconds: sub-millisecond on a local disk, tens of ms to a remote PostgreSQL. */
const STAGE_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25];
/** Verdicts per batch: 64 is either batch's default cap, and both caps can be raised (to 1,024 and 4,096). */
const SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 256];

export interface LedgerObservers {
  onCommit(seconds: number, nodes: number, durable: boolean): void;
  onBatch: BatchObserver;
}

export function ledgerMetrics(registry: Registry, ledger: Ledger, store: LedgerStore): LedgerObservers {
  const registers = [registry];
  new Gauge({
    name: 'svc_ledger_nodes',
    help: 'Nodes in the ledger (every replica: its mirror of the shared store)',
    registers,
    collect() {
      this.set(ledger.size);
    },
  });
  new Gauge({
    name: 'svc_ledger_capacity_nodes',
    help: 'Nodes the ledger accepts before appends are refused with 503 (ledger.maxNodes in memory mode, +Inf in file and postgres modes where disk is the limit; nothing is evicted)',
    registers,
    collect() {
      this.set(ledger.maxNodes);
    },
  });
  new Gauge({
    name: 'svc_ledger_durability',
    help: 'Durability of the ledger store as readiness reports it: 1 for the current state, 0 for the others',
    labelNames: ['state'],
    registers,
    collect() {
      const now = durabilityState(store);
      for (const state of DURABILITY_STATES) this.set({ state }, state === now ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_ledger_key_index_runs',
    help: 'Sorted runs a key index keeps (index="pae": receipt verification, "digest": nodes named by digest prefix); a lookup reads one 2 KiB block per run, and merges keep at most 3 per level, O(log n)',
    labelNames: ['index'],
    registers,
    collect() {
      for (const [index, runs] of Object.entries(ledger.keyIndexRuns())) this.set({ index }, runs);
    },
  });
  new Gauge({
    name: 'svc_ledger_key_index_merge_failing',
    help: 'Whether the last merge of a key index failed (1: it is retried at the next checkpoint; lookups stay correct, reading more runs meanwhile)',
    labelNames: ['index'],
    registers,
    collect() {
      for (const [index, failing] of Object.entries(ledger.keyIndexMergeFailing())) this.set({ index }, failing ? 1 : 0);
    },
  });
  const commitSeconds = new SeriesHistogram<'outcome'>({
    name: 'svc_ledger_commit_seconds',
    help: 'Group commits: from handing the batch to the store until it is durable (outcome="ok") or refused (outcome="error")',
    buckets: STAGE_BUCKETS,
    registers,
  });
  const commitNodes = new SeriesHistogram<never>({ name: 'svc_ledger_commit_nodes', help: 'Nodes made durable per group commit', buckets: SIZE_BUCKETS, registers });
  const batchSeconds = new SeriesHistogram<'lane' | 'outcome'>({
    name: 'svc_signing_batch_seconds',
    help: 'Signing batches: round trip from sent to the signing thread until answered (queue, wake-up, signing, return), by lane; outcome="error": the round trip failed',
    buckets: STAGE_BUCKETS,
    registers,
  });
  const batchSize = new SeriesHistogram<'lane'>({ name: 'svc_signing_batch_size', help: 'Receipts or signatures per signing batch, by lane', buckets: SIZE_BUCKETS, registers });

  const committed = { ok: commitSeconds.series({ outcome: 'ok' }), error: commitSeconds.series({ outcome: 'error' }) };
  const nodes = commitNodes.series({});
  const lanes = (lane: SigningLane) => ({ ok: batchSeconds.series({ lane, outcome: 'ok' }), error: batchSeconds.series({ lane, outcome: 'error' }), size: batchSize.series({ lane }) });
  const byLane = { receipts: lanes('receipts'), signatures: lanes('signatures') };
  return {
    onCommit(seconds, n, durable) {
      (durable ? committed.ok : committed.error).observe(seconds);
      if (durable) nodes.observe(n);
    },
    onBatch(lane, seconds, size, answered) {
      const l = byLane[lane];
      (answered ? l.ok : l.error).observe(seconds);
      l.size.observe(size);
    },
  };
}

const FSCK_STATES: readonly FsckState[] = ['off', 'running', 'passed', 'damaged', 'error'];

/** The background whole-log check: its state and how far it got. */
export function fsckMetrics(registry: Registry, status: () => FsckStatus): void {
  const registers = [registry];
  new Gauge({
    name: 'svc_ledger_fsck_state',
    help: 'The background check of every record, tile and signature since start: 1 for the current state, 0 for the others',
    labelNames: ['state'],
    registers,
    collect() {
      const now = status().state;
      for (const s of FSCK_STATES) this.set({ state: s }, s === now ? 1 : 0);
    },
  });
  new Gauge({
    name: 'svc_ledger_fsck_checked_nodes',
    help: 'Nodes whose record and signature the background check has verified so far',
    registers,
    collect() {
      this.set(status().checked);
    },
  });
}
