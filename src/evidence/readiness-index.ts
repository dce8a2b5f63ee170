/**
 * The readiness sections' last refresh and the index document built from it. A refresh runs every
 * section at once (single-flight, read-only probes).
 */
import type { HealthStatus } from '../platform/health.js';
import { envelope } from '../core/envelope.js';
import { worst } from '../introspection/component-status.js';
import type { Observed } from '../introspection/observed.js';
import { API } from '../isomorphic/api.js';
import { SingleFlight } from '../lib/single-flight.js';
import { runSection, SECTIONS, type SectionResult } from './readiness.js';

export interface ReadinessRefresh {
  refreshed_at: string;
  sections: SectionResult[];
  changed: string[];
}

export class ReadinessIndex {
  private last: ReadinessRefresh | null = null;
  private readonly flight = new SingleFlight<ReadinessRefresh>();

  constructor(private readonly s: Observed) {}

  /** The last refresh, or a first one run now. */
  current(headers: Record<string, string>): Promise<ReadinessRefresh> {
    return this.last ? Promise.resolve(this.last) : this.refresh(headers);
  }

  /** Re-runs every section; concurrent callers share one run. */
  refresh(headers: Record<string, string>): Promise<ReadinessRefresh> {
    return this.flight.run(() => this.runAll(headers));
  }

  private async runAll(headers: Record<string, string>): Promise<ReadinessRefresh> {
    const sections = await Promise.all(SECTIONS.map((sec) => runSection(this.s, sec, headers)));
    const last = this.last;
    const changed = sections.filter((r) => last?.sections.find((p) => p.section_id === r.section_id)?.status !== r.status).map((r) => r.section_id);
    this.last = { refreshed_at: new Date().toISOString(), sections, changed };
    return this.last;
  }

  /** The index document of refresh `r`; overall is the worst section. */
  document(r: ReadinessRefresh, extra: Record<string, unknown> = {}): Record<string, unknown> {
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
  }
}
