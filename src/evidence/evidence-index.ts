/**
 * The evidence claims' last refresh and what is read from it: the index document and the
 * doctrine's enforcement statuses. A refresh re-checks every claim (single-flight, one time
 * budget for the whole run, never touching the ledger).
 */
import type { Enforcement } from '../core/doctrine.js';
import { envelope } from '../core/envelope.js';
import { yieldLoop } from '../core/slices.js';
import type { Observed } from '../introspection/observed.js';
import { API } from '../isomorphic/api.js';
import { SingleFlight } from '../lib/single-flight.js';
import { CLAIMS, type Claim, type ClaimCheck, type ClaimStatus } from './claims.js';
import { withBudget } from './probes.js';

/** A claim result older than this is reported stale in the index. */
export const STALE_AFTER_S = 300;
/** Total time one refresh may take; a claim still running then is reported failed. */
export const REFRESH_BUDGET_MS = 10_000;

export interface ClaimResult extends ClaimCheck {
  checked_at: string;
}

export interface EvidenceRefresh {
  refreshed_at: string;
  duration_ms: number;
  results: Map<string, ClaimResult>;
  changed: string[];
}

/** Runs one claim's check within `budgetMs`; a check that throws or overruns is a failed result. */
export async function checkClaim(s: Observed, claim: Claim, budgetMs: number): Promise<ClaimResult> {
  const checked_at = new Date().toISOString();
  const r = await withBudget(
    claim.check(s).catch((err: unknown): ClaimCheck => ({ status: 'failed', reason: `check threw: ${(err as Error).message}`, observations: {} })),
    budgetMs,
    (): ClaimCheck => ({ status: 'failed', reason: `check exceeded its ${Math.round(budgetMs)} ms budget`, observations: {} }),
  );
  return { ...r, checked_at };
}

export class EvidenceIndex {
  private last: EvidenceRefresh | null = null;
  private refreshCount = 0;
  private readonly flight = new SingleFlight<EvidenceRefresh>();
  // one object per refresh: the doctrine serialises its document again only when this changes
  private enforced: { of: EvidenceRefresh | null; value: Enforcement } | null = null;

  constructor(private readonly s: Observed) {}

  /** Each claim's status from the last refresh, as the doctrine reports it. */
  enforcement(): Enforcement {
    const last = this.last;
    if (this.enforced?.of !== last) {
      const value = last
        ? { from_refresh_at: last.refreshed_at, claims: Object.fromEntries([...last.results].map(([id, r]) => [id, r.status])) }
        : { from_refresh_at: null, claims: {} };
      this.enforced = { of: last, value };
    }
    return this.enforced.value;
  }

  /** Re-checks every claim; concurrent callers share one run. */
  refresh(): Promise<EvidenceRefresh> {
    return this.flight.run(() => this.checkAll());
  }

  private async checkAll(): Promise<EvidenceRefresh> {
    const started = performance.now();
    const results = new Map<string, ClaimResult>();
    // sequential: claims share the pool and the in-process client; the whole run has one budget
    for (const claim of CLAIMS) {
      // a new turn of the loop per claim: checks that find everything in memory would otherwise
      // chain into one long main-thread task
      await yieldLoop();
      const remaining = REFRESH_BUDGET_MS - (performance.now() - started);
      results.set(claim.claim_id, await checkClaim(this.s, claim, Math.max(1, remaining)));
    }
    const last = this.last;
    const changed = CLAIMS.map((c) => c.claim_id).filter((id) => (last?.results.get(id)?.status ?? null) !== results.get(id)!.status);
    this.last = { refreshed_at: new Date().toISOString(), duration_ms: Math.round((performance.now() - started) * 1000) / 1000, results, changed };
    this.refreshCount++;
    return this.last;
  }

  /** The index document: every claim with its status from the last refresh. */
  document(): Record<string, unknown> {
    const last = this.last;
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
      refresh_count: this.refreshCount,
      stale_after_s: STALE_AFTER_S,
      claims,
      summary,
      honesty: last ? 'Statuses are the results of the last refresh; each live_url re-checks its claim now.' : 'No refresh has run yet: every claim is unchecked. Call the refresh route or a live view.',
      limits: [{ code: 'CACHED_INDEX', detail: 'The index serves the last refresh; statuses can age (see stale).' }],
      sources: [],
    });
  }
}
