/**
 * Replay of the last minutes of verdicts, read back from the ledger: each verdict is checked in
 * the browser (signature and frame, verify.ts) and placed by its signed time, so the slider shows
 * what was decided, where and when, as signed. Pure apart from the verifier it is given.
 */
import type { Decision } from '../common/palette.js';
import type { SceneTrack, TrailPoint } from './track-types.js';
import type { SignedVerdict, VerdictVerifier } from './verify.js';

export interface ReplayVerdict extends SignedVerdict {
  lambda: number;
  simulated: boolean;
  source: string | null;
  ledger: { index: number };
}

export interface ReplayWindow {
  minutes: number;
  count: number;
  truncated: boolean;
  items: ReplayVerdict[];
}

export interface ReplayItem {
  index: number;
  atMs: number;
  track: SceneTrack;
  signature: boolean;
  frame: boolean | null;
}

export interface Replay {
  items: ReplayItem[];
  fromMs: number;
  toMs: number;
  /** Verdicts whose signature verified, and whose frame (when present) hashed to the signed digest. */
  verified: number;
  failed: number;
  /** Verdicts without a position (no frame): counted, not drawn. */
  unplaced: number;
  truncated: boolean;
}

/** Verifies every verdict of a window and orders them by their signed time. */
export async function buildReplay(w: ReplayWindow, verifier: VerdictVerifier): Promise<Replay> {
  const items: ReplayItem[] = [];
  let verified = 0;
  let failed = 0;
  let unplaced = 0;
  const checks = await Promise.all(w.items.map((v) => verifier.verify(v)));
  w.items.forEach((v, i) => {
    const c = checks[i]!;
    const ok = c.signature && c.frame !== false;
    if (ok) verified++;
    else failed++;
    const f = v.frame as { lat?: number; lon?: number; alt_m?: number } | null;
    if (!f || typeof f.lat !== 'number' || typeof f.lon !== 'number' || !v.track_id) {
      unplaced++;
      return;
    }
    // the signed time and decision, never the unsigned copies beside them
    const ts = c.tsUtc ?? v.ts_utc;
    items.push({
      index: v.ledger.index,
      atMs: Date.parse(ts),
      signature: c.signature,
      frame: c.frame,
      track: {
        track_id: v.track_id,
        source: v.source,
        position: { lat: f.lat, lon: f.lon, alt_m: typeof f.alt_m === 'number' ? f.alt_m : null },
        lambda: v.lambda,
        decision: (c.decision ?? v.decision) as Decision,
        ledger_index: v.ledger.index,
        ts_utc: ts,
        simulated: v.simulated,
      },
    });
  });
  items.sort((a, b) => a.atMs - b.atMs || a.index - b.index);
  const fromMs = items.length ? items[0]!.atMs : Date.now() - w.minutes * 60_000;
  const toMs = items.length ? items[items.length - 1]!.atMs : Date.now();
  return { items, fromMs, toMs, verified, failed, unplaced, truncated: w.truncated };
}

/** Each track's latest verdict at `atMs`, with the positions it was decided at since `trailFromMs`. */
export function replayAt(r: Replay, atMs: number, trailFromMs: number): { tracks: SceneTrack[]; trails: Map<string, TrailPoint[]>; shown: number } {
  const latest = new Map<string, SceneTrack>();
  const trails = new Map<string, TrailPoint[]>();
  let shown = 0;
  for (const it of r.items) {
    if (it.atMs > atMs) break;
    shown++;
    const id = it.track.track_id;
    latest.set(id, it.track);
    if (it.atMs >= trailFromMs) {
      let t = trails.get(id);
      if (!t) trails.set(id, (t = []));
      t.push([it.track.position.lon, it.track.position.lat, it.atMs]);
    }
  }
  return { tracks: [...latest.values()], trails, shown };
}
