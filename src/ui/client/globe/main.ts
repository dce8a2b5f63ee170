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
import { fmtAge, fmtLatLon, fmtNum } from '../common/format.js';
import { adsbChip, cotChip, ledgerText, vesselChip, verdictChip } from '../common/honesty.js';
import { ALTITUDE_STOPS, DECISION_STYLE, DECISIONS, GLYPHS, GROUND_COLOR, STALE, UNKNOWN_ALT_COLOR, VESSEL_COLOR, ZONE_COLOR, type Decision } from '../common/palette.js';
import { VerdictStream, type StreamStatus } from '../common/sse.js';
import { drawBase, drawFrame, drawOverlay, hitTest, pathOf, type Drawn, type Kind, type Lod, type Target } from './draw.js';
import { aircraftAgeS, aircraftTarget, cotTarget, FADE_S, HIDE_S, droneTarget, parseCot, pushTrail, vesselTarget, type CotEvent, type SceneTrack, type Vessel } from './layers.js';
import { View } from './view.js';
import { landParts, visibleLand, type LandPart } from './land.js';
import type { MultiPolygon, Polygon } from 'geojson';
import { cotFrame } from './cot-frame.js';
import type { AdsbAnswer } from '../../../isomorphic/wire/adsb.js';
import { API } from '../../../isomorphic/api.js';

const ADSB_POLL_MS = 10_000;
const HOME = { lon: -100, lat: 38, zoom: 1 };
const TABLE_ROWS = 200;
const QUEUE_CAP = 2000;
const FEED_ROWS = 50;

// ---------------------------------------------------------------- state
const view = new View({ ...HOME });
const layerOn: Record<Kind | 'zones', boolean> = { aircraft: true, vessel: true, drone: true, cot: true, zones: true };
const opts = { labels: true, trails: true };
/** Land at 1:110m while the view moves and 1:50m at rest (once loaded): 50m is too slow to drag. */
let land: LandPart[] | null = null;
let landFine: LandPart[] | null = null;
/** The view counts as moving until this long after its last change, and while a pointer is down. */
const SETTLE_MS = 250;
let movedAt = -Infinity;
let adsb: AdsbAnswer | null = null;
let adsbError: string | null = null;
let adsbOkAt: number | null = null;
const aircraftTrails = new Map<string, [number, number][]>();
let aircraftRaw: AdsbAnswer['aircraft'] = [];
let aircraftTargets: (Target | null)[] = [];
let vessels: Vessel[] = [];
let vesselsAsOf: string | null = null;
let vesselsSynthetic: boolean | null = null;
let vesselsError: string | null = null;
let tracks: SceneTrack[] = [];
const droneTrails = new Map<string, [number, number][]>();
let zones: { polygon: [number, number][]; name: string }[] = [];
let cot: CotEvent[] = [];
let cotError: string | null = null;
const cotTrails = new Map<string, [number, number][]>();
let all: Target[] = [];
let shown: Target[] = [];
let selected: string | null = null;
const feed: Record<string, unknown>[] = [];
const queue: Record<string, unknown>[] = [];
let dropped = 0;
/** Aircraft on screen in the last frame; kept across `rebuild`, which replaces `svcUi.layers`. */
let aircraftDrawn = 0;
const drawn: Drawn = { keys: [], xs: new Float32Array(0), ys: new Float32Array(0), rot: new Float32Array(0), n: 0, lod: 'glyphs', labels: [] };
const loaded = { land: false, adsb: false, scene: false, vessels: false, cot: false };
const overlayMs: number[] = [];
const baseMs: number[] = [];
/** Base draws by land resolution: what each costs on this client. */
const baseMsBy: Record<'110m' | '50m', number[]> = { '110m': [], '50m': [] };
/** Targets rebuilt from the layers, filters applied and the table patched (data changes, every 5 s). */
const rebuildMs: number[] = [];

const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');

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
  perf: { overlayMs: number[]; baseMs: number[]; rebuildMs: number[]; baseMsBy: Record<'110m' | '50m', number[]> };
  /** Which land the base canvas shows now, which resolutions are loaded, and whether the view is moving. */
  land: { drawn: '110m' | '50m' | null; loaded: ('110m' | '50m')[]; moving: boolean };
  lod: Lod;
  reducedMotion: boolean;
  project(lon: number, lat: number): [number, number] | null;
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
  reducedMotion: reducedMotion.matches,
  project: (lon, lat) => view.project(lon, lat),
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
    // 50m costs several times 110m per draw (~50 ms against ~6 ms): only when the view rests
    const res = landFine && !moving ? '50m' : land ? '110m' : null;
    const parts = res === '50m' ? landFine : land;
    // only the polygons that can reach the canvas go through d3's projection and clipping
    drawBase(baseCtx, view, parts && visibleLand(parts, view.state.lon, view.state.lat, view.radius, view.width, view.height));
    const ms = performance.now() - t0;
    record(baseMs, ms);
    if (res) record(baseMsBy[res], ms);
    svcUi.land = { ...svcUi.land, drawn: res, moving };
    baseDirty = false;
    svcUi.baseFrame++;
  }
  const t0 = performance.now();
  drawOverlay(overlayCtx, view, shown, { labels: opts.labels, trails: opts.trails, selected, zones, showZones: layerOn.zones }, drawn);
  record(overlayMs, performance.now() - t0);
  svcUi.lod = drawn.lod;
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
    for (const e of cot) {
      const t = cotTarget(e, cotTrails.get(e.uid) ?? [], now);
      if (t) list.push(t);
    }
  } else if (kind === 'drone') {
    for (const tr of tracks) list.push(droneTarget(tr, droneTrails.get(tr.track_id) ?? [], now));
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
      if ((min !== null || max !== null) && t.altFt === null) return false;
      if (min !== null && t.altFt! < min) return false;
      if (max !== null && t.altFt! > max) return false;
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
  const signature = rows.map((t) => `${t.key}|${t.altFt}|${stateText(t)}`).join('\n') + `\n${selected}`;
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
      el('td', { text: t.label }),
      el('td', { text: t.altFt === null ? '–' : fmtNum(t.altFt) }),
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
  for (const tr of Array.from(tbody.querySelectorAll('tr'))) tr.setAttribute('aria-selected', String(tr.dataset.key === key));
  renderDetails();
  if (focusTable && key) (tbody.querySelector(`tr[data-key="${CSS.escape(key)}"]`) as HTMLElement | null)?.focus();
  invalidate();
}

function renderDetails(): void {
  const box = $('details');
  const t = selected ? all.find((x) => x.key === selected) : undefined;
  if (!t) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  setText('details-title', `${t.kind} · ${t.label}${t.stale ? ' · STALE' : ''}`);
  const dl = $('details-fields');
  const items: Node[] = [];
  for (const [name, value, source] of t.details()) {
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

async function loadAdsb(): Promise<void> {
  const r = await getJson<AdsbAnswer>(`${API}/adsb?lat_min=-90&lat_max=90&lon_min=-180&lon_max=180`);
  if (r.data && Array.isArray(r.data.aircraft)) {
    adsb = r.data;
    adsbError = null;
    adsbOkAt = Date.now();
    const seen = new Set<string>();
    for (const a of adsb.aircraft) {
      seen.add(a.hex);
      aircraftTrails.set(a.hex, pushTrail(aircraftTrails.get(a.hex) ?? [], a.lon, a.lat));
    }
    for (const hex of aircraftTrails.keys()) if (!seen.has(hex)) aircraftTrails.delete(hex);
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
}

async function loadScene(): Promise<void> {
  const r = await getJson<{ tracks: SceneTrack[]; zones: { polygon: [number, number][]; name: string }[] }>(`${API}/edge/3d`);
  if (r.data) {
    tracks = (r.data.tracks ?? []).filter((t) => Number.isFinite(t.position?.lat) && Number.isFinite(t.position?.lon));
    zones = (r.data.zones ?? []).filter((z) => Array.isArray(z.polygon));
    for (const t of tracks) droneTrails.set(t.track_id, pushTrail(droneTrails.get(t.track_id) ?? [], t.position.lon, t.position.lat));
  } else svcUi.errors.push(`scene: ${r.error}`);
  loaded.scene = true;
  chips();
  rebuild(['drone']);
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
    for (const e of cot) cotTrails.set(e.uid, pushTrail(cotTrails.get(e.uid) ?? [], e.lon, e.lat));
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
    const tr = tracks.find((t) => t.track_id === v.track_id);
    if (tr && ledger) Object.assign(tr, { decision, lambda: v.lambda, ledger_index: ledger.index, ts_utc: v.ts_utc });
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
  rebuild(['drone']);
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
    else if (landFine && svcUi.land.drawn !== '50m') invalidate(true);
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
  if (moved > 3) changeView(() => view.dragBy(dx * dpr, dy * dpr));
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
    changeView(() => view.zoomBy(Math.exp(-e.deltaY * 0.0015)));
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
  else if (k === '+' || k === '=' || lower === 'e') changeView(() => view.zoomBy(1.25));
  else if (k === '-' || k === '_' || lower === 'q') changeView(() => view.zoomBy(0.8));
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
$('zoom-in').addEventListener('click', () => changeView(() => view.zoomBy(1.5)));
$('zoom-out').addEventListener('click', () => changeView(() => view.zoomBy(1 / 1.5)));
$('reset').addEventListener('click', () => changeView(() => view.set({ ...HOME })));
$('details-close').addEventListener('click', () => select(null));
const help = $('help') as HTMLDialogElement;
function openHelp(): void {
  help.showModal();
}
$('help-open').addEventListener('click', openHelp);
$('help-close').addEventListener('click', () => help.close());
help.addEventListener('close', () => region.focus());

// ---------------------------------------------------------------- legend
function legend(): void {
  const swatch = (color: string, cls = 'sw') => el('span', { class: cls, 'data-color': color });
  $('legend-alt').replaceChildren(
    ...ALTITUDE_STOPS.map((s) => el('li', {}, swatch(s.color), s.label)),
    el('li', {}, swatch(GROUND_COLOR), 'ground'),
    el('li', {}, swatch(UNKNOWN_ALT_COLOR), 'altitude unknown'),
    el('li', {}, swatch(STALE), 'stale (> 30 s or feed not live)'),
  );
  $('legend-glyphs').replaceChildren(
    ...GLYPHS.map((g) => {
      const c = el('canvas', { width: 22, height: 22, 'aria-hidden': 'true', class: 'glyph' });
      const ctx = c.getContext('2d')!;
      ctx.setTransform(9, 0, 0, 9, 11, 11);
      ctx.fillStyle = '#d8e2ec';
      ctx.fill(pathOf(g));
      return el('li', {}, c, g);
    }),
  );
  $('legend-decisions').replaceChildren(...DECISIONS.map((d) => el('li', {}, el('span', { class: `tag ${d.toLowerCase()}`, text: `${SHAPE_CHAR[d]} ${d}` }), ` ${DECISION_STYLE[d].shape}`)));
  $('legend-other').replaceChildren(el('li', {}, swatch(VESSEL_COLOR), 'vessel (dataset)'), el('li', {}, swatch(ZONE_COLOR), 'no-fly zone'));
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
new ResizeObserver(resize).observe(region);
resize();
void loadLand();
whileVisible(loadAdsb, ADSB_POLL_MS);
whileVisible(loadScene, 5_000);
whileVisible(loadCot, 30_000);
whileVisible(loadLedger, 15_000);
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
