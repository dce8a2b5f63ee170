/** Response schemas of the evidence, readiness and elite wiring views. */
import { bool, hex64, int, isoTime, jsonValue, listOf, mapOf, nullable, num, oneOf, openShape, shape, str } from '../http/response-schema.js';

const STATUS = oneOf('pass', 'warn', 'fail');
const CLAIM_STATUS = oneOf('verified', 'failed', 'not_applicable');
const LIMITS = listOf(shape({ code: str(), detail: str() }));
const SOURCE = shape({ leader: str(), kind: str(), url: str(), data_kind: str() });
/** What a check or probe computed: its keys depend on the claim or section and on the outcome. */
const observed = (description: string) => mapOf(jsonValue()).description(description);
/** One IETF health-check observation of a component. */
const OBSERVATION = shape({ measurement: str(), observedValue: nullable(jsonValue()), observedUnit: str(), basis: str(), time: isoTime() });

/** The common envelope: schema id and doctrine first, honesty, limits and sources last. */
const envelope = (schema: string, keys: Parameters<typeof shape>[0], tail: { sources?: boolean } = {}) =>
  shape({ schema: oneOf(schema), doctrine: str(), ...keys, honesty: str(), limits: LIMITS, ...(tail.sources === false ? {} : { sources: listOf(SOURCE) }) });

export const EVIDENCE_INDEX = envelope('svc.evidence-index/v1', {
  generated_at: isoTime(),
  refreshed_at: nullable(isoTime()).description('null before the first refresh'),
  refresh_count: int().min(0),
  stale_after_s: int().min(0),
  claims: listOf(
    shape({
      claim_id: str(),
      title: str(),
      statement: str(),
      status: oneOf('verified', 'failed', 'not_applicable', 'unchecked'),
      stale: bool(),
      last_checked_at: nullable(isoTime()),
      method: str(),
      sources_count: int().min(0),
      live_url: str(),
      sources_url: str(),
    }),
  ),
  summary: shape({ verified: int().min(0), failed: int().min(0), not_applicable: int().min(0), unchecked: int().min(0), stale: int().min(0) }),
});

export const EVIDENCE_REFRESH = shape({
  refreshed_at: isoTime(),
  duration_ms: num().min(0),
  results: shape({ verified: int().min(0), failed: int().min(0), not_applicable: int().min(0) }),
  changed: listOf(str()).description('claims whose status changed with this refresh'),
  index: EVIDENCE_INDEX,
});

export const EVIDENCE_CLAIM = envelope('svc.evidence-claim/v1', {
  claim_id: str(),
  title: str(),
  statement: str(),
  status: CLAIM_STATUS,
  reason: str(),
  checked_at: isoTime(),
  method: str(),
  observations: observed('the values the check computed (claim-specific)'),
});

export const EVIDENCE_SOURCES = envelope(
  'svc.evidence-sources/v1',
  {
    claim_id: str(),
    checked_at: isoTime(),
    sources: listOf(
      SOURCE.keys({
        live: openShape({ checked: bool() }).description('internal: checked true with status_code, content_type, body_sha256, latency_ms; external: checked false with the reason'),
      }),
    ),
  },
  { sources: false },
);

const PROBE = shape({
  ran: bool(),
  latency_ms: nullable(num().min(0)),
  ok: nullable(bool()),
  output: str(),
  details: observed('what the probe measured (section-specific)').optional(),
});

const readinessIndex = (changed: boolean) =>
  envelope('svc.readiness/v1', {
    status: STATUS.description('the worst section (ADS-B capped at warn)'),
    generated_at: isoTime(),
    refreshed_at: isoTime(),
    ...(changed ? { changed: listOf(str()) } : {}),
    sections: listOf(shape({ section_id: str(), status: STATUS, summary: str(), checked_at: isoTime(), live_url: str(), observations: observed('section-specific') })),
  });

export const READINESS_INDEX = readinessIndex(false);
export const READINESS_REFRESH = readinessIndex(true);

export const READINESS_SECTION = envelope('svc.readiness-section/v1', {
  section_id: str(),
  status: STATUS,
  summary: str(),
  checked_at: isoTime(),
  observations: observed('section-specific (the ledger section carries the readiness object of /ledger/readiness)'),
  probe: PROBE,
});

export const ELITE_WIRING = envelope('svc.elite-wiring/v1', {
  generated_at: isoTime(),
  nodes: listOf(openShape({ id: str(), registered_at_start: bool() })),
  wires: listOf(openShape({ id: str() })),
  registered_at_start: listOf(shape({ id: str(), registered: bool(), evidence: str() })),
  mesh_wires: shape({ B: str(), C: str(), D: str(), E: str(), F: str() }).description('mesh wire letter → wire id'),
  wiring_sha256: hex64(),
});

export const WIRING_HEALTH = envelope('svc.elite-wiring-health/v1', {
  probe: bool(),
  status: STATUS,
  generated_at: isoTime(),
  nodes: listOf(
    shape({
      id: str(),
      status: STATUS,
      passive: shape({ status: STATUS, output: str(), observations: listOf(OBSERVATION).description('IETF health-check observations') }),
      active: nullable(shape({ ok: bool(), latency_ms: num().min(0), output: str(), details: observed('what the probe measured (node-specific)').optional() })).description('null unless probe=true'),
    }),
  ),
  total_ms: num().min(0),
});

