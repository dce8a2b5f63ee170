/**
 * The 12 fleet routes. Bodies are pre-serialised at start-up (views.ts); each answer carries a
 * strong ETag (SHA-256 of the body) and honours If-None-Match with 304. No query parameters:
 * an unknown one is 422 extra_forbidden, as on every strict route.
 */
import Joi from 'joi';
import type { Context } from 'koa';
import { notModified } from '../http/etag.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { VIEW_SPECS, type BuiltView } from './views.js';
import { FLEET_RESPONSES } from './fleet.responses.js';

const noParams = Joi.object({});

/** RFC 9110 13.1.2: weak comparison; `*` matches any current representation. */
function serve(ctx: Context, view: BuiltView): Buffer | undefined {
  if (notModified(ctx, view.etag, 'no-cache')) return undefined;
  ctx.type = 'application/json';
  return view.body;
}

export function fleetRoutes(views: ReadonlyMap<string, BuiltView>): RouteDef[] {
  const specs = [...VIEW_SPECS, { route: 'all', summary: 'Every fleet collection in one body (members equal the single views)' }];
  return specs.map((spec) => {
    const view = views.get(spec.route)!;
    return defineRoute({
      method: 'GET',
      path: `/fleet/${spec.route}`,
      uses: ['fleet-dataset'],
      summary: spec.summary,
      tag: 'fleet',
      query: noParams,
      errors: [304],
      response: FLEET_RESPONSES.get(spec.route)!,
      handler: ({ ctx }) => serve(ctx, view),
    });
  });
}
