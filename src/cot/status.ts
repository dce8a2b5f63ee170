/**
 * The CoT status document, field for field as the interface defines it. The `live` counts are
 * computed at request time from the real export; every roadmap item is `wired: false` because none
 * of it exists (no UDP socket, no TAK stream, no enrolment).
 */
import type { RouteDef } from '../http/route.js';
import { specPath } from '../introspection/route-inventory.js';

/** The track counts the CoT plugin publishes: read by evidence and readiness. */
export interface CotStatus {
  tracksTotal(): number;
  tracksCotValid(): number;
}

/** The CoT feature's paths as mounted (read from the app's route table, so a new CoT route is listed). */
export function cotPaths(table: readonly RouteDef[]): string[] {
  return [...new Set(table.filter((r) => r.tag === 'cot').map((r) => specPath(r.path)))];
}

export function statusDocument(total: number, valid: number, routes: readonly string[]) {
  return {
    capability: 'cursor_on_target_interop',
    standard: 'CoT 2.0 base schema (MITRE Event-PUBLIC.xsd, 2003)',
    live: {
      cot_xml_export: true,
      schema_shape_validation: true,
      cot_xml_ingest: true,
      tracks_total: total,
      tracks_cot_valid: valid,
      all_tracks_emittable: valid === total,
    },
    roadmap: {
      udp_multicast_emit: { wired: false, note: 'no UDP socket is opened; 239.2.3.1:6969 is ATAK\u2019s default SA multicast group', target_group: '239.2.3.1:6969' },
      live_tak_server_stream: { wired: false, note: 'no TCP/TLS stream; TAK Server conventionally uses 8087 plain and 8089 TLS' },
      tls_client_cert_enrolment: { wired: false, note: 'no enrolment; TAK Server conventionally uses 8446; no client keys held' },
    },
    routes,
    data_kind: 'computed_from_sample_tracks',
    honesty:
      'Exported events are computed from sample tracks (simulated, marked how="m-s" opex="s") and from events ingested through POST /cot/ingest; ' +
      'validity is checked against the MITRE CoT 2.0 base schema. Nothing is emitted over the network.',
    sources: [
      { leader: 'MITRE', kind: 'schema', url: 'https://apps.dtic.mil/sti/citations/ADA637348', data_kind: 'standard' },
      { leader: 'TAK Product Center', kind: 'schema', url: 'https://git.tak.gov/standards/takcot', data_kind: 'standard' },
      { leader: 'US DoD (MIL-STD-2525)', kind: 'symbology', url: 'https://quicksearch.dla.mil/qsDocDetails.aspx?ident_number=114934', data_kind: 'standard' },
    ],
  };
}
