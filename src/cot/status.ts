/**
 * The CoT status document, field for field as the interface defines it. The `live` counts are
 * computed at request time from the real export; each TAK output (Mesh SA, TAK Server client,
 * streaming listener) is `wired` with the state its thread last reported when it is configured on,
 * `wired: false` otherwise; client certificate enrolment does not exist.
 */
import type { RouteDef } from '../http/route.js';
import { specPath } from '../introspection/route-inventory.js';
import type { OutputState } from '../tak/output.js';

/** The TAK outputs' latest state, by output name (mesh, server, listener): filled by the TAK feature when it runs. */
export class TakOutputsBoard {
  private source: (() => Readonly<Record<string, OutputState>>) | null = null;

  attach(source: () => Readonly<Record<string, OutputState>>): void {
    this.source = source;
  }

  read(): Readonly<Record<string, OutputState>> {
    return this.source?.() ?? {};
  }
}

const OFF = { state: 'off', sent: 0, dropped: 0, errors: 0, detail: {} };

/** One roadmap entry of a TAK output: its live state when wired, `off` with zero counts otherwise. */
function outputEntry(state: OutputState | undefined, note: { on: string; off: string }) {
  if (!state) return { wired: false, note: note.off, ...OFF };
  return { wired: state.wired, note: note.on, state: state.state, sent: state.sent, dropped: state.dropped, errors: state.errors, detail: state.detail };
}

/** The track counts the CoT plugin publishes: read by evidence and readiness. */
export interface CotStatus {
  tracksTotal(): number;
  tracksCotValid(): number;
}

/** The CoT feature's paths as mounted (read from the app's route table, so a new CoT route is listed). */
export function cotPaths(table: readonly RouteDef[]): string[] {
  return [...new Set(table.filter((r) => r.tag === 'cot').map((r) => specPath(r.path)))];
}

export function statusDocument(total: number, valid: number, routes: readonly string[], outputs: Readonly<Record<string, OutputState>> = {}) {
  const emitting = Object.values(outputs).some((o) => o.wired);
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
      udp_multicast_emit: {
        ...outputEntry(outputs.mesh, {
          on: 'each event is one UDP datagram to the configured group (tak.mesh)',
          off: 'no UDP socket is opened (tak.mesh.enabled is off); 239.2.3.1:6969 is ATAK\u2019s default SA multicast group',
        }),
        target_group: typeof outputs.mesh?.detail.target === 'string' ? outputs.mesh.detail.target : '239.2.3.1:6969',
      },
      live_tak_server_stream: outputEntry(outputs.server, {
        on: 'events stream to the configured TAK Server (tak.server)',
        off: 'no TCP/TLS stream (the TAK Server client is off); TAK Server conventionally uses 8087 plain and 8089 TLS',
      }),
      tak_listener: outputEntry(outputs.listener, {
        on: 'TAK clients connect to the streaming listener (tak.listener) and receive every event',
        off: 'no listener (the streaming listener is off)',
      }),
      tls_client_cert_enrolment: { wired: false, note: 'no enrolment; TAK Server conventionally uses 8446; no client keys held' },
    },
    routes,
    data_kind: 'computed_from_sample_tracks',
    honesty:
      'Exported events are computed from sample tracks (simulated, marked how="m-s" opex="s") and from events ingested through POST /cot/ingest; ' +
      'validity is checked against the MITRE CoT 2.0 base schema. ' +
      (emitting ? 'Verdicts, military aircraft and (if configured) ingested events are sent live to the wired TAK outputs below.' : 'Nothing is emitted over the network.'),
    sources: [
      { leader: 'MITRE', kind: 'schema', url: 'https://apps.dtic.mil/sti/citations/ADA637348', data_kind: 'standard' },
      { leader: 'TAK Product Center', kind: 'schema', url: 'https://git.tak.gov/standards/takcot', data_kind: 'standard' },
      { leader: 'US DoD (MIL-STD-2525)', kind: 'symbology', url: 'https://quicksearch.dla.mil/qsDocDetails.aspx?ident_number=114934', data_kind: 'standard' },
    ],
  };
}
