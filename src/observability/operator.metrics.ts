/**
 * The series an operator's dashboard and alerts need beyond each feature's own: every verdict by
 * decision, the build, the replica's role, and how far the signed checkpoints trail the ledger
 * (deploy/prometheus/rules.yml and deploy/grafana/dashboard.json read them).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Decision } from '../verdicts/evaluate.js';
import type { BuildInfo } from './build-info.js';

const DECISIONS: readonly Decision[] = ['ALLOW', 'REVIEW', 'DENY'];

export interface OperatorSources {
  build: BuildInfo;
  /** The verdict service's listener hook: every verdict once it is appended. */
  onVerdict(listener: (v: { evaluation: { decision: string }; simulated: boolean }) => void): unknown;
  checkpoints: { readonly newest: { size: number } | null; newestAgeMs(): number };
  checkpointIntervalMs: number;
  /** The simulated flight: it runs on exactly one replica at a time (the leader). */
  flight: { readonly running: boolean };
}

export function operatorMetrics(registry: Registry, src: OperatorSources): void {
  const registers = [registry];
  const verdicts = new Counter({
    name: 'svc_verdicts_total',
    help: 'Verdicts appended to the ledger by this replica, by decision and by whether the simulated flight made them',
    labelNames: ['decision', 'simulated'],
    registers,
  });
  // every series from the first scrape: rate() and the dashboard see a zero, not a gap
  for (const decision of DECISIONS) for (const simulated of ['true', 'false']) verdicts.inc({ decision, simulated }, 0);
  src.onVerdict((v) => verdicts.inc({ decision: v.evaluation.decision, simulated: String(v.simulated) }));

  new Gauge({ name: 'svc_build_info', help: 'Always 1: the running build (package version, git commit, Node version) in its labels', labelNames: ['version', 'commit', 'node'], registers }).set({ ...src.build }, 1);

  new Gauge({
    name: 'svc_replica_role',
    help: 'Roles this replica holds right now, 1 held, 0 not: flight_leader runs the one shared simulated flight',
    labelNames: ['role'],
    registers,
    collect() {
      this.set({ role: 'flight_leader' }, src.flight.running ? 1 : 0);
    },
  });

  const checkpoints = src.checkpoints;
  new Gauge({
    name: 'svc_ledger_checkpoint_size',
    help: 'Nodes covered by the newest signed checkpoint (0 before the first); svc_ledger_nodes minus this is the uncovered tail',
    registers,
    collect() {
      this.set(checkpoints.newest?.size ?? 0);
    },
  });
  new Gauge({
    name: 'svc_ledger_checkpoint_age_seconds',
    help: 'Seconds since the newest checkpoint was signed (or read at start); before the first, since start. A new one is signed only when the log grew',
    registers,
    collect() {
      this.set(checkpoints.newestAgeMs() / 1000);
    },
  });
  new Gauge({ name: 'svc_ledger_checkpoint_interval_seconds', help: 'ledger.checkpointIntervalMs: a grown log gets a checkpoint at most this long after its last one', registers }).set(src.checkpointIntervalMs / 1000);
}
