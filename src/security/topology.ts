/**
 * Topology health: the elite-wiring component set, each node with a passive status from last-known
 * counters (IETF health-check vocabulary). Overall is the worst node, with ADS-B capped at warn
 * because /adsb degrades to live=false by design (honesty rule 1).
 */
import type { HealthStatus } from '../platform/health.js';
import type { Observed } from '../introspection/observed.js';
import { passiveNodes, wireCounts, worst } from '../introspection/component-status.js';
import { envelope, SOURCES } from '../core/envelope.js';

const CAPPED = new Set(['adsb-cache', 'adsb-upstreams']);

export function overall(nodes: readonly { componentId: string; status: HealthStatus }[]): HealthStatus {
  return worst(nodes.map((n) => (CAPPED.has(n.componentId) && n.status === 'fail' ? 'warn' : n.status)));
}

export async function topologyHealth(s: Observed): Promise<Record<string, unknown>> {
  const { nodes, counts, mesh } = await passiveNodes(s);
  return envelope('svc.topology-health/v1', {
    status: overall(nodes),
    generated_at: new Date().toISOString(),
    nodes,
    edges: wireCounts(s, counts, mesh),
    honesty: 'Passive only: every status comes from counters and last-known results of this process; nothing is probed and no upstream is called.',
    limits: [{ code: 'ADSB_CAPPED_AT_WARN', detail: 'An ADS-B failure is reported as warn: the feed degrades to live=false and never fabricates aircraft.' }],
    sources: [SOURCES.healthDraft, SOURCES.piscina],
  });
}
