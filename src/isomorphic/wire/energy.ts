/**
 * The `series` field of GET /api/svc/v1/energy/sovereign (and of the /energy-sovereign panel):
 * samples this process took of itself on a fixed interval, kept in a bounded ring. Columnar: each
 * field's unit and basis are stated once in `fields`, each point carries only numbers. Types only
 * (compiled by both the Node and the browser tsconfig).
 */

/** `{value, unit, basis}`, as every energy number is sent. */
export interface WireQuantity {
  value: number | null;
  unit: string;
  basis: string;
  note?: string;
}

export const SERIES_FIELDS = ['interval_s', 'cpu_s', 'cpu_utilization', 'event_loop_utilization', 'requests', 'avg_power_w'] as const;
export type SeriesField = (typeof SERIES_FIELDS)[number];

/** One interval between two consecutive samples; `at` is when the later sample was taken. */
export type SeriesPoint = { at: string } & Record<SeriesField, number>;

export interface EnergySeries {
  /** Time between samples (the sampler's timer). */
  interval_ms: WireQuantity;
  /** Ring size: older points are dropped. */
  max_points: WireQuantity;
  fields: Record<SeriesField, { unit: string; basis: string; note: string }>;
  /** Oldest first. */
  points: SeriesPoint[];
  honesty: string;
}
