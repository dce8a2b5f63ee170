/**
 * Response schemas of the security views: top-level keys exact, nested records open (they list
 * the running service's routes, components and checks, which grow with it).
 */
import { bool, hex64, int, isoTime, listOf, object, oneOf, openShape, shape, str } from '../http/response-schema.js';

const STATUS = oneOf('pass', 'warn', 'fail');
const TAIL = { honesty: str(), limits: listOf(shape({ code: str(), detail: str() })), sources: listOf(openShape({ leader: str(), kind: str(), url: str(), data_kind: str() })) };
const view = (schema: string, keys: Parameters<typeof shape>[0]) => shape({ schema: oneOf(schema), doctrine: str(), ...keys, ...TAIL });
const records = (description: string) => listOf(object()).description(description);

export const ATTACK_SURFACE = view('svc.attack-surface/v1', {
  generated_at: isoTime(),
  nodes: records('entry points (one per route), components, assets and upstream hosts'),
  edges: records('reachability between nodes'),
  paths: records('entry point → asset paths with their technique mapping'),
  summary: openShape({ entry_points: int().min(0), mutating: int().min(0), egress: int().min(0), kernel: int().min(0), stream: int().min(0), unauthenticated: int().min(0) }),
  graph_sha256: hex64(),
});

export const POSTURE_DRIFT = view('svc.posture-drift/v1', {
  generated_at: isoTime(),
  baseline: shape({ id: str(), version: str(), sha256: hex64(), file: str() }),
  env: str(),
  current_sha256: hex64(),
  checks: listOf(openShape({ id: str(), status: oneOf('pass', 'drift', 'approved_deviation', 'not_applicable') })),
  summary: shape({ pass: int().min(0), drift: int().min(0), approved_deviation: int().min(0), not_applicable: int().min(0), total: int().min(0) }),
});

export const ZERO_TRUST = view('svc.zerotrust-mesh/v1', {
  generated_at: isoTime(),
  policy_engine: shape({ description: str(), routes: int().min(0), routes_with_schemas: int().min(0) }),
  policy_administrator: shape({ description: str(), issues_credentials: bool() }),
  peps: records('policy enforcement points: the middleware chain, in order'),
  data_sources: shape({ activity_log: object(), cdm: object(), pki: object(), id_management: object() }),
  subjects: records('who calls the service'),
  flows: records('request flows through the enforcement points'),
  tenets: records('NIST SP 800-207 tenets and how each is met'),
  decisions: shape({ allow: int().min(0), deny_by_reason: object().description('counts by reason'), errors: int().min(0), total: int().min(0), basis: str() }),
  recent_decisions: records('the most recent decisions (in-memory ring)'),
});

export const TOPOLOGY = view('svc.topology-health/v1', {
  status: STATUS,
  generated_at: isoTime(),
  nodes: listOf(openShape({ componentId: str(), componentType: str(), status: STATUS, output: str().optional(), observations: listOf(object()) })),
  edges: records('links between components with their counters'),
});

