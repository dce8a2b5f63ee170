/**
 * The evidence feature's routes: the claims (index, refresh, one claim and its sources re-checked
 * live), the readiness sections (index, refresh, one section live) and the elite wiring views.
 */
import Joi from 'joi';
import type { Context } from 'koa';
import { envelope } from '../core/envelope.js';
import { Errors } from '../http/errors.js';
import { summarize } from '../http/in-process.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { Observed } from '../introspection/observed.js';
import { bool, objectOf, type ObjectParam } from '../lib/params.js';
import { CLAIMS, type Claim, type ClaimStatus } from './claims.js';
import { wiringDocument, wiringHealth } from './elite.js';
import { checkClaim, REFRESH_BUDGET_MS, type EvidenceIndex } from './evidence-index.js';
import { runSection, SECTIONS } from './readiness.js';
import type { ReadinessIndex } from './readiness-index.js';
import * as R from './evidence.responses.js';

/** Ids are lower-case slugs: anything else is malformed (422), an unknown well-formed slug is 404. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

const EXTERNAL_NOT_FETCHED = 'external reference; the service does not fetch the public web';
const CLAIM_USES = ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'] as const;
const PROBE_USES = ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'] as const;

/** Path parameters of one slug id, `{ <name>: string }`. */
function idParams<N extends string>(name: N, description: string): ObjectParam<Record<N, string>> {
  return Joi.object({ [name]: Joi.string().pattern(ID_PATTERN).required().description(description) });
}
const claimIdParams = () => idParams('claim_id', 'A claim id of the evidence index (lower-case slug); unknown ids are 404');

/** The caller's Host, so URLs inside in-process bodies (public_key_url) match what it would see. */
function hostHeaders(ctx: Context): Record<string, string> {
  return ctx.host ? { host: ctx.host } : {};
}

function findClaim(id: string): Claim {
  const c = CLAIMS.find((x) => x.claim_id === id);
  if (!c) throw Errors.itemNotFound('claim', id);
  return c;
}

/** One claim re-checked now against the running service. */
async function claimLive(s: Observed, claim: Claim): Promise<Record<string, unknown>> {
  const r = await checkClaim(s, claim, REFRESH_BUDGET_MS);
  return envelope('svc.evidence-claim/v1', {
    claim_id: claim.claim_id,
    title: claim.title,
    statement: claim.statement,
    status: r.status,
    reason: r.reason,
    checked_at: r.checked_at,
    method: claim.method,
    observations: r.observations,
    honesty: 'Re-checked at checked_at against this process; observations are the values the check computed.',
    limits: [],
    sources: claim.sources,
  });
}

/** A claim's internal sources requested in-process now; external ones listed, never fetched. */
async function claimSourcesLive(s: Observed, claim: Claim, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const sources = [];
  for (const src of claim.sources) {
    if (src.kind === 'internal') sources.push({ ...src, live: { checked: true, ...summarize(await s.inProcess.get(src.url, headers)) } });
    else sources.push({ ...src, live: { checked: false, reason: EXTERNAL_NOT_FETCHED } });
  }
  return envelope('svc.evidence-sources/v1', {
    claim_id: claim.claim_id,
    checked_at: new Date().toISOString(),
    sources,
    honesty: 'Internal sources were requested in-process just now; external references are listed, never fetched.',
    limits: [{ code: 'NO_EXTERNAL_FETCH', detail: 'The service does not fetch the public web to check references.' }],
  });
}

/** The refresh route's body: the new run's counts and changes, then the index. */
async function refreshClaims(claims: EvidenceIndex): Promise<Record<string, unknown>> {
  const r = await claims.refresh();
  const results: Record<ClaimStatus, number> = { verified: 0, failed: 0, not_applicable: 0 };
  for (const x of r.results.values()) results[x.status]++;
  return { refreshed_at: r.refreshed_at, duration_ms: r.duration_ms, results, changed: r.changed, index: claims.document() };
}

export function claimRoutes(s: Observed, claims: EvidenceIndex): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/evidence/research',
      uses: [...CLAIM_USES],
      summary: 'Evidence index: every claim the doctrine relies on, with its status from the last refresh',
      tag: 'evidence',
      response: R.EVIDENCE_INDEX,
      handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return claims.document();
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/evidence/research/refresh',
      uses: [...CLAIM_USES],
      write: true,
      summary: 'Re-check every evidence claim now (single-flight, bounded; never touches the ledger) and return the new index',
      tag: 'evidence',
      response: R.EVIDENCE_REFRESH,
      handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return refreshClaims(claims);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/evidence/research/:claim_id/live',
      uses: [...CLAIM_USES],
      summary: 'Re-check one evidence claim now against the running service',
      tag: 'evidence',
      response: R.EVIDENCE_CLAIM,
      params: claimIdParams(),
      errors: [404],
      handler({ params, ctx }) {
        const claim = findClaim(params.claim_id);
        ctx.set('Cache-Control', 'no-store');
        return claimLive(s, claim);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/evidence/research/:claim_id/sources/live',
      uses: [...CLAIM_USES],
      summary: "A claim's sources: internal ones fetched in-process now (status, type, body digest, latency); external ones are not fetched",
      tag: 'evidence',
      response: R.EVIDENCE_SOURCES,
      params: claimIdParams(),
      errors: [404],
      handler({ params, ctx }) {
        const claim = findClaim(params.claim_id);
        ctx.set('Cache-Control', 'no-store');
        return claimSourcesLive(s, claim, hostHeaders(ctx));
      },
    }),
  ];
}

/** One readiness section re-checked now. */
async function sectionLive(s: Observed, id: string, ctx: Context): Promise<Record<string, unknown>> {
  const section = SECTIONS.find((x) => x.id === id);
  if (!section) throw Errors.itemNotFound('section', id);
  ctx.set('Cache-Control', 'no-store');
  const r = await runSection(s, section, hostHeaders(ctx));
  return envelope('svc.readiness-section/v1', {
    ...r,
    honesty: 'Observed and probed at checked_at; the probe is read-only.',
    limits: [],
    sources: [],
  });
}

export function readinessRoutes(s: Observed, readiness: ReadinessIndex): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/readiness',
      uses: [...PROBE_USES],
      egress: true,
      summary: 'Readiness index: each section from the last refresh (the first call runs one); overall is the worst, ADS-B capped at warn',
      tag: 'evidence',
      response: R.READINESS_INDEX,
      async handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        return readiness.document(await readiness.current(hostHeaders(ctx)));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/readiness/refresh',
      uses: [...PROBE_USES],
      egress: true,
      write: true,
      summary: 'Re-run every readiness section now (single-flight, read-only probes) and return the new index',
      tag: 'evidence',
      response: R.READINESS_REFRESH,
      async handler({ ctx }) {
        ctx.set('Cache-Control', 'no-store');
        const r = await readiness.refresh(hostHeaders(ctx));
        return readiness.document(r, { changed: r.changed });
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/readiness/:section_id/live',
      uses: [...PROBE_USES],
      egress: true,
      summary: 'One readiness section re-checked now: observations and a read-only probe',
      tag: 'evidence',
      response: R.READINESS_SECTION,
      params: idParams('section_id', 'A section id of the readiness index (lower-case slug); unknown ids are 404'),
      errors: [404],
      handler({ params, ctx }) {
        return sectionLive(s, params.section_id, ctx);
      },
    }),
  ];
}

export function wiringRoutes(s: Observed): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/elite/wiring',
      uses: ['metrics-registry', 'ledger', 'worker-pool'],
      summary: 'Wiring diagram of the internal components and links, each component checked against the running app',
      tag: 'evidence',
      response: R.ELITE_WIRING,
      handler() {
        return wiringDocument(s);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/elite/wiring/health',
      uses: [...PROBE_USES],
      egress: true,
      summary: 'Wiring health: passive status per component; probe=true adds one read-only active probe each (bounded)',
      tag: 'evidence',
      response: R.WIRING_HEALTH,
      query: objectOf({ probe: bool(false).description('Also run one bounded, read-only active probe per component (ADS-B upstreams at most once per 10 s)') }),
      async handler({ ctx, query }) {
        ctx.set('Cache-Control', 'no-store');
        return wiringHealth(s, query.probe);
      },
    }),
  ];
}
