/**
 * Zero-trust mesh: NIST SP 800-207's logical components and seven tenets mapped onto what this
 * process really has. PEPs are the app's actual middleware chain in order; decisions come from the
 * request counters; tenet statuses are computed from them and from the posture drift, never
 * asserted.
 */
import type { Observed } from '../introspection/observed.js';
import { envelope, SOURCES } from '../core/envelope.js';
import { countFor, requestCounts } from '../introspection/route-inventory.js';

const PEP_ROLES: Record<string, string> = {
  requestContextMiddleware: 'request id, W3C trace, security headers, access log and metrics on every answer; maps every failure to a FastAPI-shaped status and body (5xx bodies never carry internals)',
  writeGuardMiddleware: 'write routes: bearer write token when configured (401), per-client write rate limit (429)',
  routeDispatch: 'static routes: per-route body size limit (413), content type (415), joi validation (422), then the handler; 405 with Allow for a known path under another method, 404 for an unknown one',
  'bound dispatchMiddleware': 'parameterised routes (@koa/router): same per-route checks as static dispatch',
};

type Decision = 'allow' | 'deny' | 'error';

/** The policy decision a response status stands for, and why. */
export function decisionOf(status: number): { decision: Decision; reason: string } {
  if (status < 400) return { decision: 'allow', reason: 'valid request' };
  const reasons: Record<number, string> = {
    404: 'not_found_404',
    405: 'method_405',
    413: 'body_413',
    415: 'media_type_415',
    422: 'validation_422',
    499: 'client_closed',
    503: 'capacity_503',
    504: 'timeout',
  };
  if (reasons[status]) return { decision: 'deny', reason: reasons[status] };
  return status >= 500 ? { decision: 'error', reason: `error_${status}` } : { decision: 'deny', reason: `other_${status}` };
}

export async function zeroTrustMesh(s: Observed, postureDrift: () => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  const counts = await requestCounts(s);
  const ip = s.inProcess;
  const chain = ip.koa().middleware.map((fn) => (fn as { name: string }).name);
  const total = countFor(counts, () => true);
  const denyByReason: Record<string, number> = { validation_422: 0, body_413: 0, not_found_404: 0, method_405: 0, media_type_415: 0, capacity_503: 0, timeout: 0, client_closed: 0 };
  let allow = 0;
  let errors = 0;
  for (const c of counts) {
    const d = decisionOf(c.status);
    if (d.decision === 'allow') allow += c.count;
    else if (d.decision === 'error') errors += c.count;
    else denyByReason[d.reason] = (denyByReason[d.reason] ?? 0) + c.count;
  }
  const drift = (await postureDrift()) as { summary: { drift: number; total: number }; current_sha256: string };
  const adsb = s.adsb();
  // Node's TLS stack verifies upstream certificates unless this variable turns it off
  const tlsVerify = process.env.NODE_TLS_REJECT_UNAUTHORIZED !== '0';
  const upstreams = adsb.providers.map((p) => {
    let scheme = 'unknown';
    let host = p.url;
    try {
      const u = new URL(p.url);
      scheme = u.protocol.replace(/:$/, '');
      host = u.host;
    } catch {
      // reported as unknown
    }
    return { subject: `upstream:${p.name}`, kind: 'upstream_host', host, scheme, tls_verification: scheme === 'https' ? tlsVerify : false };
  });
  const pool = s.pool.snapshot();
  const metricFamilies = s.metrics.registry.getMetricsAsArray().length;

  const tenets = [
    {
      n: 1,
      text: 'All data sources and computing services are considered resources.',
      status: 'met',
      evidence: `${s.routeTable().length} entry points inventoried from the live route table (see /attack-surface/graph)`,
    },
    {
      n: 2,
      text: 'All communication is secured regardless of network location.',
      status: 'partial',
      evidence: `${total} requests reached this process over plain HTTP (node:http, no TLS here); ADS-B egress is ${upstreams.length ? upstreams.map((u) => u.scheme).join('/') : 'not configured'} with certificate verification ${tlsVerify ? 'on' : 'OFF'}; worker traffic stays in-process`,
    },
    {
      n: 3,
      text: 'Access to individual enterprise resources is granted on a per-session basis.',
      status: 'not_met',
      evidence: 'no sessions or credentials exist; each request is validated on its own but no subject is identified',
    },
    {
      n: 4,
      text: 'Access to resources is determined by dynamic policy.',
      status: 'partial',
      evidence: `policy is static validation plus load-dependent shedding: ${denyByReason.capacity_503} requests shed (503), ${denyByReason.timeout} cut at their deadline (504)`,
    },
    {
      n: 5,
      text: 'The enterprise monitors and measures the integrity and security posture of all owned and associated assets.',
      status: drift.summary.drift === 0 ? 'met' : 'partial',
      evidence: `posture drift: ${drift.summary.drift} of ${drift.summary.total} baseline checks drifting; ledger integrity re-checked by /health and evidence`,
    },
    {
      n: 6,
      text: 'All resource authentication and authorization are dynamic and strictly enforced before access is allowed.',
      status: 'not_met',
      evidence: 'the interface defines no authentication: every route is public (auth: none)',
    },
    {
      n: 7,
      text: 'The enterprise collects as much information as possible about the current state of assets, network infrastructure and communications and uses it to improve its security posture.',
      status: metricFamilies > 0 && s.traces.capacity > 0 ? 'met' : 'partial',
      evidence: `${metricFamilies} metric families, ${s.traces.total} requests traced, posture drift computed against a committed baseline`,
    },
  ];

  return envelope('svc.zerotrust-mesh/v1', {
    generated_at: new Date().toISOString(),
    policy_engine: {
      description: 'route policy table (method, path, joi schemas, body limits) and the validation decisions it makes',
      routes: s.routeTable().length,
      routes_with_schemas: s.routeTable().filter((r) => r.query || r.params || r.body).length,
    },
    policy_administrator: { description: 'in-process only; no session credentials are issued', issues_credentials: false },
    peps: chain.map((name, i) => ({ order: i + 1, name, role: PEP_ROLES[name] ?? 'unrecognised middleware' })),
    data_sources: {
      activity_log: { kind: 'pino JSON, one line per request', level: s.config.log.level },
      cdm: { kind: 'posture drift against the committed baseline', drift: drift.summary.drift, current_sha256: drift.current_sha256 },
      pki: { kind: 'receipt signing key only (no client certificates)', keyid: s.ledger.keyid },
      id_management: { kind: 'none', detail: 'no identities are managed' },
    },
    subjects: [
      { subject: 'http-clients', kind: 'anonymous', authentication: 'none', requests_seen: total },
      { subject: 'worker-threads', kind: 'in-process', authentication: 'not applicable (same process)', threads: pool.threads },
      ...upstreams,
    ],
    flows: [
      {
        from: 'client',
        to: 'gateway',
        channel: 'http',
        scheme_counts: { http: total, https: 0 },
        basis: 'measured',
        note: 'counted requests; the listener is node:http with trust-proxy off, so no request can reach this process over TLS',
      },
      { from: 'gateway', to: 'worker-pool', channel: 'message_port', same_process: true, completed_tasks: pool.completed },
      ...upstreams.map((u) => ({ from: 'gateway', to: u.subject, channel: u.scheme, certificate_verification: u.tls_verification })),
    ],
    tenets,
    decisions: { allow, deny_by_reason: denyByReason, errors, total, basis: 'measured' },
    recent_decisions: s.traces
      .toArray()
      .slice(-32)
      .map((t) => ({ trace_id: t.traceparent.slice(3, 35), route: t.route, status: t.status, ms: t.ms, ...decisionOf(t.status) })),
    honesty: 'Components and tenets are mapped onto what this process really has; counts are its own request counters, PEPs its real middleware chain. Tenets 3 and 6 are not met because the interface defines no authentication.',
    limits: [
      { code: 'NO_AUTHENTICATION', detail: 'No identity, session or authorization exists; every subject is anonymous.' },
      { code: 'PLAIN_HTTP_LISTENER', detail: 'The service listens with node:http; TLS, if any, terminates in front of it.' },
    ],
    sources: [SOURCES.sp800207, SOURCES.sp800207pe],
  });
}
