/**
 * The body of GET /api/svc/v1/adsb, as it travels: the one definition the server (src/adsb) builds
 * and the browser (src/ui/client) reads, so neither side can drift from the other. Types only: this
 * folder is compiled by both the Node and the browser tsconfig, so it may import nothing.
 */

/** One military aircraft, copied from one upstream entry with a current position. */
export interface AdsbAircraft {
  hex: string;
  non_icao: boolean;
  callsign: string | null;
  registration: string | null;
  type_code: string | null;
  type_desc: string | null;
  military: true;
  lat: number;
  lon: number;
  /** Seconds between the position and the upstream's `now`; null when the upstream did not say. */
  position_age_s: number | null;
  position_time: string | null;
  on_ground: boolean;
  alt_baro_ft: number | null;
  alt_geom_ft: number | null;
  ground_speed_kt: number | null;
  track_deg: number | null;
  vertical_rate_fpm: number | null;
  squawk: string | null;
  emergency: string | null;
  category: string | null;
  position_source: string | null;
  nac_p: number | null;
  seen_s: number | null;
  /** The provider this record came from (snapshots never mix providers). */
  provider: string;
}

/** Upstream entries left out of a snapshot, by reason. */
export interface AdsbDropped {
  no_position: number;
  stale_position: number;
  not_military: number;
  duplicate: number;
}

/** Why the answer is (or is not) live. */
export type AdsbReason =
  | 'fresh'
  | 'upstream_failed_serving_last_snapshot'
  | 'refresh_pending_serving_last_snapshot'
  | 'snapshot_expired'
  | 'no_snapshot'
  | 'refresh_pending'
  | 'disabled';

/** How one call to an upstream ended. A bounded set: it is also a metric label. */
export type AdsbOutcome = 'ok' | 'rate_limited' | 'forbidden' | 'client_error' | 'server_error' | 'timeout' | 'network' | 'bad_payload' | 'truncated' | 'too_large';

export interface AdsbAttempt {
  upstream: string;
  outcome: AdsbOutcome | 'skipped_breaker_open' | 'skipped_min_interval';
  http_status: number | null;
  ms: number | null;
  at: string;
  error: string | null;
}

export interface AdsbUpstreamState {
  name: string;
  url: string;
  breaker: string;
  open_until: string | null;
  consecutive_failures: number;
  last_ok_at: string | null;
  last_status: number | null;
  last_error: string | null;
}

export interface AdsbAnswer {
  schema: 'svc.adsb/v1';
  live: boolean;
  reason: AdsbReason;
  source: string | null;
  source_url: string | null;
  attribution: string | null;
  fetched_at: string | null;
  upstream_now: string | null;
  age_s: number | null;
  bbox: { lat_min: number; lat_max: number; lon_min: number; lon_max: number };
  count: number;
  upstream_total: number | null;
  dropped: AdsbDropped | null;
  aircraft: AdsbAircraft[];
  attempts: AdsbAttempt[];
  upstreams: AdsbUpstreamState[];
  /** Whether refreshes are shared with other replicas (postgres mode), and whether that works now. */
  refresh: { scope: 'LOCAL' | 'POSTGRES'; state: 'OK' | 'UNAVAILABLE' | null; error: string | null };
  honesty: string;
}
