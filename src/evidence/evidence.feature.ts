/**
 * The evidence feature: evidence claims, readiness sections and elite wiring. Index views serve the
 * last refresh; live views re-check now; refresh recomputes (single-flight, time-bounded, never
 * touching the ledger). Replaces `services.enforcement` so the doctrine shows the claim statuses of
 * the last evidence refresh.
 */
import Joi from 'joi';
import type { Context } from 'koa';
import type { HealthStatus } from '../core/health.js';
import { definePlugin, type Built } from '../platform/plugin.js';
import { observe, type Observed } from '../introspection/observed.js';
import { Errors } from '../http/errors.js';
import { defineRoute } from '../http/route.js';
import type { Services } from '../platform/services.js';
import { bool, Joi as QJoi } from '../lib/params.js';
import { envelope } from '../core/envelope.js';
import { summarize } from '../http/in-process.js';
import type { Enforcement } from '../core/doctrine.js';
import { API } from '../isomorphic/api.js';
import { CLAIMS, type Claim, type ClaimCheck, type ClaimStatus } from './claims.js';
import { wiringDocument, wiringHealth } from './elite.js';
import { withBudget } from './probes.js';
import { runSection, SECTIONS, type SectionResult } from './readiness.js';
import { worst } from '../introspection/component-status.js';
import { SingleFlight } from '../lib/single-flight.js';
import { yieldLoop } from '../core/slices.js';
import * as R from './evidence.responses.js';

/** Ids are lower-case slugs: anything else is malformed (422), an unknown well-formed slug is 404. */
export const ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;
/** A claim result older than this is reported stale in the index. */
export const STALE_AFTER_S = 300;
/** Total time one refresh may take; a claim still running then is reported failed. */
export const REFRESH_BUDGET_MS = 10_000;

const EXTERNAL_NOT_FETCHED = 'external reference; the service does not fetch the public web';

interface ReadinessRefresh {
  refreshed_at: string;
  sections: SectionResult[];
  changed: string[];
}

interface ClaimResult extends ClaimCheck {
  checked_at: string;
}

interface EvidenceRefresh {
  refreshed_at: string;
  duration_ms: number;
  results: Map<string, ClaimResult>;
  changed: string[];
}

async function checkClaim(s: Observed, claim: Claim, budgetMs: number): Promise<ClaimResult> {
  const checked_at = new Date().toISOString();
  const r = await withBudget(
    claim.check(s).catch((err: unknown): ClaimCheck => ({ status: 'failed', reason: `check threw: ${(err as Error).message}`, observations: {} })),
    budgetMs,
    (): ClaimCheck => ({ status: 'failed', reason: `check exceeded its ${Math.round(budgetMs)} ms budget`, observations: {} }),
  );
  return { ...r, checked_at };
}

function claimSources(claim: Claim) {
  return claim.sources;
}

function findClaim(id: string): Claim {
  const c = CLAIMS.find((x) => x.claim_id === id);
  if (!c) throw Errors.itemNotFound('claim', id);
  return c;
}

const idParams = (name: string, description: string) => Joi.object({ [name]: Joi.string().pattern(ID_PATTERN).required().description(description) });

/** The caller's Host, so URLs inside in-process bodies (public_key_url) match what it would see. */
function hostHeaders(ctx: Context): Record<string, string> {
  return ctx.host ? { host: ctx.host } : {};
}

export const evidencePlugin = definePlugin({
  name: 'evidence',
  needs: ['ledger', 'adsb', 'cot'],
  build: (s: Services, deps) => buildEvidence(observe(s, deps)),
});

function buildEvidence(s: Observed): Built<'evidence'> {
  let last: EvidenceRefresh | null = null;
  let refreshCount = 0;
  const evidenceFlight = new SingleFlight<EvidenceRefresh>();

  // one object per refresh: the doctrine serialises its document again only when this changes
  let enforced: { of: EvidenceRefresh | null; value: Enforcement } | null = null;
  const enforcement = (): Enforcement => {
    if (enforced?.of !== last) {
      const value = last
        ? { from_refresh_at: last.refreshed_at, claims: Object.fromEntries([...last.results].map(([id, r]) => [id, r.status])) }
        : { from_refresh_at: null, claims: {} };
      enforced = { of: last, value };
    }
    return enforced.value;
  };

  const refreshEvidence = (): Promise<EvidenceRefresh> =>
    evidenceFlight.run(async () => {
      const started = performance.now();
      const results = new Map<string, ClaimResult>();
      // sequential: claims share the pool and the in-process client; the whole run has one budget
      for (const claim of CLAIMS) {
        // a new turn of the loop per claim: checks that find everything in memory would otherwise
        // chain into one long main-thread task
        await yieldLoop();
        const remaining = REFRESH_BUDGET_MS - (performance.now() - started);
        results.set(claim.claim_id, await checkClaim(s, claim, Math.max(1, remaining)));
      }
      const changed = CLAIMS.map((c) => c.claim_id).filter((id) => (last?.results.get(id)?.status ?? null) !== results.get(id)!.status);
      last = { refreshed_at: new Date().toISOString(), duration_ms: Math.round((performance.now() - started) * 1000) / 1000, results, changed };
      refreshCount++;
      return last;
    });

  const evidenceIndex = (): Record<string, unknown> => {
    const now = Date.now();
    const summary: Record<ClaimStatus | 'unchecked' | 'stale', number> = { verified: 0, failed: 0, not_applicable: 0, unchecked: 0, stale: 0 };
    const claims = CLAIMS.map((c) => {
      const r = last?.results.get(c.claim_id);
      const stale = r ? (now - Date.parse(r.checked_at)) / 1000 > STALE_AFTER_S : false;
      summary[r?.status ?? 'unchecked']++;
      if (stale) summary.stale++;
      return {
        claim_id: c.claim_id,
        title: c.title,
        statement: c.statement,
        status: r?.status ?? 'unchecked',
        stale,
        last_checked_at: r?.checked_at ?? null,
        method: c.method,
        sources_count: c.sources.length,
        live_url: `${API}/evidence/research/${c.claim_id}/live`,
        sources_url: `${API}/evidence/research/${c.claim_id}/sources/live`,
      };
    });
    return envelope('svc.evidence-index/v1', {
      generated_at: new Date().toISOString(),
      refreshed_at: last?.refreshed_at ?? null,
      refresh_count: refreshCount,
      stale_after_s: STALE_AFTER_S,
      claims,
      summary,
      honesty: last ? 'Statuses are the results of the last refresh; each live_url re-checks its claim now.' : 'No refresh has run yet: every claim is unchecked. Call the refresh route or a live view.',
      limits: [{ code: 'CACHED_INDEX', detail: 'The index serves the last refresh; statuses can age (see stale).' }],
      sources: [],
    });
  };

  // readiness: same pattern, sections instead of claims
  let lastReadiness: ReadinessRefresh | null = null;
  const readinessFlight = new SingleFlight<ReadinessRefresh>();
  const refreshReadiness = (headers: Record<string, string>): Promise<ReadinessRefresh> =>
    readinessFlight.run(async () => {
      const sections = await Promise.all(SECTIONS.map((sec) => runSection(s, sec, headers)));
      const changed = sections.filter((r) => lastReadiness?.sections.find((p) => p.section_id === r.section_id)?.status !== r.status).map((r) => r.section_id);
      lastReadiness = { refreshed_at: new Date().toISOString(), sections, changed };
      return lastReadiness;
    });
  const readinessIndex = (r: ReadinessRefresh, extra: Record<string, unknown> = {}): Record<string, unknown> => {
    const status: HealthStatus = worst(r.sections.map((x) => x.status));
    return envelope('svc.readiness/v1', {
      status,
      generated_at: new Date().toISOString(),
      refreshed_at: r.refreshed_at,
      ...extra,
      sections: r.sections.map((x) => ({
        section_id: x.section_id,
        status: x.status,
        summary: x.summary,
        checked_at: x.checked_at,
        live_url: `${API}/readiness/${x.section_id}/live`,
        observations: x.observations,
      })),
      honesty: 'Section statuses are the last refresh of real observations and read-only probes; overall is the worst section, ADS-B capped at warn.',
      limits: [{ code: 'ADSB_CAPPED_AT_WARN', detail: 'The ADS-B feed degrades to live=false by design, so it never makes the service unready.' }],
      sources: [],
    });
  };

  return {
    routes: [
      defineRoute({
        method: 'GET',
        path: '/evidence/research',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'],
        summary: 'Evidence index: every claim the doctrine relies on, with its status from the last refresh',
        tag: 'evidence',
        response: R.EVIDENCE_INDEX,
        handler({ ctx }) {
          ctx.set('Cache-Control', 'no-store');
          return evidenceIndex();
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/evidence/research/refresh',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'],
        write: true,
        summary: 'Re-check every evidence claim now (single-flight, bounded; never touches the ledger) and return the new index',
        tag: 'evidence',
        response: R.EVIDENCE_REFRESH,
        async handler({ ctx }) {
          ctx.set('Cache-Control', 'no-store');
          const r = await refreshEvidence();
          const results: Record<ClaimStatus, number> = { verified: 0, failed: 0, not_applicable: 0 };
          for (const x of r.results.values()) results[x.status]++;
          return { refreshed_at: r.refreshed_at, duration_ms: r.duration_ms, results, changed: r.changed, index: evidenceIndex() };
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/evidence/research/:claim_id/live',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'],
        summary: 'Re-check one evidence claim now against the running service',
        tag: 'evidence',
        response: R.EVIDENCE_CLAIM,
        params: idParams('claim_id', 'A claim id of the evidence index (lower-case slug); unknown ids are 404'),
        errors: [404],
        async handler({ params, ctx }) {
          const claim = findClaim((params as { claim_id: string }).claim_id);
          ctx.set('Cache-Control', 'no-store');
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
            sources: claimSources(claim),
          });
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/evidence/research/:claim_id/sources/live',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'cot'],
        summary: "A claim's sources: internal ones fetched in-process now (status, type, body digest, latency); external ones are not fetched",
        tag: 'evidence',
        response: R.EVIDENCE_SOURCES,
        params: idParams('claim_id', 'A claim id of the evidence index (lower-case slug); unknown ids are 404'),
        errors: [404],
        async handler({ params, ctx }) {
          const claim = findClaim((params as { claim_id: string }).claim_id);
          ctx.set('Cache-Control', 'no-store');
          const sources = [];
          for (const src of claim.sources) {
            if (src.kind === 'internal') sources.push({ ...src, live: { checked: true, ...summarize(await s.inProcess.get(src.url, hostHeaders(ctx))) } });
            else sources.push({ ...src, live: { checked: false, reason: EXTERNAL_NOT_FETCHED } });
          }
          return envelope('svc.evidence-sources/v1', {
            claim_id: claim.claim_id,
            checked_at: new Date().toISOString(),
            sources,
            honesty: 'Internal sources were requested in-process just now; external references are listed, never fetched.',
            limits: [{ code: 'NO_EXTERNAL_FETCH', detail: 'The service does not fetch the public web to check references.' }],
          });
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/readiness',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'],
        egress: true,
        summary: 'Readiness index: each section from the last refresh (the first call runs one); overall is the worst, ADS-B capped at warn',
        tag: 'evidence',
        response: R.READINESS_INDEX,
        async handler({ ctx }) {
          ctx.set('Cache-Control', 'no-store');
          return readinessIndex(lastReadiness ?? (await refreshReadiness(hostHeaders(ctx))));
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/readiness/refresh',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'],
        egress: true,
        write: true,
        summary: 'Re-run every readiness section now (single-flight, read-only probes) and return the new index',
        tag: 'evidence',
        response: R.READINESS_REFRESH,
        async handler({ ctx }) {
          ctx.set('Cache-Control', 'no-store');
          const r = await refreshReadiness(hostHeaders(ctx));
          return readinessIndex(r, { changed: r.changed });
        },
      }),
      defineRoute({
        method: 'GET',
        path: '/readiness/:section_id/live',
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'],
        egress: true,
        summary: 'One readiness section re-checked now: observations and a read-only probe',
        tag: 'evidence',
        response: R.READINESS_SECTION,
        params: idParams('section_id', 'A section id of the readiness index (lower-case slug); unknown ids are 404'),
        errors: [404],
        async handler({ params, ctx }) {
          const id = (params as { section_id: string }).section_id;
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
        },
      }),
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
        uses: ['worker-pool', 'signer', 'ledger', 'adsb-cache', 'adsb-upstreams', 'cot'],
        egress: true,
        summary: 'Wiring health: passive status per component; probe=true adds one read-only active probe each (bounded)',
        tag: 'evidence',
        response: R.WIRING_HEALTH,
        query: QJoi.object({ probe: bool(false).description('Also run one bounded, read-only active probe per component (ADS-B upstreams at most once per 10 s)') }),
        async handler({ query, ctx }) {
          ctx.set('Cache-Control', 'no-store');
          return wiringHealth(s, (query as { probe: boolean }).probe);
        },
      }),
    ],
    provides: { enforcement },
  };
}
