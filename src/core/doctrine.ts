/**
 * The doctrine document: the interface's four honesty rules, the service's own rules, limits and
 * crypto, with a digest over the rules so clients can pin them. Enforcement status comes from the
 * last evidence refresh when that feature is present.
 */
import { canonicalJson, sha256Hex } from '../lib/numbers.js';
import { RECEIPT_DOCTRINE } from '../lib/receipt-bytes.js';

export const API_VERSION = '1.0.0';
export { RECEIPT_DOCTRINE };
export const MESH_DOCTRINE = 'v10';

export const HONESTY_RULES = [
  {
    id: 'H1',
    text: 'The service never fabricates aircraft tracks: on total upstream failure /adsb returns the last cached snapshot marked live=false, or an empty set.',
    enforced_by: ['src/adsb'],
    evidence_claims: ['adsb-never-synthetic'],
  },
  {
    id: 'H2',
    text: 'Receipt signatures are real ECDSA P-256 SHA-256 over the DSSE v1 pre-authentication encoding, verifiable offline with the published key.',
    enforced_by: ['src/ledger'],
    evidence_claims: ['receipts-verify-offline', 'signatures-real-ecdsa'],
  },
  {
    id: 'H3',
    text: 'CoT export and validation are computed from sample tracks; UDP multicast emission, a live TAK server stream and client-certificate enrolment are roadmap only.',
    enforced_by: ['src/cot'],
    evidence_claims: ['cot-roadmap-unwired'],
  },
  {
    id: 'H4',
    // the interface's rule for the in-memory ledger; the text follows ledger.mode (ledgerRule)
    text: 'The ledger lives in process memory and is emptied on restart.',
    enforced_by: ['src/ledger'],
    evidence_claims: ['ledger-durability'],
  },
] as const;

export type LedgerModeName = 'memory' | 'file' | 'postgres';

/** Honesty rule 4 as it is true for the running mode. */
export const LEDGER_RULE_TEXT: Record<LedgerModeName, string> = {
  memory: 'The ledger lives in process memory and is emptied on restart.',
  file: 'The ledger is an append-only file on this machine: every acknowledged verdict was written durably (O_DSYNC, as write + fdatasync) before its answer and survives restarts.',
  postgres: 'The ledger is one hash chain in PostgreSQL shared by every replica: every acknowledged verdict was committed before its answer and survives restarts.',
};

export function honestyRules(mode: LedgerModeName) {
  return HONESTY_RULES.map((r) => (r.id === 'H4' ? { ...r, text: LEDGER_RULE_TEXT[mode] } : r));
}

export const SERVICE_RULES = [
  { id: 'S1', text: 'Every number in a view carries its basis: measured, computed, model, published, dataset, config or input.' },
  { id: 'S2', text: 'Kernels are deterministic: the same parameters and seed give byte-identical bodies; timings travel in Server-Timing.' },
  { id: 'S3', text: 'Every input is bounded: parameters, bodies, frames per request, viewers and queue depth; out of range is 422, over capacity is 503.' },
  { id: 'S4', text: 'No request alters or removes a ledger node once appended.' },
] as const;

export const BASIS_VOCABULARY = ['measured', 'computed', 'model', 'published', 'dataset', 'config', 'input'] as const;

export const SCHEMAS = ['svc.receipt-export/v1', 'svc.ledger-readiness/v1', 'svc.receipt/v1', 'svc.kernel/v1', 'svc.doctrine/v1'];

const EPHEMERAL_LIMIT = { code: 'EPHEMERAL_LEDGER', detail: 'The ledger is held in process memory and resets on restart.' };

export const DOCTRINE_LIMITS = [
  { code: 'COT_ROADMAP_UNWIRED', detail: 'No UDP multicast, TAK server stream or client-certificate enrolment is wired.' },
  { code: 'ADSB_BEST_EFFORT', detail: 'The ADS-B feed depends on public community aggregators; when all fail the last snapshot is served with live=false.' },
  { code: 'NO_AUTHENTICATION', detail: 'The interface states no authentication; every route is public.' },
  { code: 'SYNTHETIC_FLEET_DATASET', detail: 'Fleet data is a seeded synthetic sample dataset, not real vessels.' },
];

export function rulesSha256(mode: LedgerModeName): string {
  return sha256Hex(canonicalJson({ honesty_rules: honestyRules(mode), service_rules: SERVICE_RULES }));
}

export interface Enforcement {
  from_refresh_at: string | null;
  claims: Record<string, string>;
}

export function doctrineDocument(enforcement: Enforcement, mode: LedgerModeName): Record<string, unknown> {
  return {
    schema: 'svc.doctrine/v1',
    doctrine: RECEIPT_DOCTRINE,
    versions: { api: API_VERSION, receipt_doctrine: RECEIPT_DOCTRINE, mesh_wire_doctrine: MESH_DOCTRINE, schemas: SCHEMAS },
    version_note: 'v10 is the label carried by mesh wire documents and v11 the label of receipt exports; the interface states no changelog between them.',
    honesty_rules: honestyRules(mode),
    service_rules: SERVICE_RULES,
    limits: mode === 'memory' ? [EPHEMERAL_LIMIT, ...DOCTRINE_LIMITS] : DOCTRINE_LIMITS,
    crypto: { alg: 'ECDSA-P256-SHA256', envelope: 'DSSEv1', payloadType: 'application/vnd.svc.receipt+json', signature_encoding: 'ASN.1 DER, standard base64' },
    basis_vocabulary: BASIS_VOCABULARY,
    enforcement,
    rules_sha256: rulesSha256(mode),
    honesty: 'Static rules plus the enforcement status of the last evidence refresh; no status is asserted that was not checked.',
  };
}
