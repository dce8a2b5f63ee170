/**
 * Elite wiring and its health. probe=false is passive (the same statuses as topology health);
 * probe=true also runs one read-only active probe per node under a per-probe timeout and a total
 * budget. Nothing a probe does reaches the ledger.
 */
import type { HealthStatus } from '../platform/health.js';
import type { Observed } from '../introspection/observed.js';
import { envelope, SOURCES } from '../core/envelope.js';
import { API } from '../isomorphic/api.js';
import { adsbProbe, cotProbe, fleetProbe, hasRoute, ledgerProbe, poolProbe, signerProbe, withBudget, type ProbeResult } from './probes.js';
import { NODES, WIRES, WIRING_SHA256 } from '../introspection/components.js';
import { passiveNodes, registrations, worst } from '../introspection/component-status.js';

export const PROBE_TIMEOUT_MS = 2_500;
export const PROBE_BUDGET_MS = 5_000;

export function wiringDocument(s: Observed): Record<string, unknown> {
  const regs = registrations(s);
  const byId = new Map(regs.map((r) => [r.id, r]));
  return envelope('svc.elite-wiring/v1', {
    generated_at: new Date().toISOString(),
    nodes: NODES.map((n) => ({ ...n, registered_at_start: byId.get(n.id)?.registered ?? false })),
    wires: WIRES,
    registered_at_start: regs,
    mesh_wires: Object.fromEntries(WIRES.filter((w) => w.mesh_wire).map((w) => [w.mesh_wire, w.id])),
    wiring_sha256: WIRING_SHA256,
    honesty: 'A declarative table of components and links, each component checked against the running app (its route or published service present).',
    limits: [{ code: 'STATIC_TABLE', detail: 'Links are declared in code; counts for them are in /topology/health and /elite/wiring/health.' }],
    sources: [internal('Mesh wire board', '/mesh/state')],
  });
}

function internal(leader: string, url: string) {
  return { leader, kind: 'internal', url, data_kind: 'computed' };
}

const ok = (output: string): ProbeResult => ({ ok: true, latency_ms: 0.001, output });
const bad = (output: string): ProbeResult => ({ ok: false, latency_ms: 0.001, output });

async function timed(fn: () => Promise<ProbeResult>): Promise<ProbeResult> {
  const started = performance.now();
  const r = await fn();
  return { ...r, latency_ms: r.latency_ms > 0.001 ? r.latency_ms : Math.max(0.001, Math.round((performance.now() - started) * 1000) / 1000) };
}

/** One read-only active probe per component. */
function activeProbe(s: Observed, id: string): () => Promise<ProbeResult> {
  const ip = s.inProcess;
  switch (id) {
    case 'gateway':
      return () => timed(async () => {
        const r = await ip.get(`${API}/health`);
        return r.status === 200 || r.status === 503 ? ok(`health answered ${r.status} in-process`) : bad(`health answered ${r.status}`);
      });
    case 'validator':
      return () => timed(async () => {
        const r = await ip.get(`${API}/readiness/NOT_AN_ID/live`);
        return r.status === 422 ? ok('a malformed id is refused with 422') : bad(`a malformed id answered ${r.status}`);
      });
    case 'worker-pool':
      return () => poolProbe(s);
    case 'signer':
      return () => signerProbe(s);
    case 'ledger':
      return async () => ledgerProbe(s);
    case 'verdict-engine':
      return async () => (hasRoute(s, `POST ${API}/verdict`) ? ok('route mounted; not exercised: a verdict would append to the ledger') : bad('route not mounted'));
    case 'sse-hub':
      return () => timed(async () => {
        if (!hasRoute(s, `GET ${API}/stream/verdicts`)) return bad('stream route not mounted');
        const mesh = hasRoute(s, 'GET /mesh/state') ? (await ip.getJson<{ wires?: { C?: { status: string } } }>('/mesh/state')).body : null;
        return mesh?.wires?.C ? ok(`accepting subscribers (wire C ${mesh.wires.C.status}); not subscribed: a viewer would start the simulated flight`) : bad('wire C missing from the wire board');
      });
    case 'scene-buffer':
      return () => timed(async () => {
        if (!hasRoute(s, `GET ${API}/edge/3d`)) return bad('scene route not mounted');
        const r = await ip.get(`${API}/edge/3d`);
        return r.status === 200 ? ok('scene document built') : bad(`scene answered ${r.status}`);
      });
    case 'cortex-bus':
      return () => timed(async () => {
        if (!hasRoute(s, 'GET /mesh/state')) return bad('wire board not mounted');
        const m = (await ip.getJson<{ wires?: { E?: { status: string } } }>('/mesh/state')).body;
        return m?.wires?.E ? ok(`wire E ${m.wires.E.status}`) : bad('wire E missing');
      });
    case 'trace-ring':
      return async () => (s.traces.capacity > 0 ? ok(`${s.traces.size} traces readable`) : bad('no trace ring'));
    case 'metrics-registry':
      // the scrape route is not called: its collectors reset the event-loop window
      return async () => {
        const families = s.metrics.registry.getMetricsAsArray().map((m) => m.name);
        return families.includes('http_requests_total') ? ok(`${families.length} families registered`) : bad('http_requests_total missing');
      };
    case 'adsb-cache':
    case 'adsb-upstreams':
      return () => adsbProbe(s);
    case 'cot':
      return () => cotProbe(s);
    case 'fleet-dataset':
      return () => fleetProbe(s);
    default:
      return async () => bad('no probe defined');
  }
}

const CAPPED = new Set(['adsb-cache', 'adsb-upstreams']);

export async function wiringHealth(s: Observed, probe: boolean): Promise<Record<string, unknown>> {
  const started = performance.now();
  const { nodes } = await passiveNodes(s);
  const deadline = performance.now() + PROBE_BUDGET_MS;
  // the two ADS-B nodes share one probe run (one GET per upstream at most)
  let adsbRun: Promise<ProbeResult> | null = null;
  const actives = probe
    ? await Promise.all(
        nodes.map((n) => {
          const run = CAPPED.has(n.componentId) ? () => (adsbRun ??= activeProbe(s, n.componentId)()) : activeProbe(s, n.componentId);
          const budget = Math.min(PROBE_TIMEOUT_MS, deadline - performance.now());
          return withBudget(
            run().catch((err: unknown) => bad(`probe threw: ${(err as Error).message}`)),
            budget,
            (): ProbeResult => ({ ok: false, latency_ms: budget, output: `timed out after ${Math.round(budget)} ms` }),
          );
        }),
      )
    : nodes.map(() => null);
  const out = nodes.map((n, i) => {
    const active = actives[i] ?? null;
    let status: HealthStatus = active && !active.ok ? 'fail' : n.status;
    if (active && !active.ok && n.status === 'fail') status = 'fail';
    if (CAPPED.has(n.componentId) && status === 'fail') status = 'warn';
    return {
      id: n.componentId,
      status,
      passive: { status: n.status, output: n.output, observations: n.observations },
      active: active ? { ok: active.ok, latency_ms: active.latency_ms, output: active.output, ...(active.details ? { details: active.details } : {}) } : null,
    };
  });
  return envelope('svc.elite-wiring-health/v1', {
    probe,
    status: worst(out.map((n) => n.status)),
    generated_at: new Date().toISOString(),
    nodes: out,
    total_ms: Math.round((performance.now() - started) * 1000) / 1000,
    honesty: probe
      ? 'Passive status plus one read-only active probe per component; probes never append to the ledger and hit each ADS-B upstream at most once per 10 s.'
      : 'Passive only: last-known counters and results; nothing was probed.',
    limits: [{ code: 'ADSB_CAPPED_AT_WARN', detail: 'ADS-B failures are reported as warn: the feed degrades to live=false by design.' }],
    sources: [SOURCES.healthDraft, SOURCES.k8sProbes],
  });
}
