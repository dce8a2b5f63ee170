/**
 * The operational globe: land, graticule and no-fly zones; military ADS-B aircraft; drone tracks by
 * latest verdict; CoT sample tracks; dataset vessels. Data comes only from this service's API; a
 * failing layer says so. State is exposed read-only as `window.svcUi`, so tests and support read
 * what the page shows.
 */
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { getJson, getText, whileVisible } from '../common/api.js';
import { $, chipInto, el, setText } from '../common/dom.js';
import { fmtAge, fmtLatLon, fmtNum, fmtTime } from '../common/format.js';
import { adsbChip, cotChip, ledgerText, vesselChip, verdictChip } from '../common/honesty.js';
import { ALTITUDE_STOPS, DECISION_STYLE, DECISIONS, GLYPHS, GROUND_COLOR, STALE, UNKNOWN_ALT_COLOR, VESSEL_COLOR, ZONE_COLOR, type Decision } from '../common/palette.js';
import { VerdictStream, type StreamStatus } from '../common/sse.js';
import { drawBase, drawFrame, drawOverlay, hitTest, pathOf, type Drawn, type Kind, type Lod, type Site, type Stack, type Target } from './draw.js';
import { aircraftAgeS, aircraftTarget, cotTarget, FADE_S, HIDE_S, droneTarget, parseCot, pushTrail, vesselTarget, type CotEvent, type SceneTrack, type TrailPoint, type Vessel } from './layers.js';
import { View } from './view.js';
import { landParts, visibleLand, type LandPart } from './land.js';
import { boundingCap, metresPerPixel, ring, ringRadii, scaleBar, zoomForCap, type ScaleBar } from './measure.js';
import { altIn, altUnit, fmtDistance, loadUnits, saveUnits, type UnitSystem } from '../common/units.js';
import { Watcher, zoneSite, type Entry } from './watch.js';
import { AlertSound } from './alert-sound.js';
import { fmtPosition, utcClock, type PositionFormat } from './position.js';
import { buildReplay, replayAt, type Replay, type ReplayWindow } from './replay.js';
import { VerdictVerifier, type PublicJwk } from './verify.js';
import { feedDown } from '../common/honesty.js';
import type { MultiPolygon, Polygon } from 'geojson';
import { cotFrame } from './cot-frame.js';
import type { AdsbAnswer } from '../../../isomorphic/wire/adsb.js';
import { API, COT_TRACK_UID_PREFIX } from '../../../isomorphic/api.js';

const ADSB_POLL_MS = 10_000;
const HOME = { lon: -100, lat: 38, zoom: 1 };
const TABLE_ROWS = 200;
const QUEUE_CAP = 2000;
const FEED_ROWS = 50;
/** Zoom from which 1:10m land is fetched and drawn at rest (about 600 m per pixel on a desktop). */
const DETAIL_ZOOM = 24;
const ALERT_POLL_MS = 5_000;
/** Range rings are drawn when their step is at most this (a site's surroundings, not a continent). */
const MAX_RING_STEP_M = 50_000;
const ALERTS_SHOWN = 5;

// ---------------------------------------------------------------- state
const view = new View({ ...HOME });
const layerOn: Record<Kind | 'zones', boolean> = { aircraft: true, vessel: true, drone: true, cot: true, zones: true };
const opts = { labels: true, trails: true, trailMinutes: 5 };
const storage = (() => {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
})();
let units: UnitSystem = loadUnits(storage);
let posFormat: PositionFormat = 'degrees';
/** The selection is kept at the centre while this holds; dragging the globe lets go. */
let follow = true;
let cursor: [number, number] | null = null;
let scale: ScaleBar | null = null;
let landDetail: LandPart[] | null = null;
let landDetailState: 'idle' | 'loading' | 'loaded' | 'failed' = 'idle';
const watcher = new Watcher();
const sound = new AlertSound();
const fired: Entry[] = [];
let serverAlertsAfter = 0;
const serverAlerts: Record<string, unknown>[] = [];
let replay: Replay | null = null;
let replayAtMs = 0;
let replayTimer: number | null = null;
let adsbPolledAt = 0;
/** Land at 1:110m while the view moves and 1:50m at rest (once loaded): 50m is too slow to drag. */
let land: LandPart[] | null = null;
let landFine: LandPart[] | null = null;
/** The view counts as moving until this long after its last change, and while a pointer is down. */
const SETTLE_MS = 250;
let movedAt = -Infinity;
let adsb: AdsbAnswer | null = null;
let adsbError: string | null = null;
let adsbOkAt: number | null = null;
const aircraftTrails = new Map<string, TrailPoint[]>();
let aircraftRaw: AdsbAnswer['aircraft'] = [];
let aircraftTargets: (Target | null)[] = [];
let vessels: Vessel[] = [];
let vesselsAsOf: string | null = null;
let vesselsSynthetic: boolean | null = null;
let vesselsError: string | null = null;
let tracks: SceneTrack[] = [];
const droneTrails = new Map<string, TrailPoint[]>();
let zones: { polygon: [number, number][]; name: string }[] = [];
/** Sensor sites the service is configured with (stream.sensors). */
let sensors: { name: string; lat: number; lon: number }[] = [];
let cot: CotEvent[] = [];
let cotError: string | null = null;
const cotTrails = new Map<string, TrailPoint[]>();
let all: Target[] = [];
let shown: Target[] = [];
let selected: string | null = null;
const feed: Record<string, unknown>[] = [];
const queue: Record<string, unknown>[] = [];
let dropped = 0;
/** Aircraft on screen in the last frame; kept across `rebuild`, which replaces `svcUi.layers`. */
let aircraftDrawn = 0;
const drawn: Drawn = { keys: [], xs: new Float32Array(0), ys: new Float32Array(0), rot: new Float32Array(0), n: 0, lod: 'glyphs', labels: [], stacks: [] };
const loaded = { land: false, adsb: false, scene: false, vessels: false, cot: false };
const overlayMs: number[] = [];
const baseMs: number[] = [];
/** Base draws by land resolution: what each costs on this client. */
const baseMsBy: Record<LandRes, number[]> = { '110m': [], '50m': [], '10m': [] };
/** Targets rebuilt from the layers, filters applied and the table patched (data changes, every 5 s). */
const rebuildMs: number[] = [];

const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');
type LandRes = '110m' | '50m' | '10m';

interface SvcUi {
  ready: boolean;
  frame: number;
  baseFrame: number;
  view: { lon: number; lat: number; zoom: number; scale: number };
  layers: Record<string, Record<string, unknown>>;
  sse: StreamStatus | null;
  selected: string | null;
  errors: string[];
  longTasks: number[];
  perf: { overlayMs: number[]; baseMs: number[]; rebuildMs: number[]; baseMsBy: Record<LandRes, number[]> };
  /** Which land the base canvas shows now, which resolutions are loaded, and whether the view is moving. */
  land: { drawn: LandRes | null; loaded: LandRes[]; moving: boolean };
  lod: Lod;
  units: UnitSystem;
  follow: boolean;
  /** The scale bar as drawn: CSS pixels and the ground distance they stand for. */
  scaleBar: { cssPx: number; metres: number; label: string } | null;
  stacks: Stack[];
  /** Sites with range rings drawn on the base layer. */
  sites: { name: string; lon: number; lat: number; ringsM: number[] }[];
  feedBanner: string | null;
  watch: { zones: string[]; tracks: string[] };
  alerts: { fired: Entry[]; beeps: number; sound: string; server: Record<string, unknown>[] };
  replay: { active: boolean; atMs: number | null; items: number; verified: number; failed: number; shown: number } | null;
  /** Polls /adsb now instead of at the next interval (support and tests). */
  refreshAdsb(): Promise<void>;
  reducedMotion: boolean;
  project(lon: number, lat: number): [number, number] | null;
  /** The ground point under a canvas pixel (device pixels), or null off the globe. */
  invert(x: number, y: number): [number, number] | null;
  target(key: string): Record<string, unknown> | null;
  snapshot(): unknown;
}

const svcUi: SvcUi = {
  ready: false,
  frame: 0,
  baseFrame: 0,
  view: { ...view.state, scale: view.radius },
  layers: {},
  sse: null,
  selected: null,
  errors: [],
  longTasks: [],
  perf: { overlayMs, baseMs, rebuildMs, baseMsBy },
  land: { drawn: null, loaded: [], moving: false },
  lod: 'glyphs',
  units,
  follow,
  scaleBar: null,
  stacks: [],
  sites: [],
  feedBanner: null,
  watch: { zones: [], tracks: [] },
  alerts: { fired, beeps: 0, sound: 'off', server: serverAlerts },
  replay: null,
  refreshAdsb: () => loadAdsb(),
  reducedMotion: reducedMotion.matches,
  project: (lon, lat) => view.project(lon, lat),
  invert: (x, y) => view.invert(x, y),
  target(key) {
    const t = all.find((x) => x.key === key);
    if (!t) return null;
    const j = drawn.keys.indexOf(key);
    const rot = j >= 0 ? drawn.rot[j]! : NaN;
    return {
      key: t.key,
      kind: t.kind,
      label: t.label,
      lon: t.lon,
      lat: t.lat,
      color: t.stale ? STALE : t.color,
      glyph: t.glyph,
      decision: t.decision,
      trackDeg: t.trackDeg,
      frame: t.frame ?? null,
      stale: t.stale,
      altM: t.altM,
      trailPoints: t.trail.length,
      origin: t.origin,
      simulated: t.simulated,
      drawn: j >= 0,
      labelled: drawn.labels.includes(t.key),
      shown: shown.includes(t),
      x: j >= 0 ? drawn.xs[j] : null,
      y: j >= 0 ? drawn.ys[j] : null,
      screenRotationDeg: Number.isNaN(rot) ? null : ((rot * 180) / Math.PI + 360) % 360,
    };
  },
  snapshot() {
    return JSON.parse(JSON.stringify({ ...svcUi, perf: undefined }));
  },
};
Object.defineProperty(window, 'svcUi', { value: svcUi, writable: false });
document.addEventListener('securitypolicyviolation', (e) => svcUi.errors.push(`csp: ${e.violatedDirective} ${e.blockedURI}`));
window.addEventListener('error', (e) => svcUi.errors.push(`error: ${e.message}`));
window.addEventListener('unhandledrejection', (e) => svcUi.errors.push(`rejection: ${String(e.reason)}`));
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) svcUi.longTasks.push(Math.round(e.duration));
  }).observe({ type: 'longtask', buffered: true });
} catch {
  // long-task timing is not available in every browser
}
reducedMotion.addEventListener('change', () => (svcUi.reducedMotion = reducedMotion.matches));

// ---------------------------------------------------------------- canvases
const region = $('globe');
const baseCanvas = $('base') as HTMLCanvasElement;
const overlayCanvas = $('overlay') as HTMLCanvasElement;
const baseCtx = baseCanvas.getContext('2d')!;
const overlayCtx = overlayCanvas.getContext('2d', { willReadFrequently: true })!;

function resize(): void {
  const r = region.getBoundingClientRect();
  const dpr = Math.min(2, window.devicePixelRatio || 1);
  for (const c of [baseCanvas, overlayCanvas]) {
    c.width = Math.max(1, Math.round(r.width * dpr));
    c.height = Math.max(1, Math.round(r.height * dpr));
  }
  baseCtx.resetTransform();
  overlayCtx.resetTransform();
  view.resize(baseCanvas.width, baseCanvas.height);
  invalidate(true);
}

let frameRequested = false;
let baseDirty = true;
function invalidate(base = false): void {
  if (base) baseDirty = true;
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(frame);
}

function frame(): void {
  frameRequested = false;
  if (queue.length) applyQueue();
  if (baseDirty) {
    const t0 = performance.now();
    const moving = isMoving();
    // 50m costs several times 110m per draw (~50 ms against ~6 ms): only when the view rests; 10m
    // only zoomed in, where the view clips it to a few degrees
    if (view.state.zoom >= DETAIL_ZOOM && landDetailState === 'idle') void loadLandDetail();
    const res = landFor(moving);
    const parts = res === '10m' ? landDetail : res === '50m' ? landFine : land;
    // only the polygons that can reach the canvas go through d3's projection and clipping
    drawBase(baseCtx, view, parts && visibleLand(parts, view.state.lon, view.state.lat, view.radius, view.width, view.height), layerOn.zones ? sitesFor() : []);
    const ms = performance.now() - t0;
    record(baseMs, ms);
    if (res) record(baseMsBy[res], ms);
    svcUi.land = { ...svcUi.land, drawn: res, moving };
    baseDirty = false;
    svcUi.baseFrame++;
  }
  const t0 = performance.now();
  const trailSinceMs = (replay ? replayAtMs : Date.now()) - opts.trailMinutes * 60_000;
  drawOverlay(overlayCtx, view, shown, { labels: opts.labels, trails: opts.trails, selected, zones, showZones: layerOn.zones, trailSinceMs, units }, drawn);
  record(overlayMs, performance.now() - t0);
  svcUi.lod = drawn.lod;
  svcUi.stacks = drawn.stacks.map((st) => ({ ...st, keys: [...st.keys] }));
  renderScale();
  if (!cursor) renderCursor();
  svcUi.view = { ...view.state, scale: view.radius };
  aircraftDrawn = drawn.keys.reduce((n, k) => n + (k.startsWith('ac:') ? 1 : 0), 0);
  svcUi.layers.aircraft = { ...svcUi.layers.aircraft, drawn: aircraftDrawn };
  svcUi.frame++;
  checkReady();
}

function record(list: number[], ms: number): void {
  list.push(Math.round(ms * 100) / 100);
  if (list.length > 600) list.splice(0, list.length - 600);
}

function checkReady(): void {
  if (svcUi.ready || !Object.values(loaded).every(Boolean) || svcUi.baseFrame === 0) return;
  svcUi.ready = true;
  document.body.dataset.ready = 'true';
}

// ---------------------------------------------------------------- targets, filters, table
const KINDS: readonly Kind[] = ['drone', 'aircraft', 'cot', 'vessel']; // table order
const byLabel = (a: Target, b: Target) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0);
/** Each layer's targets, sorted by label; rebuilt only when that layer's data changes (or on the age tick). */
const byKind: Record<Kind, Target[]> = { drone: [], aircraft: [], cot: [], vessel: [] };

function rebuild(kinds: readonly Kind[] = KINDS): void {
  const t0 = performance.now();
  const now = Date.now();
  for (const k of kinds) byKind[k] = buildLayer(k, now);
  all = KINDS.flatMap((k) => byKind[k]);
  applyFilters(kinds);
  record(rebuildMs, performance.now() - t0);
}

function buildLayer(kind: Kind, now: number): Target[] {
  const list: Target[] = [];
  if (kind === 'aircraft' && adsb) {
    // aircraft objects are built (and sorted) once per ADS-B answer; ticks only move their ages on
    const fetchedAtMs = adsb.fetched_at ? Date.parse(adsb.fetched_at) : null;
    for (let i = 0; i < aircraftRaw.length; i++) {
      const a = aircraftRaw[i]!;
      const t = aircraftTargets[i];
      const age = aircraftAgeS(a, fetchedAtMs, now);
      if (!t || (age !== null && age > HIDE_S)) continue;
      t.stale = age === null || age > FADE_S || !adsb.live;
      list.push(t);
    }
    return list;
  }
  if (kind === 'vessel') {
    for (const v of vessels) {
      const t = vesselTarget(v, vesselsAsOf);
      if (t) list.push(t);
    }
  } else if (kind === 'cot') {
    // the CoT export re-publishes each drone track: one row per track, the drone's (it has the verdict)
    // (the export lower-cases the flight's ids, so the match ignores case)
    const drones = new Set(tracks.map((t) => `${COT_TRACK_UID_PREFIX}${t.track_id}`.toLowerCase()));
    for (const e of cot) {
      if (drones.has(e.uid.toLowerCase())) continue;
      const t = cotTarget(e, cotTrails.get(e.uid) ?? [], now);
      if (t) list.push(t);
    }
  } else if (kind === 'drone') {
    if (replay) {
      const at = replayAt(replay, replayAtMs, replayAtMs - opts.trailMinutes * 60_000);
      for (const tr of at.tracks) list.push(droneTarget(tr, at.trails.get(tr.track_id) ?? [], replayAtMs));
      if (svcUi.replay) svcUi.replay.shown = at.shown;
    } else for (const tr of tracks) list.push(droneTarget(tr, droneTrails.get(tr.track_id) ?? [], now));
  }
  return list.sort(byLabel);
}

const filterInputs = {
  search: $('f-search') as HTMLInputElement,
  altMin: $('f-alt-min') as HTMLInputElement,
  altMax: $('f-alt-max') as HTMLInputElement,
  glyph: $('f-glyph') as HTMLSelectElement,
};

const shownByKind: Record<Kind, Target[]> = { drone: [], aircraft: [], cot: [], vessel: [] };

/** Filters the given layers again (all when a filter changed); the other layers keep their lists. */
function applyFilters(kinds: readonly Kind[] = KINDS): void {
  const q = filterInputs.search.value.trim().toLowerCase();
  const min = filterInputs.altMin.value === '' ? null : Number(filterInputs.altMin.value);
  const max = filterInputs.altMax.value === '' ? null : Number(filterInputs.altMax.value);
  const glyph = filterInputs.glyph.value;
  const decisions = new Set(DECISIONS.filter((d) => ($(`f-${d}`) as HTMLInputElement).checked));
  const keep = (t: Target): boolean => {
    if (!layerOn[t.kind]) return false;
    if (q && !t.search.includes(q)) return false;
    if (t.kind === 'aircraft') {
      if (glyph && t.glyph !== glyph) return false;
      if ((min !== null || max !== null) && t.altM === null) return false;
      // the bounds are typed in the unit system shown
      if (min !== null && altIn(t.altM!, units) < min) return false;
      if (max !== null && altIn(t.altM!, units) > max) return false;
    }
    if (t.kind === 'drone' && t.decision && !decisions.has(t.decision)) return false;
    return true;
  };
  for (const k of kinds) shownByKind[k] = byKind[k].filter(keep);
  // layers in table order, each sorted by label: the table needs no sort of its own
  shown = KINDS.flatMap((k) => shownByKind[k]);
  const counts = { aircraft: byKind.aircraft.length, vessel: byKind.vessel.length, drone: byKind.drone.length, cot: byKind.cot.length };
  svcUi.layers = {
    // drawn: as of the last frame (the next one, requested below, updates it)
    aircraft: { count: counts.aircraft, shown: shownByKind.aircraft.length, drawn: aircraftDrawn, live: adsb?.live ?? null, reason: adsb?.reason ?? adsbError, ageS: adsb?.age_s ?? null, apiCount: adsb?.count ?? null },
    vessels: { count: counts.vessel },
    drones: { count: counts.drone },
    cot: { count: counts.cot },
    zones: { count: zones.length },
    verdicts: { count: feed.length, lastId: stream.status.lastId, gaps: stream.status.gaps, duplicates: stream.status.duplicates, dropped },
  };
  renderTable();
  renderDetails();
  followSelection();
  invalidate();
}

const tbody = $('targets-body');
let tableSignature = '';
let rowKeys: string[] = [];

function stateText(t: Target): string {
  if (t.kind === 'drone') return `${t.decision}${t.stale ? ' · stale' : ''}`;
  return t.stale ? 'stale' : t.kind === 'vessel' ? 'dataset' : 'current';
}

function renderTable(): void {
  const sorted = shown;
  const rows = sorted.slice(0, TABLE_ROWS);
  const signature = rows.map((t) => `${t.key}|${t.altM}|${stateText(t)}`).join('\n') + `\n${selected}|${units}`;
  setText('targets-count', sorted.length > TABLE_ROWS ? `showing ${TABLE_ROWS} of ${fmtNum(sorted.length)} (filter to narrow)` : `${sorted.length} targets`);
  // nothing changed in the rows on screen: no DOM work at all
  if (signature === tableSignature) return;
  tableSignature = signature;
  const focusedKey = document.activeElement instanceof HTMLTableRowElement ? document.activeElement.dataset.key : null;
  const keys = rows.map((t) => t.key);
  const frag = document.createDocumentFragment();
  for (const t of rows) {
    const tr = el(
      'tr',
      { 'data-key': t.key, tabindex: -1, 'aria-selected': String(t.key === selected), class: t.stale ? 'stale' : undefined },
      el('td', { text: t.kind }),
      el('td', { text: t.label, title: t.label }),
      el('td', { text: t.simulated ? 'SIM' : t.origin, class: t.simulated ? 'sim' : undefined, title: t.simulated ? 'simulated track' : undefined }),
      el('td', { text: t.altM === null ? 'unknown' : fmtNum(altIn(t.altM, units)) }),
      el('td', {}, t.decision ? el('span', { class: `tag ${t.decision.toLowerCase()}`, text: `${SHAPE_CHAR[t.decision]} ${stateText(t)}` }) : stateText(t)),
    );
    frag.append(tr);
  }
  tbody.replaceChildren(frag);
  rowKeys = keys;
  const rovingKey = focusedKey && keys.includes(focusedKey) ? focusedKey : selected && keys.includes(selected) ? selected : keys[0];
  const roving = rovingKey ? (tbody.querySelector(`tr[data-key="${CSS.escape(rovingKey)}"]`) as HTMLTableRowElement | null) : null;
  if (roving) {
    roving.tabIndex = 0;
    if (focusedKey === rovingKey) roving.focus();
  }
}

const SHAPE_CHAR: Record<Decision, string> = { ALLOW: '●', REVIEW: '▲', DENY: '⊠' };

function select(key: string | null, focusTable = false): void {
  selected = key;
  svcUi.selected = key;
  if (key) setFollow(true);
  followSelection();
  for (const tr of Array.from(tbody.querySelectorAll('tr'))) tr.setAttribute('aria-selected', String(tr.dataset.key === key));
  renderDetails();
  if (focusTable && key) (tbody.querySelector(`tr[data-key="${CSS.escape(key)}"]`) as HTMLElement | null)?.focus();
  invalidate();
}

function setFollow(on: boolean): void {
  follow = on;
  svcUi.follow = on;
  ($('follow') as HTMLInputElement).checked = on;
}

/**
 * Keeps the followed selection at the centre. Not a "move" of the view (which would hold the
 * coarse land): a followed drone moves several times a second.
 */
function followSelection(): void {
  if (!follow || !selected) return;
  const t = all.find((x) => x.key === selected);
  if (!t || (Math.abs(t.lon - view.state.lon) < 1e-9 && Math.abs(t.lat - view.state.lat) < 1e-9)) return;
  view.set({ lon: t.lon, lat: t.lat });
  invalidate(true);
}

/** Where zooming anchors: the selection when it is on screen, else the given point (pointer or centre). */
function zoomAnchor(fallback: [number, number]): [number, number] {
  const t = selected ? all.find((x) => x.key === selected) : undefined;
  return (t && view.project(t.lon, t.lat)) ?? fallback;
}

function zoomTowards(factor: number, fallback: [number, number] = [view.width / 2, view.height / 2]): void {
  const [x, y] = zoomAnchor(fallback);
  changeView(() => view.zoomAt(x, y, factor));
}

/** Frames every live target shown (all shown targets when none is live). */
function fitActivity(): void {
  const live = shown.filter((t) => !t.stale);
  const cap = boundingCap((live.length ? live : shown).map((t) => [t.lon, t.lat] as const));
  if (!cap) return;
  setFollow(false);
  changeView(() => view.set({ lon: cap.lon, lat: cap.lat, zoom: zoomForCap(cap) }));
}

function renderDetails(): void {
  const box = $('details');
  const t = selected ? all.find((x) => x.key === selected) : undefined;
  if (!t) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  setText('details-title', `${t.kind} · ${t.label}${t.simulated ? ' · SIMULATED' : ''}${t.stale ? ' · STALE' : ''}`);
  const watchBtn = $('watch-track');
  watchBtn.setAttribute('aria-pressed', String(watcher.tracks.has(t.key)));
  watchBtn.textContent = watcher.tracks.has(t.key) ? 'Stop watching' : 'Watch this track';
  const dl = $('details-fields');
  const items: Node[] = [];
  for (const [name, value, source] of t.details(units)) {
    const dd = el('dd', { 'data-field': name });
    if (value.startsWith('/api/')) dd.append(el('a', { href: value, text: value }));
    else dd.append(value);
    dd.append(el('span', { class: 'src', text: ` · ${source}` }));
    items.push(el('dt', { text: name }), dd);
  }
  dl.replaceChildren(...items);
}

// ---------------------------------------------------------------- loaders
async function loadLand(): Promise<void> {
  const url = document.body.dataset.land!;
  const r = await getJson<Topology>(url, 15_000);
  if (r.data) {
    const topo = r.data;
    land = partsOf(topo);
    svcUi.land.loaded = [...svcUi.land.loaded, '110m'];
  } else svcUi.errors.push(`land: ${r.error}`);
  loaded.land = true;
  invalidate(true);
  // the finer land only after the coarse one: it is ten times the bytes, and the page works without it
  void loadLandFine();
}

/** world-atlas `land` (a GeometryCollection of one MultiPolygon) → polygons with their bounding caps. */
function partsOf(topo: Topology): LandPart[] {
  const fc = feature(topo, topo.objects.land as GeometryCollection);
  return landParts(fc.features.map((f) => f.geometry).filter((g): g is Polygon | MultiPolygon => g?.type === 'Polygon' || g?.type === 'MultiPolygon'));
}

async function loadLandFine(): Promise<void> {
  const r = await getJson<Topology>(document.body.dataset.landFine!, 60_000);
  if (!r.data) {
    svcUi.errors.push(`land 50m: ${r.error}`);
    return;
  }
  landFine = partsOf(r.data);
  svcUi.land.loaded = [...svcUi.land.loaded, '50m'];
  if (!isMoving()) invalidate(true);
}

/** 1:10m land (3 MB): fetched the first time the view is zoomed in far enough to need it. */
async function loadLandDetail(): Promise<void> {
  landDetailState = 'loading';
  const r = await getJson<Topology>(document.body.dataset.landDetail!, 120_000);
  if (!r.data) {
    landDetailState = 'failed';
    svcUi.errors.push(`land 10m: ${r.error}`);
    return;
  }
  landDetail = partsOf(r.data);
  landDetailState = 'loaded';
  svcUi.land.loaded = [...svcUi.land.loaded, '10m'];
  if (!isMoving()) invalidate(true);
}

async function loadAdsb(): Promise<void> {
  adsbPolledAt = Date.now();
  const r = await getJson<AdsbAnswer>(`${API}/adsb?lat_min=-90&lat_max=90&lon_min=-180&lon_max=180`);
  if (r.data && Array.isArray(r.data.aircraft)) {
    adsb = r.data;
    adsbError = null;
    adsbOkAt = Date.now();
    const seen = new Set<string>();
    const at = Date.now();
    for (const a of adsb.aircraft) {
      seen.add(a.hex);
      aircraftTrails.set(a.hex, pushTrail(aircraftTrails.get(a.hex) ?? [], a.lon, a.lat, at));
      if (watcher.active) raise(watcher.observe(`ac:${a.hex}`, a.callsign ?? a.registration ?? a.hex, a.lon, a.lat, zones, at));
    }
    for (const hex of aircraftTrails.keys()) {
      if (seen.has(hex)) continue;
      aircraftTrails.delete(hex);
      watcher.forget(`ac:${hex}`);
    }
    const now = Date.now();
    aircraftRaw = adsb.aircraft;
    const built = aircraftRaw.map((a) => ({ a, t: aircraftTarget(a, adsb!, aircraftTrails.get(a.hex) ?? [], now) }));
    built.sort((x, y) => (x.t && y.t ? byLabel(x.t, y.t) : 0));
    aircraftRaw = built.map((b) => b.a);
    aircraftTargets = built.map((b) => b.t);
  } else adsbError = r.error ?? 'unreadable answer';
  loaded.adsb = true;
  document.body.dataset.aircraftLive = adsb ? String(adsb.live) : 'error';
  setText('adsb-attribution', adsb?.attribution ?? '');
  chips();
  rebuild(['aircraft']);
  renderLegendGlyphs();
}

async function loadScene(): Promise<void> {
  const r = await getJson<{ tracks: SceneTrack[]; zones: { polygon: [number, number][]; name: string }[]; sensors?: { name: string; lat: number; lon: number }[] }>(`${API}/edge/3d`);
  if (r.data) {
    tracks = (r.data.tracks ?? []).filter((t) => Number.isFinite(t.position?.lat) && Number.isFinite(t.position?.lon));
    const placesBefore = JSON.stringify([zones.map((z) => z.name), sensors]);
    zones = (r.data.zones ?? []).filter((z) => Array.isArray(z.polygon));
    sensors = (r.data.sensors ?? []).filter((x) => Number.isFinite(x.lat) && Number.isFinite(x.lon));
    if (JSON.stringify([zones.map((z) => z.name), sensors]) !== placesBefore) {
      renderWatchZones();
      invalidate(true);
    }
    const at = Date.now();
    for (const t of tracks) {
      droneTrails.set(t.track_id, pushTrail(droneTrails.get(t.track_id) ?? [], t.position.lon, t.position.lat, Date.parse(t.ts_utc) || at));
      if (watcher.active) raise(watcher.observe(`dr:${t.track_id}`, t.track_id, t.position.lon, t.position.lat, zones, at));
    }
  } else svcUi.errors.push(`scene: ${r.error}`);
  loaded.scene = true;
  chips();
  // the CoT layer leaves out the drones' own CoT copies: it follows the drone list
  rebuild(['drone', 'cot']);
}

let sceneTimer: number | null = null;
let sceneLoadedAt = 0;
function sceneSoon(): void {
  if (sceneTimer !== null) return;
  const wait = Math.max(150, 1000 - (Date.now() - sceneLoadedAt));
  sceneTimer = window.setTimeout(() => {
    sceneTimer = null;
    sceneLoadedAt = Date.now();
    void loadScene();
  }, wait);
}

async function loadVessels(): Promise<void> {
  const r = await getJson<{ as_of: string; dataset?: { synthetic?: boolean }; items: Vessel[] }>(`${API}/fleet/vessels`);
  if (r.data) {
    vessels = r.data.items ?? [];
    vesselsAsOf = r.data.as_of ?? null;
    vesselsSynthetic = r.data.dataset?.synthetic ?? null;
    vesselsError = null;
  } else vesselsError = r.error;
  loaded.vessels = true;
  chips();
  rebuild(['vessel']);
}

async function loadCot(): Promise<void> {
  const r = await getText(`${API}/cot/export`);
  try {
    if (!r.data || !r.ok) throw new Error(r.error ?? 'no body');
    cot = parseCot(r.data);
    const at = Date.now();
    for (const e of cot) cotTrails.set(e.uid, pushTrail(cotTrails.get(e.uid) ?? [], e.lon, e.lat, Date.parse(e.time) || at));
    cotError = null;
  } catch (err) {
    cotError = (err as Error).message;
  }
  loaded.cot = true;
  chips();
  rebuild(['cot']);
}

async function loadLedger(): Promise<void> {
  const r = await getJson<{ durability_state: string; persistence_scope: string; integrity?: { nodes: number; root: string } }>(`${API}/ledger/readiness`);
  const d = r.data;
  setText('ledger-mode', d ? `${d.durability_state} · ${d.persistence_scope}` : `no data (${r.error})`);
  if (d?.integrity && feed.length === 0) {
    setText('ledger-size', String(d.integrity.nodes));
    setText('ledger-root', d.integrity.root);
  }
  setText('ledger-note', d ? ledgerText(d.durability_state, d.persistence_scope) : 'Ledger state unknown');
}

function chips(): void {
  chipInto('chip-adsb', adsbChip(adsb, adsbError, adsbOkAt, Date.now(), ADSB_POLL_MS));
  renderFeedBanner();
  chipInto('chip-vessels', vesselChip(vesselsAsOf, vesselsSynthetic, [...new Set(vessels.map((v) => v.position?.kind ?? 'none'))], vesselsError));
  chipInto('chip-cot', cotChip(cot.length, 'sample', cotError));
  const sim = tracks.filter((t) => t.simulated).length;
  chipInto('chip-verdicts', verdictChip(sim, tracks.length));
}

// ---------------------------------------------------------------- live verdicts
const stream = new VerdictStream({
  url: `${API}/stream/verdicts`,
  onEvents(batch) {
    for (const e of batch) {
      if (queue.length >= QUEUE_CAP) {
        queue.shift();
        dropped++;
      }
      queue.push(e as Record<string, unknown>);
    }
    if (document.hidden) applyQueue();
    else invalidate();
  },
  onStatus(s) {
    svcUi.sse = { ...s };
    document.body.dataset.sseState = s.state;
    chipInto('chip-sse', streamChip(s));
  },
});

function streamChip(s: StreamStatus): { text: string; tone: string; title: string } {
  const text =
    s.state === 'live'
      ? `LIVE · last id ${s.lastId ?? '–'}${s.gaps ? ` · ${s.gaps} gap(s)` : ''}`
      : s.state === 'backoff'
        ? `RECONNECTING · attempt ${s.attempts}, next in ${Math.round((s.nextRetryMs ?? 0) / 1000)} s`
        : s.state.toUpperCase();
  return { text, tone: s.state === 'live' ? 'ok' : s.state === 'backoff' || s.state === 'reconnecting' ? 'warn' : 'info', title: 'GET /api/svc/v1/stream/verdicts (Server-Sent Events)' };
}

let announced = 0;
/** Set when a verdict brought a track the scene did not list yet (the CoT layer then drops its copy). */
let newTracks = false;
let pendingAnnounce: Record<Decision, number> = { ALLOW: 0, REVIEW: 0, DENY: 0 };

function applyQueue(): void {
  const batch = queue.splice(0, queue.length);
  if (!batch.length) return;
  const list = $('feed');
  const items: Node[] = [];
  for (const v of batch) {
    feed.unshift(v);
    const decision = v.decision as Decision;
    pendingAnnounce[decision] = (pendingAnnounce[decision] ?? 0) + 1;
    const ledger = v.ledger as { index: number; ledger_size: number; khipu_root: string } | undefined;
    placeVerdict(v, decision, ledger);
    if (ledger) {
      setText('ledger-size', String(ledger.ledger_size));
      setText('ledger-root', ledger.khipu_root);
    }
    items.unshift(
      el(
        'li',
        { 'data-index': ledger?.index, 'data-decision': decision, class: 'feed-item' },
        el('span', { class: `tag ${String(decision).toLowerCase()}`, text: `${SHAPE_CHAR[decision] ?? '?'} ${decision}` }),
        ` λ ${fmtNum(v.lambda as number, 3)} · ${String(v.track_id)} · #${ledger?.index ?? '?'} · `,
        el('a', { href: `${API}/receipt/export?index=${ledger?.index ?? -1}`, text: 'receipt' }),
        v.simulated ? el('span', { class: 'muted', text: ' · simulated' }) : null,
      ),
    );
  }
  list.prepend(...items);
  while (list.children.length > FEED_ROWS) list.lastElementChild!.remove();
  if (feed.length > FEED_ROWS) feed.length = FEED_ROWS;
  svcUi.sse = { ...stream.status };
  chipInto('chip-sse', streamChip(stream.status));
  setText('feed-status', `newest first · ${stream.status.lastId === null ? '' : `last id ${stream.status.lastId}`}${dropped ? ` · ${dropped} dropped` : ''}`);
  announce();
  sceneSoon();
  if (newTracks) chips();
  rebuild(newTracks ? ['drone', 'cot'] : ['drone']);
  newTracks = false;
}

/**
 * Moves the verdict's track to the position its frame gives (the frame is the one the receipt
 * signed), at once rather than at the next scene poll, and checks it against the watches.
 */
function placeVerdict(v: Record<string, unknown>, decision: Decision, ledger: { index: number } | undefined): void {
  if (!ledger || typeof v.track_id !== 'string') return;
  const f = v.frame as { lat?: unknown; lon?: unknown; alt_m?: unknown } | null | undefined;
  const pos = f && typeof f.lat === 'number' && typeof f.lon === 'number' ? { lat: f.lat, lon: f.lon, alt_m: typeof f.alt_m === 'number' ? f.alt_m : null } : null;
  let tr = tracks.find((t) => t.track_id === v.track_id);
  if (!tr && pos) {
    tr = { track_id: v.track_id, source: (v.source as string | null) ?? null, position: pos, lambda: v.lambda as number, decision, ledger_index: ledger.index, ts_utc: v.ts_utc as string, simulated: v.simulated === true };
    tracks.push(tr);
    newTracks = true;
  }
  if (!tr) return;
  Object.assign(tr, { decision, lambda: v.lambda, ledger_index: ledger.index, ts_utc: v.ts_utc }, pos ? { position: pos } : {});
  if (!pos) return;
  const at = Date.parse(v.ts_utc as string) || Date.now();
  droneTrails.set(tr.track_id, pushTrail(droneTrails.get(tr.track_id) ?? [], pos.lon, pos.lat, at));
  if (watcher.active) raise(watcher.observe(`dr:${tr.track_id}`, tr.track_id, pos.lon, pos.lat, zones, Date.now()));
}

function announce(): void {
  const now = Date.now();
  if (now - announced < 10_000) return;
  const parts = DECISIONS.filter((d) => pendingAnnounce[d] > 0).map((d) => `${pendingAnnounce[d]} new ${d}`);
  if (!parts.length) return;
  announced = now;
  pendingAnnounce = { ALLOW: 0, REVIEW: 0, DENY: 0 };
  setText('announce', `${parts.join(', ')} verdicts`);
}

let summarisedAt = 0;
function summarise(): void {
  const now = Date.now();
  if (now - summarisedAt < 10_000 && summarisedAt !== 0) return;
  summarisedAt = now;
  const deny = tracks.filter((t) => t.decision === 'DENY').length;
  const ac = adsb ? `${adsb.aircraft.length} aircraft (${adsb.live ? 'live' : 'cached'}, ${fmtAge(adsb.age_s)} old)` : 'no aircraft data';
  overlayCanvas.setAttribute('aria-label', `Globe centred on ${fmtLatLon(view.state.lat, view.state.lon)}; ${ac}; ${vessels.length} vessels; ${tracks.length} drone tracks, ${deny} DENY; ${cot.length} CoT tracks. The target table lists them.`);
}

// ---------------------------------------------------------------- input
function changeView(fn: () => void): void {
  fn();
  movedAt = performance.now();
  settleLater();
  invalidate(true);
}

/**
 * The land to draw: 1:110m while the view moves, 1:50m at rest (and while moving zoomed in, where
 * the view clips it), 1:10m at rest zoomed in; each only once loaded.
 */
function landFor(moving: boolean): LandRes | null {
  const detail = view.state.zoom >= DETAIL_ZOOM;
  return landDetail && detail && !moving ? '10m' : landFine && (!moving || detail) ? '50m' : land ? '110m' : null;
}

function isMoving(): boolean {
  return pointers.size > 0 || performance.now() - movedAt < SETTLE_MS;
}

let settleTimer: number | null = null;
/** Once the view has rested SETTLE_MS, the base is drawn again with the finer land. */
function settleLater(): void {
  if (settleTimer !== null) window.clearTimeout(settleTimer);
  settleTimer = window.setTimeout(() => {
    settleTimer = null;
    if (isMoving()) settleLater();
    else if (svcUi.land.moving || svcUi.land.drawn !== landFor(false)) invalidate(true);
  }, SETTLE_MS);
}

const pointers = new Map<number, { x: number; y: number }>();
let downAt: { x: number; y: number } | null = null;
let moved = 0;
region.addEventListener('pointerdown', (e) => {
  region.setPointerCapture(e.pointerId);
  pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
  if (pointers.size === 1) {
    downAt = { x: e.clientX, y: e.clientY };
    moved = 0;
  }
});
region.addEventListener('pointermove', (e) => {
  const prev = pointers.get(e.pointerId);
  if (!prev) return;
  const dpr = baseCanvas.width / region.clientWidth;
  if (pointers.size === 2) {
    const [a, b] = [...pointers.values()] as [{ x: number; y: number }, { x: number; y: number }];
    const before = Math.hypot(a.x - b.x, a.y - b.y);
    pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    const [c, d] = [...pointers.values()] as [{ x: number; y: number }, { x: number; y: number }];
    const after = Math.hypot(c.x - d.x, c.y - d.y);
    if (before > 0) changeView(() => view.zoomBy(after / before));
    moved += 10;
    return;
  }
  const dx = e.clientX - prev.x;
  const dy = e.clientY - prev.y;
  pointers.set(e.pointerId, { x: e.clientX, y: e.clientY });
  moved += Math.abs(dx) + Math.abs(dy);
  if (moved > 3) {
    // dragging away from a followed target lets go of it
    if (follow && selected) setFollow(false);
    changeView(() => view.dragBy(dx * dpr, dy * dpr));
  }
});
region.addEventListener('pointermove', (e) => {
  const r = overlayCanvas.getBoundingClientRect();
  const dpr = overlayCanvas.width / r.width;
  cursor = view.invert((e.clientX - r.left) * dpr, (e.clientY - r.top) * dpr);
  renderCursor();
});
region.addEventListener('pointerleave', () => {
  cursor = null;
  renderCursor();
});
const endPointer = (e: PointerEvent) => {
  if (!pointers.delete(e.pointerId)) return;
  if (pointers.size === 0 && downAt && moved <= 3 && e.type === 'pointerup') {
    const r = overlayCanvas.getBoundingClientRect();
    const dpr = overlayCanvas.width / r.width;
    const key = hitTest(drawn, (e.clientX - r.left) * dpr, (e.clientY - r.top) * dpr, 16 * dpr);
    select(key);
  }
  if (pointers.size === 0) {
    downAt = null;
    settleLater();
  }
};
region.addEventListener('pointerup', endPointer);
region.addEventListener('pointercancel', endPointer);
region.addEventListener(
  'wheel',
  (e) => {
    e.preventDefault();
    const r = overlayCanvas.getBoundingClientRect();
    const dpr = overlayCanvas.width / r.width;
    zoomTowards(Math.exp(-e.deltaY * 0.0015), [(e.clientX - r.left) * dpr, (e.clientY - r.top) * dpr]);
  },
  { passive: false },
);

function selectNearestCentre(): void {
  const key = hitTest(drawn, view.width / 2, view.height / 2, Math.max(view.width, view.height));
  if (key) select(key);
}

// single-key shortcuts: only while the globe itself has focus (WCAG 2.1.4)
region.addEventListener('keydown', (e) => {
  if (e.target !== region || e.altKey || e.ctrlKey || e.metaKey) return;
  const step = e.shiftKey ? 20 : 5;
  const k = e.key;
  const lower = k.length === 1 ? k.toLowerCase() : k;
  let handled = true;
  if (k === 'ArrowLeft' || lower === 'a') changeView(() => view.rotateBy(-step / view.state.zoom, 0));
  else if (k === 'ArrowRight' || lower === 'd') changeView(() => view.rotateBy(step / view.state.zoom, 0));
  else if (k === 'ArrowUp' || lower === 'w') changeView(() => view.rotateBy(0, step / view.state.zoom));
  else if (k === 'ArrowDown' || lower === 's') changeView(() => view.rotateBy(0, -step / view.state.zoom));
  else if (k === '+' || k === '=' || lower === 'e') zoomTowards(1.25);
  else if (k === '-' || k === '_' || lower === 'q') zoomTowards(0.8);
  else if (lower === 'f') fitActivity();
  else if (k === 'Escape' || lower === 'c') select(null);
  else if (k === 'Enter') selectNearestCentre();
  else if (lower === 'l') toggle('opt-labels');
  else if (lower === 't') toggle('opt-trails');
  else if (lower === 'r') changeView(() => view.set({ ...HOME }));
  else if (k === '?') openHelp();
  else if (k === '/') filterInputs.search.focus();
  else handled = false;
  if (handled) e.preventDefault();
});

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && selected && !(e.target instanceof HTMLInputElement)) select(null);
});

tbody.addEventListener('click', (e) => {
  const tr = (e.target as HTMLElement).closest('tr');
  if (tr?.dataset.key) select(tr.dataset.key, true);
});
tbody.addEventListener('keydown', (e) => {
  const tr = (e.target as HTMLElement).closest('tr');
  if (!tr) return;
  const i = rowKeys.indexOf(tr.dataset.key ?? '');
  let next = -1;
  if (e.key === 'ArrowDown') next = Math.min(rowKeys.length - 1, i + 1);
  else if (e.key === 'ArrowUp') next = Math.max(0, i - 1);
  else if (e.key === 'Home') next = 0;
  else if (e.key === 'End') next = rowKeys.length - 1;
  else if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    if (tr.dataset.key) select(tr.dataset.key, true);
    return;
  } else return;
  e.preventDefault();
  const target = tbody.querySelector(`tr[data-key="${CSS.escape(rowKeys[next]!)}"]`) as HTMLTableRowElement | null;
  if (target) {
    tr.tabIndex = -1;
    target.tabIndex = 0;
    target.focus();
  }
});

function toggle(id: string): void {
  const box = $(id) as HTMLInputElement;
  box.checked = !box.checked;
  box.dispatchEvent(new Event('change'));
}

for (const kind of ['aircraft', 'drone', 'cot', 'vessel', 'zones'] as const) {
  ($(`layer-${kind}`) as HTMLInputElement).addEventListener('change', (e) => {
    layerOn[kind] = (e.target as HTMLInputElement).checked;
    applyFilters();
  });
}
$('opt-labels').addEventListener('change', (e) => {
  opts.labels = (e.target as HTMLInputElement).checked;
  invalidate();
});
$('opt-trails').addEventListener('change', (e) => {
  opts.trails = (e.target as HTMLInputElement).checked;
  invalidate();
});
for (const input of [filterInputs.search, filterInputs.altMin, filterInputs.altMax]) input.addEventListener('input', () => applyFilters());
filterInputs.glyph.addEventListener('change', () => applyFilters());
for (const d of DECISIONS) $(`f-${d}`).addEventListener('change', () => applyFilters());
$('zoom-in').addEventListener('click', () => zoomTowards(1.5));
$('zoom-out').addEventListener('click', () => zoomTowards(1 / 1.5));
$('fit').addEventListener('click', fitActivity);
$('reset').addEventListener('click', () => {
  setFollow(false);
  changeView(() => view.set({ ...HOME }));
});
$('details-close').addEventListener('click', () => select(null));
$('follow').addEventListener('change', (e) => {
  setFollow((e.target as HTMLInputElement).checked);
  followSelection();
});
$('watch-track').addEventListener('click', () => {
  if (!selected) return;
  if (watcher.tracks.has(selected)) watcher.tracks.delete(selected);
  else watcher.tracks.add(selected);
  renderWatch();
  renderDetails();
});
$('alert-sound').addEventListener('change', (e) => {
  sound.enable((e.target as HTMLInputElement).checked);
  svcUi.alerts.sound = sound.state;
});
const unitSelect = $('units') as HTMLSelectElement;
unitSelect.value = units;
unitSelect.addEventListener('change', () => {
  units = unitSelect.value === 'metric' ? 'metric' : 'aviation';
  saveUnits(storage, units);
  applyUnits();
});
$('pos-format').addEventListener('click', () => {
  posFormat = posFormat === 'mgrs' ? 'degrees' : 'mgrs';
  $('pos-format').setAttribute('aria-pressed', String(posFormat === 'mgrs'));
  renderCursor();
});
const trailInput = $('trail-min') as HTMLInputElement;
trailInput.addEventListener('input', () => {
  opts.trailMinutes = Number(trailInput.value);
  setText('trail-min-out', `${opts.trailMinutes} min`);
  if (replay) rebuild(['drone']);
  invalidate();
});
$('replay-load').addEventListener('click', () => void loadReplay());
$('replay-live').addEventListener('click', endReplay);
$('replay-t').addEventListener('input', () => {
  if (!replay) return;
  stopReplayPlay();
  replayAtMs = replay.fromMs + ((replay.toMs - replay.fromMs) * Number(($('replay-t') as HTMLInputElement).value)) / 1000;
  renderReplay();
});
$('replay-play').addEventListener('click', () => (replayTimer === null ? playReplay() : stopReplayPlay()));
const help = $('help') as HTMLDialogElement;
function openHelp(): void {
  help.showModal();
}
$('help-open').addEventListener('click', openHelp);
$('help-close').addEventListener('click', () => help.close());
help.addEventListener('close', () => region.focus());

// ---------------------------------------------------------------- scale, clock, cursor, sites
const scaleLine = $('scale-line');

/** The scale bar measures at the view centre, where the orthographic projection is true to scale. */
function renderScale(): void {
  const dpr = baseCanvas.width / Math.max(1, region.clientWidth);
  const mPerCssPx = metresPerPixel(view.radius) * dpr;
  const next = scaleBar(mPerCssPx, Math.min(160, region.clientWidth / 3), units);
  if (scale && scale.label === next.label && Math.abs(scale.px - next.px) < 0.25) return;
  scale = next;
  scaleLine.style.width = `${next.px.toFixed(2)}px`;
  setText('scale-label', next.label);
  svcUi.scaleBar = { cssPx: next.px, metres: next.metres, label: next.label };
}

/** The ground under the pointer; without one (a touch screen, the pointer elsewhere) the view centre. */
function renderCursor(): void {
  const mPerPx = metresPerPixel(view.radius) * (baseCanvas.width / Math.max(1, region.clientWidth));
  setText('cursor-pos', cursor ? fmtPosition(cursor[0], cursor[1], posFormat, mPerPx) : `centre ${fmtPosition(view.state.lon, view.state.lat, posFormat, mPerPx)}`);
}

function renderClock(): void {
  setText('utc-clock', utcClock(Date.now()));
}

let sitesKey = '';
let sitesCache: Site[] = [];
/** A marker at each zone's site with range rings at round distances that fit the view. */
function sitesFor(): Site[] {
  // rings only at the scale of a site: over a continent they would be clutter
  const radii = ringRadii(metresPerPixel(view.radius), Math.min(view.width, view.height), units).filter((m, _, all) => all[0]! <= MAX_RING_STEP_M);
  const key = `${zones.map((z) => z.name).join('|')}/${sensors.map((x) => `${x.name}@${x.lat},${x.lon}`).join('|')}/${radii.join(',')}/${units}`;
  if (key !== sitesKey) {
    sitesKey = key;
    const places = [...zones.map((z) => ({ name: z.name, at: zoneSite(z) })), ...sensors.map((x) => ({ name: `sensor ${x.name}`, at: [x.lon, x.lat] as [number, number] }))];
    sitesCache = places.map(({ name, at: [lon, lat] }) => ({ name, lon, lat, rings: radii.map((m) => ({ ring: ring(lon, lat, m), label: fmtDistance(m, units) })) }));
    svcUi.sites = sitesCache.map((st) => ({ name: st.name, lon: st.lon, lat: st.lat, ringsM: radii }));
  }
  return sitesCache;
}

// ---------------------------------------------------------------- feed state on the map
function renderFeedBanner(): void {
  const down = feedDown(adsb, adsbError, Date.now(), adsbPolledAt + ADSB_POLL_MS);
  const box = $('feed-banner');
  svcUi.feedBanner = down?.text ?? null;
  box.hidden = !down;
  if (!down) return;
  setText('feed-banner-text', down.text);
  $('feed-banner-upstreams').replaceChildren(...down.upstreams.map((u) => el('li', { text: u })));
}

// ---------------------------------------------------------------- units
function applyUnits(): void {
  svcUi.units = units;
  setText('alt-h', `alt ${altUnit(units)}`);
  filterInputs.altMin.placeholder = `min ${altUnit(units)}`;
  filterInputs.altMax.placeholder = `max ${altUnit(units)}`;
  filterInputs.altMin.step = units === 'aviation' ? '1000' : '300';
  filterInputs.altMax.step = filterInputs.altMin.step;
  scale = null;
  applyFilters();
  invalidate(true);
}

// ---------------------------------------------------------------- watches and alerts
function renderWatchZones(): void {
  $('watch-zones').replaceChildren(
    ...zones.map((z) => {
      const box = el('input', { type: 'checkbox', 'data-zone': z.name }) as HTMLInputElement;
      box.checked = watcher.zones.has(z.name);
      box.addEventListener('change', () => {
        if (box.checked) watcher.zones.add(z.name);
        else watcher.zones.delete(z.name);
        renderWatch();
      });
      return el('li', {}, el('label', {}, box, ` watch zone ${z.name}`));
    }),
  );
}

function renderWatch(): void {
  svcUi.watch = { zones: [...watcher.zones], tracks: [...watcher.tracks] };
  setText('watch-tracks', watcher.tracks.size ? `Watching ${[...watcher.tracks].map((k) => k.replace(/^[a-z]+:/, '')).join(', ')}` : 'No track watched: select one and press "Watch this track".');
}

/** Shows and sounds the alerts an observation raised. */
function raise(entries: Entry[]): void {
  if (!entries.length) return;
  const list = $('alerts');
  const log = $('alert-log');
  for (const a of entries) {
    fired.push(a);
    const text = `${utcClock(a.atMs)} ${a.label} entered ${a.zone}${a.because === 'track' ? ' (watched track)' : ''}`;
    list.prepend(el('li', { 'data-key': a.key, 'data-zone': a.zone, role: 'alert', text }));
    log.prepend(el('li', { 'data-key': a.key, text }));
  }
  while (list.children.length > ALERTS_SHOWN) list.lastElementChild!.remove();
  while (log.children.length > FEED_ROWS) log.lastElementChild!.remove();
  if (fired.length > 500) fired.splice(0, fired.length - 500);
  sound.beep();
  svcUi.alerts.beeps = sound.beeps;
  svcUi.alerts.sound = sound.state;
}

/** The server's alerts (each one a signed verdict in the ledger), newest first in the log. */
async function pollServerAlerts(): Promise<void> {
  const r = await getJson<{ alerts: Record<string, unknown>[]; next_after: number }>(`${API}/alerts?after=${serverAlertsAfter}`);
  if (!r.data) return;
  serverAlertsAfter = r.data.next_after ?? serverAlertsAfter;
  const log = $('alert-log');
  for (const a of r.data.alerts ?? []) {
    serverAlerts.push(a);
    const index = a.ledger_index as number | null;
    log.prepend(
      el(
        'li',
        { 'data-server-seq': String(a.seq), text: `${fmtTime(a.entered_at as string)} server: ${String(a.kind)} ${String(a.target_id)} entered ${String(a.zone)} · ${String(a.decision)} · ` },
        index === null ? 'unsigned' : el('a', { href: `${API}/receipt/export?index=${index}`, text: `receipt #${index}` }),
      ),
    );
  }
  if (serverAlerts.length > 200) serverAlerts.splice(0, serverAlerts.length - 200);
  while (log.children.length > FEED_ROWS) log.lastElementChild!.remove();
}

// ---------------------------------------------------------------- replay from the ledger
let verifier: VerdictVerifier | null = null;

async function loadReplay(): Promise<void> {
  const minutes = Number(($('replay-min') as HTMLSelectElement).value);
  setText('replay-status', `Reading the last ${minutes} min of verdicts from the ledger…`);
  const key = await getJson<{ keys: { keyid: string; jwk: PublicJwk }[] }>(`${API}/edge/pubkey`);
  const w = await getJson<ReplayWindow>(`${API}/ledger/verdicts?minutes=${minutes}&limit=5000`, 30_000);
  if (!key.data || !w.data) {
    setText('replay-status', `Replay not available: ${key.error ?? w.error}`);
    return;
  }
  verifier = new VerdictVerifier(new Map(key.data.keys.map((k) => [k.keyid, k.jwk])));
  replay = await buildReplay(w.data, verifier);
  replayAtMs = replay.toMs;
  svcUi.replay = { active: true, atMs: replayAtMs, items: replay.items.length, verified: replay.verified, failed: replay.failed, shown: 0 };
  for (const id of ['replay-live', 'replay-play', 'replay-t']) ($(id) as HTMLInputElement).disabled = false;
  ($('replay-t') as HTMLInputElement).value = '1000';
  const total = replay.verified + replay.failed;
  setText(
    'replay-status',
    `${fmtNum(total)} verdicts of the last ${minutes} min${replay.truncated ? ' (the newest 5,000)' : ''}: ${fmtNum(replay.verified)} verified in this browser (signature and frame)${replay.failed ? `, ${fmtNum(replay.failed)} FAILED` : ''}${replay.unplaced ? `, ${fmtNum(replay.unplaced)} without a position` : ''}.`,
  );
  renderReplay();
}

function renderReplay(): void {
  if (!replay) return;
  const first = replay.items[0]?.index;
  const last = replay.items[replay.items.length - 1]?.index;
  const text = `REPLAY · ${utcClock(replayAtMs)} · signed verdicts from the ledger${first === undefined ? '' : ` #${first}–#${last}`} · ${fmtNum(replay.verified)}/${fmtNum(replay.verified + replay.failed)} verified here`;
  const banner = $('replay-banner');
  banner.hidden = false;
  banner.textContent = text;
  setText('replay-t-out', utcClock(replayAtMs));
  if (svcUi.replay) svcUi.replay.atMs = replayAtMs;
  rebuild(['drone']);
}

function playReplay(): void {
  if (!replay) return;
  if (replayAtMs >= replay.toMs) replayAtMs = replay.fromMs;
  $('replay-play').setAttribute('aria-pressed', 'true');
  setText('replay-play', 'Pause');
  // a minute of ledger time per 4 s on screen: a 15-minute window plays in a minute
  const stepMs = 250;
  replayTimer = window.setInterval(() => {
    if (!replay) return stopReplayPlay();
    replayAtMs = Math.min(replay.toMs, replayAtMs + stepMs * 15);
    ($('replay-t') as HTMLInputElement).value = String(Math.round(((replayAtMs - replay.fromMs) / Math.max(1, replay.toMs - replay.fromMs)) * 1000));
    renderReplay();
    if (replayAtMs >= replay.toMs) stopReplayPlay();
  }, stepMs);
}

function stopReplayPlay(): void {
  if (replayTimer !== null) window.clearInterval(replayTimer);
  replayTimer = null;
  $('replay-play').setAttribute('aria-pressed', 'false');
  setText('replay-play', 'Play');
}

function endReplay(): void {
  stopReplayPlay();
  replay = null;
  svcUi.replay = null;
  $('replay-banner').hidden = true;
  for (const id of ['replay-live', 'replay-play', 'replay-t']) ($(id) as HTMLInputElement).disabled = true;
  setText('replay-t-out', '–');
  rebuild(['drone']);
}

// ---------------------------------------------------------------- legend
let legendGlyphs = '';
/** The aircraft glyphs legend lists only the glyphs of aircraft on the map, and hides when there are none. */
function renderLegendGlyphs(): void {
  const present = GLYPHS.filter((g) => byKind.aircraft.some((t) => t.glyph === g));
  const key = present.join(',');
  if (key === legendGlyphs) return;
  legendGlyphs = key;
  $('legend-glyphs-group').hidden = present.length === 0;
  $('legend-glyphs').replaceChildren(
    ...present.map((g) => {
      const c = el('canvas', { width: 22, height: 22, 'aria-hidden': 'true', class: 'glyph' });
      const ctx = c.getContext('2d')!;
      ctx.setTransform(9, 0, 0, 9, 11, 11);
      ctx.fillStyle = '#d8e2ec';
      ctx.fill(pathOf(g));
      return el('li', { 'data-glyph': g }, c, g);
    }),
  );
}

function legend(): void {
  const swatch = (color: string, cls = 'sw') => el('span', { class: cls, 'data-color': color });
  $('legend-alt').replaceChildren(
    ...ALTITUDE_STOPS.map((s) => el('li', {}, swatch(s.color), s.label)),
    el('li', {}, swatch(GROUND_COLOR), 'ground'),
    el('li', {}, swatch(UNKNOWN_ALT_COLOR), 'altitude unknown'),
    el('li', {}, swatch(STALE), 'stale (> 30 s or feed not live)'),
  );
  $('legend-decisions').replaceChildren(...DECISIONS.map((d) => el('li', {}, el('span', { class: `tag ${d.toLowerCase()}`, text: `${SHAPE_CHAR[d]} ${d}` }), ` ${DECISION_STYLE[d].shape}`)));
  $('legend-other').replaceChildren(
    el('li', {}, swatch(VESSEL_COLOR), 'vessel (dataset)'),
    el('li', {}, swatch(ZONE_COLOR), 'no-fly zone'),
    el('li', {}, '◇ site, dashed rings: range'),
    el('li', {}, '◌ dashed ring: simulated track'),
    el('li', {}, 'a number beside a symbol: targets at one spot'),
  );
  // CoT frames: one per affiliation (land), plus the air frame, open at the bottom
  const frames: [string, string][] = [['a-f-G', 'friend'], ['a-h-G', 'hostile'], ['a-n-G', 'neutral'], ['a-u-G', 'unknown'], ['a-h-A', 'air (open below)']];
  $('legend-cot').replaceChildren(
    ...frames.map(([type, label]) => {
      const c = el('canvas', { width: 22, height: 22, 'aria-hidden': 'true', class: 'glyph' });
      const f = cotFrame(type);
      drawFrame(c.getContext('2d')!, f, 11, 11, 6, f.fill);
      return el('li', { 'data-cot-type': type }, c, label);
    }),
  );
  // colours set through the CSSOM: no inline style attribute in the markup
  for (const s of Array.from(document.querySelectorAll<HTMLElement>('[data-color]'))) s.style.background = s.dataset.color!;
  for (const g of GLYPHS) filterInputs.glyph.append(el('option', { value: g, text: g }));
}

// ---------------------------------------------------------------- start
legend();
applyUnits();
renderCursor();
renderClock();
window.setInterval(renderClock, 1000);
new ResizeObserver(resize).observe(region);
resize();
void loadLand();
whileVisible(loadAdsb, ADSB_POLL_MS);
whileVisible(loadScene, 5_000);
whileVisible(loadCot, 30_000);
whileVisible(loadLedger, 15_000);
whileVisible(pollServerAlerts, ALERT_POLL_MS);
void loadVessels();
// ages move on even without new data: greys out stale targets and the page's own feed chip
window.setInterval(() => {
  if (document.hidden) return;
  chips();
  rebuild();
  summarise();
}, 5_000);
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) invalidate(true);
});
stream.start();
summarise();
