/**
 * Feeds what the ledger applies to the live views: the edge scene and the SSE hub get every
 * verdict, and the simulated flight's drones are offered as CoT sample tracks.
 */
import type { TrackSource } from '../cot/tracks.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import type { StreamSources } from './sources.js';
import { nodeVerdictBody } from '../verdicts/verdicts.routes.js';
import { flightFrames } from './flight.js';
import type { FlightRunner } from './flight-runner.js';
import type { SseHub } from './hub.js';
import type { EdgeScene } from './scene.js';

/** Fills the scene from the ledger, then publishes each verdict appended from now on. */
export function feedVerdicts(core: StreamSources, scene: EdgeScene, hub: SseHub, keyUrl: string | null): void {
  // every verdict the ledger applies, this replica's and (postgres mode) every other replica's, in
  // index order, told from the node alone so every replica serves the same bytes for an id;
  // serialised once per event, whatever the number of viewers
  scene.backfill((i) => core.ledger.get(i), core.ledger.size);
  core.ledger.onAppend((node, own) => {
    if (node.kind !== RECEIPT_KIND) return;
    scene.add(node, own);
    hub.publish(node.index, 'verdict', () => nodeVerdictBody(node, core, keyUrl));
  });
}

/** The flight's drones at its current tick, as CoT tracks (simulated: exported with how="m-s", opex="s"). */
export function flightTracks(flight: FlightRunner, tickMs: number): TrackSource {
  return () =>
    flightFrames(flight.currentTick, tickMs / 1000, Date.now()).map((f) => ({
      id: f.track_id.toLowerCase(),
      callsign: f.track_id,
      cotType: 'a-u-A-M-F-Q',
      lat: f.lat,
      lon: f.lon,
      haeM: f.alt_m ?? null,
      courseDeg: f.heading_deg ?? null,
      speedMps: f.speed_mps ?? null,
      simulated: true,
      remarks: `simulated flight drone (${f.source})`,
    }));
}
