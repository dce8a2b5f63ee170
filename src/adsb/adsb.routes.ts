/**
 * GET /api/svc/v1/adsb: live military aircraft in a bounding box, filtered locally from the one
 * cached global snapshot, so any number of boxes costs the upstreams one call per refresh. Upstream
 * failure is not an error status: the answer is 200 with live=false and the last snapshot or
 * nothing, and says why.
 */
import { Errors } from '../http/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { num, objectOf } from '../lib/params.js';
import type { AdsbFeed } from './feed.js';
import { inBox } from './normalise.js';
import type { AdsbAnswer } from '../isomorphic/wire/adsb.js';
import { ADSB } from './adsb.responses.js';

const bboxQuery = objectOf({
  lat_min: num(-90, 90, 24.0).description('southern edge of the box, degrees (must be ≤ lat_max)'),
  lat_max: num(-90, 90, 50.0).description('northern edge of the box, degrees (must be ≥ lat_min)'),
  lon_min: num(-180, 180, -125.0).description('western edge of the box, degrees (lon_min > lon_max crosses the antimeridian)'),
  lon_max: num(-180, 180, -60.0).description('eastern edge of the box, degrees'),
});

const HONESTY =
  'Aircraft are copied from one upstream military snapshot (dbFlags & 1) and filtered by box here; ' +
  'nothing is synthesised, interpolated or extrapolated. live=false means the upstream could not be ' +
  'reached recently: the last snapshot is shown for a limited time, then nothing. Military coverage ' +
  'is incomplete: the flag comes from a community database and many military aircraft do not transmit.';

export function adsbRoutes(feed: AdsbFeed, freshMs: number): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/adsb',
      uses: ['adsb-cache', 'adsb-upstreams'],
      egress: true,
      summary:
        'Live military ADS-B aircraft in a bounding box (lon_min > lon_max crosses the antimeridian); one cached global snapshot, ' +
        'providers in order with breakers; on upstream failure 200 with live=false and the last snapshot or an empty set; never synthetic',
      tag: 'adsb',
      query: bboxQuery,
      description: 'Cross-parameter rule: lat_min must be less than or equal to lat_max (else 422 `value_error` at lat_min). lon_min may exceed lon_max: the box then crosses the antimeridian.',
      response: ADSB,
      async handler({ query, ctx }): Promise<AdsbAnswer> {
        if (query.lat_min > query.lat_max) {
          throw Errors.validation([
            { type: 'value_error', loc: ['query', 'lat_min'], msg: 'Value error, lat_min must be less than or equal to lat_max', input: ctx.query.lat_min ?? null, ctx: { error: {} } },
          ]);
        }
        const a = await feed.read();
        const snap = a.snapshot;
        const aircraft = snap ? snap.aircraft.filter((ac) => inBox(ac, query)) : [];
        const remaining = a.live && a.ageS !== null ? Math.max(0, Math.floor(freshMs / 1000 - a.ageS)) : 0;
        ctx.set('Cache-Control', a.live ? `public, max-age=${remaining}` : 'no-cache');
        return {
          schema: 'svc.adsb/v1',
          live: a.live,
          reason: a.reason,
          source: snap?.provider ?? null,
          source_url: snap?.url ?? null,
          attribution: snap?.attribution ?? null,
          fetched_at: snap ? new Date(snap.fetchedAtMs).toISOString() : null,
          upstream_now: snap?.upstreamNowMs ? new Date(snap.upstreamNowMs).toISOString() : null,
          age_s: a.ageS,
          bbox: { lat_min: query.lat_min, lat_max: query.lat_max, lon_min: query.lon_min, lon_max: query.lon_max },
          count: aircraft.length,
          upstream_total: snap?.upstreamTotal ?? null,
          dropped: snap?.dropped ?? null,
          aircraft,
          attempts: a.attempts,
          upstreams: feed.upstreams(),
          refresh: feed.refreshScope(),
          honesty: HONESTY,
        };
      },
    }),
  ];
}
