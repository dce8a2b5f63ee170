/**
 * Shipment records and the dataset position of each vessel at `as_of`: distances are haversine over
 * the waypoint legs; CO2 is Σ fuel × Cf (MEPC.364(79)).
 */
import { CF, PORT_BY_LOCODE } from './dataset/reference.js';
import type { FleetDataset, Voyage } from './dataset/types.js';
import { HOUR_MS, toMs } from './dates.js';
import type { LatLon } from '../lib/geo.js';
import { pointAlong, polylineNm } from './geo.js';

export const co2Tonnes = (fuel: Voyage['fuel']): number => fuel.hfo_t * CF.hfo + fuel.mgo_t * CF.mgo + fuel.lng_t * CF.lng;

export function voyageStatus(v: Voyage, asOf: string): 'PLANNED' | 'UNDERWAY' | 'COMPLETED' {
  if (v.ata !== null && v.ata <= asOf) return 'COMPLETED';
  return v.atd !== null && v.atd <= asOf ? 'UNDERWAY' : 'PLANNED';
}

export function shipmentPayload(ds: FleetDataset) {
  return {
    items: ds.voyages.map((v) => ({
      voyage_id: v.voyage_id,
      vessel_imo: v.vessel_imo,
      voyage_no: v.voyage_no,
      route_id: v.route_id,
      load_port: v.load_port,
      discharge_port: v.discharge_port,
      etd: v.etd,
      eta: v.eta,
      atd: v.atd,
      ata: v.ata,
      speed_kn: v.speed_kn,
      waypoints: v.waypoints,
      distance_nm: polylineNm(v.waypoints),
      cargo: v.cargo,
      bl_number: v.bl_number,
      fuel: v.fuel,
      co2_t: co2Tonnes(v.fuel),
      status: voyageStatus(v, ds.as_of),
      indicators: v.indicators,
    })),
    ports: [...new Set(ds.voyages.flatMap((v) => [v.load_port, v.discharge_port]))].sort().map((l) => PORT_BY_LOCODE.get(l)!),
    method: { distance: 'haversine over the waypoint legs, R = 3440.065 nm', co2_t: 'hfo_t x 3.114 + mgo_t x 3.206 + lng_t x 2.750 (MEPC.364(79) Cf)' },
  };
}

export interface Position extends LatLon {
  kind: 'dataset_voyage_interpolation' | 'dataset_port_of_arrival';
  voyage_id: string;
  method: string;
}

/** Under way: speed_kn × hours since ATD along the great-circle legs. In port: the last discharge port. */
export function positionAt(ds: FleetDataset, imo: string): Position {
  const mine = ds.voyages.filter((v) => v.vessel_imo === imo);
  const current = mine.find((v) => voyageStatus(v, ds.as_of) === 'UNDERWAY');
  if (current) {
    const along = current.speed_kn * ((toMs(ds.as_of) - toMs(current.atd!)) / HOUR_MS);
    const p = pointAlong(current.waypoints, along);
    return { lat: p.lat, lon: p.lon, kind: 'dataset_voyage_interpolation', voyage_id: current.voyage_id, method: 'great-circle point at speed_kn x hours since atd along the waypoint legs; not AIS' };
  }
  const last = mine.filter((v) => voyageStatus(v, ds.as_of) === 'COMPLETED').sort((a, b) => (a.ata! < b.ata! ? -1 : 1)).at(-1)!;
  const port = PORT_BY_LOCODE.get(last.discharge_port)!;
  return { lat: port.lat, lon: port.lon, kind: 'dataset_port_of_arrival', voyage_id: last.voyage_id, method: 'discharge port of the last completed voyage; not AIS' };
}
