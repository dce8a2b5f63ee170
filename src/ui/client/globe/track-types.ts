/** Track shapes shared by the layers, the replay and the Node tests (no DOM types here). */
import type { Decision } from '../common/palette.js';

/** A received position and when it was reported (ms since the epoch). */
export type TrailPoint = [lon: number, lat: number, atMs: number];

/** A drone track as /edge/3d lists it: its latest verdict and where that verdict placed it. */
export interface SceneTrack {
  track_id: string;
  source: string | null;
  position: { lat: number; lon: number; alt_m: number | null };
  lambda: number;
  decision: Decision;
  ledger_index: number;
  ts_utc: string;
  simulated: boolean;
}
