/**
 * The service's domain errors: each extends ServiceError and carries a stable `code` from
 * SERVICE_ERROR_CODES, as undici's and piscina's error catalogues do, so callers (the HTTP
 * mapping in src/http/errors.ts, the process exit codes in main.ts) decide by code or class,
 * never by message text. Messages are for people and may change; codes may not.
 */

/** Every code, with what it means. A code is never renamed or reused: clients and logs key on it. */
export const SERVICE_ERROR_CODES = {
  SVC_CONFIG_INVALID: 'the configuration is invalid or missing',
  SVC_KEY_INVALID: 'the signing key cannot be read, or is not a P-256 PKCS#8 key',
  SVC_NOT_A_LEDGER: 'the path holds no ledger',
  SVC_LOCK_HELD: "another process holds the data directory's lock",
  SVC_CHAIN_BROKEN: 'the stored chain does not link (postgres mode)',
  SVC_STORE_UNAVAILABLE: 'the ledger store refuses appends for now; retry later',
  SVC_INGEST_UNAVAILABLE: 'the CoT ingest store refuses ingests for now; retry later',
  SVC_LEDGER_FULL: 'the in-memory ledger holds its maximum of nodes',
  SVC_NON_FINITE: 'a number to serialise is not finite',
  SVC_DATASET_INTEGRITY: "the fleet dataset does not match its recorded SHA-256",
  SVC_INFEASIBLE_ASSIGNMENT: 'an assignment problem has no complete matching',
  SVC_XML_REJECTED: 'an XML document was refused (malformed, a DOCTYPE, over a limit, not UTF-8)',
  SVC_ADSB_BAD_PAYLOAD: 'an ADS-B upstream answered a body that is not its documented shape',
  SVC_ADSB_TOO_LARGE: 'an ADS-B upstream answered a body over the size limit',
  SVC_UNSUPPORTED_TYPE: "a kernel's result type has no JSON Schema (found while the OpenAPI document is built)",
} as const;

export type ServiceErrorCode = keyof typeof SERVICE_ERROR_CODES;

/** The base of every domain error: a stable `code`, a `name` that is the class's own. */
export abstract class ServiceError extends Error {
  abstract readonly code: ServiceErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
