/**
 * Response schemas of the security views: top-level keys exact, records described to their leaves;
 * the lists (routes, components, checks) grow with the service, their members' shapes do not.
 */
import Joi from 'joi';
import { bool, hex64, int, isoTime, listOf, mapOf, nullable, num, oneOf, openShape, shape, str } from '../http/response-schema.js';

const STATUS = oneOf('pass', 'warn', 'fail');
const TAIL = { honesty: str(), limits: listOf(shape({ code: str(), detail: str() })), sources: listOf(openShape({ leader: str(), kind: str(), url: str(), data_kind: str() })) };
const view = (schema: string, keys: Parameters<typeof shape>[0]) => shape({ schema: oneOf(schema), doctrine: str(), ...keys, ...TAIL });
const records = (item: Joi.Schema, description: string) => listOf(item).description(description);

/** The attributes of an attack-surface node, by its `kind`. */
const NODE_ATTRS = Joi.alternatives(
  shape({ protocol: str(), tls_terminates_here: bool().optional(), media_type: str().optional() }),
  shape({ thread: oneOf('main', 'worker'), owns_state: bool(), module: str() }),
  shape({ asset: str(), property: str() }),
  shape({ providers: listOf(str()), scheme: str() }),
  shape({
    method: oneOf('GET', 'POST'),
    path: str(),
    params: listOf(str()),
    has_body: bool(),
    body_limit_bytes: nullable(int()),
    mutates: bool(),
    egress: bool(),
    cost_class: oneOf('cheap', 'kernel', 'stream'),
    auth: str(),
    techniques: listOf(shape({ id: str(), name: str(), reason: str() })),
  }),
);

export const ATTACK_SURFACE = view('svc.attack-surface/v1', {
  generated_at: isoTime(),
  nodes: records(shape({ id: str(), kind: oneOf('channel', 'component', 'asset', 'external', 'entry'), label: str(), attrs: NODE_ATTRS }), 'entry points (one per route), components, assets and upstream hosts'),
  edges: records(shape({ from: str(), to: str(), relation: oneOf('calls', 'egress', 'reads', 'writes'), observed: nullable(int()) }), 'reachability between nodes'),
  paths: records(shape({ entry: str(), asset: str(), access: oneOf('read', 'write'), path: listOf(str()) }), 'entry point → asset paths with their technique mapping'),
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
  peps: records(shape({ order: int(), name: str(), role: str() }), 'policy enforcement points: the middleware chain, in order'),
  data_sources: shape({
    activity_log: shape({ kind: str(), level: str() }),
    cdm: shape({ kind: str(), drift: int().min(0), current_sha256: hex64() }),
    pki: shape({ kind: str(), keyid: str() }),
    id_management: shape({ kind: str(), detail: str() }),
  }),
  subjects: records(
    shape({ subject: str(), kind: str(), authentication: str().optional(), requests_seen: int().optional(), threads: int().optional(), host: str().optional(), scheme: str().optional(), tls_verification: bool().optional() }),
    'who calls the service',
  ),
  flows: records(
    shape({
      from: str(),
      to: str(),
      channel: str(),
      scheme_counts: shape({ http: int(), https: int() }).optional(),
      basis: str().optional(),
      note: str().optional(),
      same_process: bool().optional(),
      completed_tasks: int().optional(),
      certificate_verification: bool().optional(),
    }),
    'request flows through the enforcement points',
  ),
  tenets: records(shape({ n: int(), text: str(), status: str(), evidence: str() }), 'NIST SP 800-207 tenets and how each is met'),
  decisions: shape({ allow: int().min(0), deny_by_reason: mapOf(int().min(0)).description('counts by reason'), errors: int().min(0), total: int().min(0), basis: str() }),
  recent_decisions: records(shape({ trace_id: str(), route: str(), status: int(), ms: num(), decision: oneOf('allow', 'deny', 'error'), reason: str() }), 'the most recent decisions (in-memory ring)'),
});

/** One IETF health-check observation of a component. */
const OBSERVATION = shape({ measurement: str(), observedValue: nullable(Joi.alternatives(bool(), num(), str())), observedUnit: str(), basis: str(), time: isoTime() });

export const TOPOLOGY = view('svc.topology-health/v1', {
  status: STATUS,
  generated_at: isoTime(),
  nodes: listOf(openShape({ componentId: str(), componentType: str(), status: STATUS, output: str().optional(), observations: listOf(OBSERVATION) })),
  edges: records(shape({ id: str(), from: str(), to: str(), calls: nullable(int()), errors: nullable(int()) }), 'links between components with their counters'),
});

