/** Response schemas of the core routes: /health (IETF health-check format) and /doctrine. */
import Joi from 'joi';
import { bool, hex64, int, isoTime, listOf, mapOf, nullable, num, oneOf, shape, str } from '../http/response-schema.js';

/** One check of the IETF "Health Check Response Format" (draft-inadarei-api-health-check). */
export const HEALTH_CHECK = shape({
  componentType: str(),
  observedValue: nullable(Joi.alternatives(num(), str(), bool())).description('number, string or boolean (null when not observed yet)'),
  observedUnit: str(),
  status: oneOf('pass', 'warn', 'fail'),
  time: isoTime(),
  output: str().optional(),
});

export const HEALTH = shape({
  status: oneOf('pass', 'warn', 'fail').description('worst of the checks; 503 when fail'),
  version: str(),
  releaseId: str(),
  serviceId: oneOf('svc'),
  uptime_s: num().min(0),
  pool: shape({
    threads: int().min(0),
    queueSize: int().min(0),
    busy: num().min(0).description('running tasks per thread'),
    completed: int().min(0),
    maxQueue: int().min(0),
    crashes: int().min(0),
  }),
  checks: mapOf(HEALTH_CHECK).description('by check name, e.g. worker-pool:utilization, event-loop:delay, ledger:nodes, adsb:cache-age'),
});

const RULE = shape({ id: str(), text: str() });

export const DOCTRINE = shape({
  schema: oneOf('svc.doctrine/v1'),
  doctrine: str(),
  versions: shape({ api: str(), receipt_doctrine: str(), mesh_wire_doctrine: str(), schemas: listOf(str()) }),
  version_note: str(),
  honesty_rules: listOf(RULE.keys({ enforced_by: listOf(str()), evidence_claims: listOf(str()) })),
  service_rules: listOf(RULE),
  limits: listOf(shape({ code: str(), detail: str() })),
  crypto: shape({ alg: str(), envelope: str(), payloadType: str(), signature_encoding: str() }),
  basis_vocabulary: listOf(str()),
  enforcement: shape({
    from_refresh_at: nullable(isoTime()).description('the evidence refresh the statuses come from; null before the first'),
    claims: mapOf(str()).description('claim id → status of that refresh'),
  }),
  rules_sha256: hex64(),
  honesty: str(),
});

