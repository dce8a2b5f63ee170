/** GET /api/svc/v1/adsb: the bounding-box answer, its aircraft and the state of every upstream. */
import { bool, int, isoTime, listOf, nullable, num, oneOf, shape, str } from '../http/response-schema.js';

const nstr = () => nullable(str());
const nnum = () => nullable(num());

export const AIRCRAFT = shape({
  hex: str().description('ICAO 24-bit address (hex), or the upstream id when non_icao'),
  non_icao: bool(),
  callsign: nstr(),
  registration: nstr(),
  type_code: nstr(),
  type_desc: nstr(),
  military: oneOf(true),
  lat: num().min(-90).max(90),
  lon: num().min(-180).max(180),
  position_age_s: nnum().description("seconds between the position and the upstream's now; null when the upstream did not say"),
  position_time: nullable(isoTime()),
  on_ground: bool(),
  alt_baro_ft: nnum(),
  alt_geom_ft: nnum(),
  ground_speed_kt: nnum(),
  track_deg: nnum(),
  vertical_rate_fpm: nnum(),
  squawk: nstr(),
  emergency: nstr(),
  category: nstr(),
  position_source: nstr(),
  nac_p: nnum(),
  seen_s: nnum(),
  provider: str().description('the provider of the snapshot (snapshots never mix providers)'),
});

const OUTCOMES = ['ok', 'rate_limited', 'forbidden', 'client_error', 'server_error', 'timeout', 'network', 'bad_payload', 'truncated', 'too_large', 'skipped_breaker_open', 'skipped_min_interval'];
const REASONS = ['fresh', 'upstream_failed_serving_last_snapshot', 'refresh_pending_serving_last_snapshot', 'snapshot_expired', 'no_snapshot', 'refresh_pending', 'disabled'];

export const ADSB = shape({
  schema: oneOf('svc.adsb/v1'),
  live: bool().description('false when the upstreams could not be reached recently (then the last snapshot for a limited time, or nothing)'),
  reason: oneOf(...REASONS),
  source: nstr().description('provider name of the snapshot served'),
  source_url: nstr(),
  attribution: nstr(),
  fetched_at: nullable(isoTime()),
  upstream_now: nullable(isoTime()),
  age_s: nnum(),
  bbox: shape({ lat_min: num(), lat_max: num(), lon_min: num(), lon_max: num() }).description('the effective box (lon_min > lon_max crosses the antimeridian)'),
  count: int().min(0),
  upstream_total: nullable(int().min(0)),
  dropped: nullable(shape({ no_position: int().min(0), stale_position: int().min(0), not_military: int().min(0), duplicate: int().min(0) })),
  aircraft: listOf(AIRCRAFT),
  attempts: listOf(shape({ upstream: str(), outcome: oneOf(...OUTCOMES), http_status: nullable(int()), ms: nnum(), at: isoTime(), error: nstr() })).description(
    'the most recent completed refresh, provider by provider',
  ),
  upstreams: listOf(
    shape({
      name: str(),
      url: str(),
      breaker: oneOf('closed', 'open', 'half-open'),
      open_until: nullable(isoTime()),
      consecutive_failures: int().min(0),
      last_ok_at: nullable(isoTime()),
      last_status: nullable(int()),
      last_error: nstr(),
    }),
  ),
  refresh: shape({ scope: str().description('LOCAL, or the shared cache kind'), state: nullable(oneOf('OK', 'UNAVAILABLE')), error: nstr() }),
  honesty: str(),
});
