/**
 * Posture drift: the committed baseline (src/security/posture-baseline.json, read at run time from
 * the project root because the build compiles .ts only) compared with what the running process
 * really does: its route table, validated config, live pool, the headers and error bodies of
 * in-process responses, the published key and the ADS-B providers. The route inventory is the
 * baseline's list plus the kernel registry's routes: a kernel is reviewed where it is registered,
 * so the baseline never lists one.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson, sha256Hex } from '../lib/numbers.js';
import { projectRoot } from '../config/load.js';
import type { RouteDef } from '../http/route.js';
import type { Observed } from '../introspection/observed.js';
import { envelope, SOURCES } from '../core/envelope.js';
import { API } from '../isomorphic/api.js';
import { routeKey, unboundedNumbers } from '../introspection/route-inventory.js';
import { kernelPath } from '../../workers/kernel-def.js';
import type { KernelRegistry } from '../../workers/registry.js';

export type Comparison = 'equal' | 'at_most' | 'between' | 'one_of' | 'node_at_least';
export type CheckStatus = 'pass' | 'drift' | 'approved_deviation' | 'not_applicable';

export interface BaselineCheck {
  id: string;
  title: string;
  category: string;
  comparison: Comparison;
  expected: unknown;
  severity: 'low' | 'medium' | 'high';
  rationale: string;
  remediation: string;
  reference: string;
}

export interface Deviation {
  check_id: string;
  env: string;
  match: 'equals' | 'loopback_only';
  actual?: unknown;
  reason: string;
  reference: string;
}

export interface Baseline {
  id: string;
  version: string;
  description: string;
  checks: BaselineCheck[];
  approved_deviations: Deviation[];
  adsb_allowlist: string[];
  route_inventory: string[];
}

export const BASELINE_FILE = join('src', 'security', 'posture-baseline.json');

export function loadBaseline(file: string = join(projectRoot(), BASELINE_FILE)): { baseline: Baseline; sha256: string } {
  const text = readFileSync(file, 'utf8');
  const baseline = JSON.parse(text) as Baseline;
  return { baseline, sha256: sha256Hex(canonicalJson(baseline)) };
}

/** NOT_APPLICABLE marks an actual value that cannot exist in this process (e.g. no ADS-B feature). */
const NOT_APPLICABLE = Symbol('not_applicable');

type Actual = unknown;

function compare(c: BaselineCheck, actual: Actual): boolean {
  const e = c.expected;
  switch (c.comparison) {
    case 'equal':
      return isDeepStrictEqual(actual, e);
    case 'at_most':
      return typeof actual === 'number' && actual <= (e as number);
    case 'between':
      return typeof actual === 'number' && actual >= (e as number[])[0]! && actual <= (e as number[])[1]!;
    case 'one_of':
      return (e as unknown[]).includes(actual);
    case 'node_at_least': {
      const a = String(actual).replace(/^v/, '').split('.').map(Number);
      const b = String(e).split('.').map(Number);
      for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
      return true;
    }
    default:
      return false;
  }
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/;

function approved(d: Deviation, actual: Actual): boolean {
  if (d.match === 'equals') return isDeepStrictEqual(actual, d.actual);
  if (d.match === 'loopback_only') {
    return Array.isArray(actual) && actual.length > 0 && actual.every((v: { host?: string }) => typeof v.host === 'string' && LOOPBACK.test(v.host));
  }
  return false;
}

/** The CSP directive `name` from a policy string, or null. */
function cspDirective(csp: string | undefined, name: string): string | null {
  if (!csp) return null;
  for (const part of csp.split(';')) {
    const [k, ...v] = part.trim().split(/\s+/);
    if (k === name) return v.join(' ');
  }
  return null;
}

const LEAK = /\n\s+at\s|\(?\/[\w./-]+\.(?:ts|js|mjs):\d+|node_modules|\b(?:TypeError|ReferenceError|SyntaxError)\b/;

/** The routes of the registry's kernels, as route keys: the part of the inventory the registry derives. */
export function kernelRouteInventory(kernels: KernelRegistry): string[] {
  return kernels.kernels.map((def) => routeKey({ method: 'GET', path: `${API}${kernelPath(def)}` }));
}

/** The checks that depend only on the route table (fixed once the app is built). */
function routeChecks(routes: readonly RouteDef[], baseline: Baseline, kernels: KernelRegistry): Record<string, Actual> {
  const inventory = new Set([...baseline.route_inventory, ...kernelRouteInventory(kernels)]);
  return {
    'route-inventory': routes.map(routeKey).filter((k) => !inventory.has(k)).sort(),
    'numeric-params-bounded': routes.flatMap((r) => [
      ...unboundedNumbers(r.query, `${routeKey(r)} query`),
      ...unboundedNumbers(r.params, `${routeKey(r)} path`),
      ...(r.body && r.body !== 'text' ? unboundedNumbers(r.body, `${routeKey(r)} body`) : []),
    ]),
  };
}

/** Reads the current value of every baseline check from the running process. */
export async function currentState(s: Observed, baseline: Baseline, fixed: Record<string, Actual>): Promise<Record<string, Actual>> {
  const ip = s.inProcess;
  const routes = s.routeTable();
  const keys = routes.map(routeKey);
  const api = await ip.get(`${API}/doctrine`);
  const htmlRoute = routes.find((r) => r.html && !/[:*]/.test(r.path));
  const html = htmlRoute ? await ip.get(htmlRoute.path) : null;

  const probes: { path: string; why: string }[] = [{ path: `${API}/__posture-probe-not-found`, why: '404' }];
  const queryRoute = routes.find((r) => r.method === 'GET' && r.query && !/[:*]/.test(r.path) && r.tag === 'kernels');
  if (queryRoute) probes.push({ path: `${queryRoute.path}?__posture_probe=1`, why: '422' });
  const leaks: { path: string; status: number }[] = [];
  for (const p of probes) {
    const r = await ip.get(p.path);
    if (LEAK.test(r.body.toString('utf8'))) leaks.push({ path: p.path, status: r.status });
  }

  const allow = new Set(baseline.adsb_allowlist);
  const upstreamViolations = s.adsb().providers.flatMap((p) => {
    let u: URL;
    try {
      u = new URL(p.url);
    } catch {
      return [{ provider: p.name, host: p.url, reason: 'not a URL' }];
    }
    const reasons = [u.protocol !== 'https:' ? 'not HTTPS' : null, allow.has(u.hostname) ? null : 'host not on the allowlist'].filter(Boolean);
    return reasons.length ? [{ provider: p.name, host: u.host, reason: reasons.join(', ') }] : [];
  });

  let signing: Actual = null;
  if (keys.includes(`GET ${API}/edge/pubkey.pem`)) {
    const pem = await ip.get(`${API}/edge/pubkey.pem`);
    try {
      const key = createPublicKey(pem.body.toString('utf8'));
      const keyid = createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
      signing = { key_type: key.asymmetricKeyType ?? null, curve: key.asymmetricKeyDetails?.namedCurve ?? null, keyid_matches_signer: keyid === s.ledger.keyid };
    } catch (err) {
      signing = { error: (err as Error).message };
    }
  }
  const ledgerDoc = keys.includes(`GET ${API}/ledger/readiness`) ? (await ip.getJson<{ durability_state?: string }>(`${API}/ledger/readiness`)).body : null;

  return {
    'route-inventory': fixed['route-inventory'],
    'http-json-limit': s.config.http.jsonLimitBytes,
    'http-xml-limit': s.config.http.xmlLimitBytes,
    'numeric-params-bounded': fixed['numeric-params-bounded'],
    'kernel-time-budget': s.config.pool.taskDeadlineMs,
    'pool-queue-bound': s.config.pool.maxQueue,
    'worker-pool-size': s.pool.snapshot().threads,
    'security-headers-api': {
      'x-content-type-options': api.headers['x-content-type-options'] ?? null,
      'x-frame-options': api.headers['x-frame-options'] ?? null,
      'referrer-policy': api.headers['referrer-policy'] ?? null,
      'cross-origin-resource-policy': api.headers['cross-origin-resource-policy'] ?? null,
      'csp-default-src': cspDirective(api.headers['content-security-policy'], 'default-src'),
      'csp-frame-ancestors': cspDirective(api.headers['content-security-policy'], 'frame-ancestors'),
    },
    'security-headers-html': html
      ? {
          'x-frame-options': html.headers['x-frame-options'] ?? null,
          'csp-frame-ancestors': cspDirective(html.headers['content-security-policy'], 'frame-ancestors'),
          'csp-default-src': cspDirective(html.headers['content-security-policy'], 'default-src'),
        }
      : NOT_APPLICABLE,
    'hsts-only-with-tls': api.headers['strict-transport-security'] ?? null,
    'errors-without-internals': leaks,
    'adsb-upstreams-https-allowlisted': upstreamViolations,
    'ledger-mode': ledgerDoc?.durability_state ?? null,
    'signing-algorithm': signing,
    'node-version': process.versions.node,
    'log-level': s.config.log.level,
    'trust-proxy': ip.koa().proxy,
  };
}

export interface CheckResult extends BaselineCheck {
  actual: unknown;
  status: CheckStatus;
  deviation?: { reason: string; reference: string };
}

export function evaluate(baseline: Baseline, state: Record<string, Actual>, env: string): CheckResult[] {
  return baseline.checks.map((c) => {
    const actual = state[c.id];
    if (actual === NOT_APPLICABLE) return { ...c, actual: null, status: 'not_applicable' as const };
    if (!(c.id in state)) return { ...c, actual: null, status: 'drift' as const };
    if (compare(c, actual)) return { ...c, actual, status: 'pass' as const };
    const dev = baseline.approved_deviations.find((d) => d.check_id === c.id && d.env === env && approved(d, actual));
    if (dev) return { ...c, actual, status: 'approved_deviation' as const, deviation: { reason: dev.reason, reference: dev.reference } };
    return { ...c, actual, status: 'drift' as const };
  });
}

interface Prepared {
  baseline: Baseline;
  sha256: string;
  fixed: Record<string, Actual>;
}

/**
 * The view of one app. The committed baseline and the route-table checks are computed once: the
 * table and the file do not change while it runs, and walking every route's schema on a request
 * blocked the loop ~100 ms. `drift(file)` reads another baseline on each call (tests).
 */
export function postureView(s: Observed, kernels: KernelRegistry): { prepare(): Promise<void>; drift(file?: string): Promise<Record<string, unknown>> } {
  let p: Promise<Prepared> | null = null;
  const prepared = (file: string | undefined): Prepared => {
    const { baseline, sha256 } = loadBaseline(file);
    return { baseline, sha256, fixed: routeChecks(s.routeTable(), baseline, kernels) };
  };
  const prepare = (): Promise<Prepared> => (p ??= s.routesDescribed().then(() => prepared(undefined)));
  return {
    prepare: () => prepare().then(() => undefined),
    drift: async (file) => postureDrift(s, file === undefined ? await prepare() : prepared(file)),
  };
}

async function postureDrift(s: Observed, { baseline, sha256, fixed }: Prepared): Promise<Record<string, unknown>> {
  const state = await currentState(s, baseline, fixed);
  const checks = evaluate(baseline, state, s.config.env);
  const summary = { pass: 0, drift: 0, approved_deviation: 0, not_applicable: 0, total: checks.length };
  for (const c of checks) summary[c.status]++;
  return envelope('svc.posture-drift/v1', {
    generated_at: new Date().toISOString(),
    baseline: { id: baseline.id, version: baseline.version, sha256, file: BASELINE_FILE.replace(/\\/g, '/') },
    env: s.config.env,
    current_sha256: sha256Hex(canonicalJson(checks.map((c) => ({ id: c.id, actual: c.actual })))),
    checks: checks.map(({ id, title, category, comparison, expected, actual, status, severity, rationale, remediation, reference, deviation }) => ({
      id,
      title,
      category,
      comparison,
      expected,
      actual,
      status,
      severity,
      rationale,
      remediation,
      reference,
      ...(deviation ? { deviation } : {}),
    })),
    summary,
    honesty: 'Every actual value is read from this process at request time (config, route table, pool, in-process responses); the expected values are the committed baseline.',
    limits: [{ code: 'SELF_ASSESSMENT', detail: 'The service inspects itself; a proxy or TLS terminator in front of it is outside this view.' }],
    sources: [SOURCES.cm2, SOURCES.cm86, SOURCES.headers, SOURCES.owaspApi],
  });
}
