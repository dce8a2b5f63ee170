/** The common envelope of the read-only views and their sources: one shape, so one schema covers all. */
import { RECEIPT_DOCTRINE } from './doctrine.js';

export interface Source {
  leader: string;
  kind: string;
  url: string;
  data_kind: string;
}

export interface Limit {
  code: string;
  detail: string;
}

/** `{schema, doctrine, ...body}`; body carries honesty, limits and sources. */
export function envelope(schema: string, body: Record<string, unknown> & { honesty: string; limits: Limit[]; sources: Source[] }): Record<string, unknown> {
  return { schema, doctrine: RECEIPT_DOCTRINE, ...body };
}

const std = (leader: string, kind: string, url: string): Source => ({ leader, kind, url, data_kind: 'standard' });

export const SOURCES = {
  mulval: std('Ou, Boyer, McQueen: logical attack graphs (MulVAL)', 'paper', 'https://sciweavers.org/node/187246'),
  manadhata: std('Manadhata and Wing: An Attack Surface Metric (CMU-CS-05-155)', 'paper', 'https://vdocuments.site/an-attack-surface-metric-carnegie-mellon-school-of-wingpublicationscmu-cs-05-155pdf.html'),
  t1190: std('MITRE ATT&CK T1190 Exploit Public-Facing Application', 'technique', 'https://center-for-threat-informed-defense.github.io/mappings-explorer/attack/attack-16.1/domain-enterprise/techniques/T1190'),
  t1499: std('MITRE ATT&CK T1499 Endpoint Denial of Service', 'technique', 'https://center-for-threat-informed-defense.github.io/mappings-explorer/attack/attack-9.0/domain-enterprise/techniques/T1499'),
  owaspApi: std('OWASP API Security Top 10 (2023)', 'standard', 'https://owasp.org/API-Security/editions/2023/en/0x11-t10'),
  cm2: std('NIST SP 800-53 CM-2 Baseline Configuration', 'control', 'https://cardinalsixcyber.com/nist-800-53/cm-2'),
  cm86: std('NIST SP 800-53 CM-8(6) Approved Deviations', 'control', 'https://www.cardinalsixcyber.com/nist-800-53/cm-8-6'),
  headers: std('OWASP Secure Headers Project', 'standard', 'https://owasp.org/www-project-developer-guide/draft/implementation/secure_libraries/secure_headers'),
  sp800207: std('NIST SP 800-207 Zero Trust Architecture: components and tenets', 'standard', 'https://secportal.io/frameworks/nist-sp-800-207'),
  sp800207pe: std('NIST SP 800-207 PE/PA/PEP definitions', 'standard', 'https://ztkb.moderncyber.com/standards/nist/'),
  healthDraft: std('Health Check Response Format for HTTP APIs (IETF draft)', 'standard', 'https://webconcepts.info/concepts/media-type/application/vnd.health+json'),
  piscina: std('Piscina run and wait-time histograms', 'documentation', 'https://tessl.io/registry/tessl/npm-piscina/files/docs/performance-monitoring.md'),
  dsse: std('DSSE v1 protocol: PAE and spec test vector', 'specification', 'https://github.com/secure-systems-lab/dsse'),
  k8sProbes: std('Kubernetes liveness, readiness and startup probes', 'documentation', 'https://kubernetes.io/docs/concepts/workloads/pods/probes/'),
  adsbfi: std('adsb.fi open data API (/v2/mil, 1 request/s)', 'documentation', 'https://github.com/adsbfi/opendata/blob/main/README.md'),
  rfc9162: std('RFC 9162 Certificate Transparency 2.0: Merkle tree hash', 'rfc', 'https://www.rfc-editor.org/rfc/rfc9162'),
  fips186: std('FIPS 186-5 ECDSA over P-256 with SHA-256', 'standard', 'https://csrc.nist.gov/pubs/fips/186-5/final'),
  cotSchema: std('MITRE CoT 2.0 base schema (Event-PUBLIC.xsd)', 'schema', 'https://git.tak.gov/standards/takcot'),
} as const;
