/**
 * Port state control view: detention is computed, never stored — an inspection is a detention
 * exactly when one of its deficiencies carries action code 30.
 */
import { ACTION_CODES, DEFICIENCY_AREAS, DEFICIENCY_CODES } from './dataset/reference.js';
import type { FleetDataset } from './dataset/types.js';
import { addMonths } from './dates.js';

export const DETENTION_ACTION = 30;

export function pscPayload(ds: FleetDataset) {
  const asOf = ds.as_of.slice(0, 10);
  const windowStart = addMonths(asOf, -36);
  const inspections = ds.psc_inspections.map((p) => {
    const deficiencies = p.deficiencies.map((d) => ({
      deficiency_id: d.deficiency_id,
      code: d.code,
      area_code: d.code.slice(0, 2),
      area_name: DEFICIENCY_AREAS[d.code.slice(0, 2)] ?? null,
      description: d.description,
      action_codes: d.action_codes,
      ground_for_detention: d.action_codes.includes(DETENTION_ACTION),
      ro_related: d.ro_related,
      rectified: d.action_codes.includes(10),
    }));
    const detained = deficiencies.some((d) => d.ground_for_detention);
    return {
      inspection_id: p.inspection_id,
      vessel_imo: p.vessel_imo,
      mou: p.mou,
      port_locode: p.port_locode,
      date: p.date,
      type: p.type,
      detained,
      released_on: detained ? p.detention_lifted : null,
      deficiencies,
    };
  });
  const summary_by_vessel = ds.vessels.map((v) => {
    const mine = inspections.filter((p) => p.vessel_imo === v.imo && p.date >= windowStart && p.date <= asOf);
    const byArea: Record<string, number> = {};
    for (const d of mine.flatMap((p) => p.deficiencies)) byArea[d.area_code] = (byArea[d.area_code] ?? 0) + 1;
    return {
      imo: v.imo,
      inspections_36m: mine.length,
      deficiencies_36m: mine.reduce((s, p) => s + p.deficiencies.length, 0),
      detentions_36m: mine.filter((p) => p.detained).length,
      deficiencies_by_area: Object.fromEntries(Object.entries(byArea).sort(([a], [b]) => (a < b ? -1 : 1))),
    };
  });
  return {
    window: { from: windowStart, to: asOf },
    inspections,
    summary_by_vessel,
    code_list: {
      name: 'Harmonized PSC deficiency codes (Paris MoU, adopted 2011; Tokyo MoU) - extract used by the dataset',
      edition: '2011 harmonized list',
      source: 'http://www.bsmou.org/psc-manual-rev-19/3/',
      codes: DEFICIENCY_CODES,
      areas: DEFICIENCY_AREAS,
      action_codes: ACTION_CODES,
    },
  };
}

export type PscPayload = ReturnType<typeof pscPayload>;
