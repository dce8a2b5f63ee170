/**
 * Readiness sections, in the Kubernetes sense: can this process take traffic now. Each section
 * reads real observations and runs one read-only probe. Statuses use the health-check vocabulary;
 * overall is the worst section, ADS-B capped at warn.
 */
import type { HealthStatus } from '../platform/health.js';
import type { Observed } from '../introspection/observed.js';
import { API } from '../isomorphic/api.js';
import { adsbProbe, cotProbe, hasRoute, ledgerProbe, poolProbe, publishedKey, signerProbe, type ProbeResult } from './probes.js';

export interface SectionResult {
  section_id: string;
  status: HealthStatus;
  summary: string;
  checked_at: string;
  observations: Record<string, unknown>;
  probe: { ran: boolean; latency_ms: number | null; ok: boolean | null; output: string; details?: Record<string, unknown> };
}

interface Section {
  id: string;
  title: string;
  run(s: Observed, headers: Record<string, string>): Promise<Omit<SectionResult, 'section_id' | 'checked_at'>>;
}

const probeOf = (p: ProbeResult): SectionResult['probe'] => ({ ran: true, latency_ms: p.latency_ms, ok: p.ok, output: p.output, ...(p.details ? { details: p.details } : {}) });
const notRun = (output: string): SectionResult['probe'] => ({ ran: false, latency_ms: null, ok: null, output });

const ledgerSection: Section = {
  id: 'ledger',
  title: 'Ledger',
  async run(s) {
    if (!hasRoute(s, `GET ${API}/ledger/readiness`)) return { status: 'fail', summary: 'ledger readiness route not mounted', observations: {}, probe: notRun('no ledger readiness route') };
    const res = await s.inProcess.getJson<Record<string, unknown> & { ready: boolean; reason: string; integrity: { root: string; nodes: number } }>(`${API}/ledger/readiness`);
    const doc = res.body!;
    const probe = ledgerProbe(s);
    const d = probe.details as { recomputed_root: string | null; nodes: number };
    const agrees = d.nodes === doc.integrity.nodes && (d.nodes === 0 || d.recomputed_root === doc.integrity.root);
    const ok = probe.ok && agrees;
    return {
      status: doc.ready && ok ? 'pass' : 'fail',
      summary: doc.ready ? (ok ? `${doc.integrity.nodes} nodes, integrity recomputed` : 'recomputation disagrees with readiness') : doc.reason,
      observations: doc,
      probe: { ...probeOf(probe), ok },
    };
  },
};

const signingKeySection: Section = {
  id: 'signing-key',
  title: 'Signing key',
  async run(s, headers) {
    if (!hasRoute(s, `GET ${API}/edge/pubkey`)) return { status: 'fail', summary: 'public key route not mounted', observations: {}, probe: notRun('no key') };
    const pub = (await s.inProcess.getJson<{ keyid: string; public_key_url: string; ephemeral: boolean; created_at: string }>(`${API}/edge/pubkey`, headers)).body!;
    const key = await publishedKey(s);
    const curve = 'error' in key ? null : (key.key.asymmetricKeyDetails?.namedCurve ?? null);
    const observations = {
      alg: 'ES256',
      curve: curve === 'prime256v1' ? 'P-256' : curve,
      keyid: pub.keyid,
      keyid_derivation: 'hex SHA-256 of the DER SubjectPublicKeyInfo',
      public_key_url: pub.public_key_url,
      source: pub.ephemeral ? 'generated' : 'configured',
      created_at: pub.created_at,
    };
    const probe = await signerProbe(s);
    const keyidOk = !('error' in key) && key.keyid === pub.keyid;
    return {
      status: probe.ok && keyidOk ? 'pass' : 'fail',
      summary: probe.ok && keyidOk ? `P-256 key ${pub.keyid.slice(0, 16)}… signs in the pool and verifies${pub.ephemeral ? ' (generated at start)' : ''}` : probe.output,
      observations,
      probe: probeOf(probe),
    };
  },
};

const adsbSection: Section = {
  id: 'adsb-upstreams',
  title: 'ADS-B upstreams',
  async run(s) {
    const st = s.adsb();
    const probe = await adsbProbe(s);
    const observations = {
      upstreams: st.providers.map((p) => {
        let host: string | null = null;
        try {
          host = new URL(p.url).host;
        } catch {
          host = null;
        }
        return { id: p.name, host, last_status: p.lastStatus, last_success_at: p.lastOkAt, last_error: p.lastError, consecutive_failures: p.consecutiveFailures, breaker: p.breaker };
      }),
      cache: { aircraft: st.aircraft, age_s: st.snapshotAgeS, live: st.live },
    };
    return { status: st.live ? 'pass' : 'warn', summary: st.live ? `live, ${st.aircraft} aircraft` : `not live (capped at warn): ${probe.output}`, observations, probe: probeOf(probe) };
  },
};

const poolSection: Section = {
  id: 'worker-pool',
  title: 'Worker pool',
  async run(s) {
    const before = s.pool.snapshot();
    const detailed = s.pool.detailedSnapshot();
    const probe = await poolProbe(s);
    const after = s.pool.snapshot();
    const observations = {
      threads: before.threads,
      queue_size: before.queueSize,
      max_queue: before.maxQueue,
      busy: before.busy,
      utilization: detailed.utilization,
      completed: before.completed,
      crashes: before.crashes,
      run_time_ms: { p99: detailed.runP99Ms },
      wait_time_ms: { p99: detailed.waitP99Ms },
    };
    const status: HealthStatus = before.threads === 0 || !probe.ok ? 'fail' : before.queueSize >= before.maxQueue ? 'warn' : 'pass';
    return {
      status,
      summary: `${before.threads} threads, queue ${before.queueSize}/${before.maxQueue}; ${probe.output}`,
      observations,
      probe: { ...probeOf(probe), details: { ...(probe.details ?? {}), completed_after: after.completed } },
    };
  },
};

const cotSection: Section = {
  id: 'cot',
  title: 'Cursor on Target',
  async run(s) {
    const total = s.cot.tracksTotal();
    const valid = s.cot.tracksCotValid();
    const probe = await cotProbe(s);
    return {
      status: valid === total && probe.ok ? 'pass' : 'fail',
      summary: `${valid} of ${total} tracks CoT-valid; ${probe.output}`,
      observations: { tracks_total: total, tracks_cot_valid: valid, all_tracks_emittable: valid === total },
      probe: probeOf(probe),
    };
  },
};

export const SECTIONS: readonly Section[] = [ledgerSection, signingKeySection, adsbSection, poolSection, cotSection];

export async function runSection(s: Observed, section: Section, headers: Record<string, string> = {}): Promise<SectionResult> {
  const checkedAt = new Date().toISOString();
  try {
    const r = await section.run(s, headers);
    return { section_id: section.id, checked_at: checkedAt, ...r, status: section.id === 'adsb-upstreams' && r.status === 'fail' ? 'warn' : r.status };
  } catch (err) {
    const status: HealthStatus = section.id === 'adsb-upstreams' ? 'warn' : 'fail';
    return { section_id: section.id, status, summary: `check failed: ${(err as Error).message}`, checked_at: checkedAt, observations: {}, probe: notRun('not run: the check threw') };
  }
}
