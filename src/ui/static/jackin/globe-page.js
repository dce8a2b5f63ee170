/**
 * The maritime globe page: vessels from the fleet dataset, drone tracks and no-fly zones from the
 * 3-D edge scene, military aircraft from the ADS-B feed, and the verdict stream for live updates.
 * Each layer reports its own state; a missing or failing route shows "no data", never made-up data.
 */
import { getJson, whileVisible } from '/shared/api.js';
import { el, fill, fmt, setText, timeOf } from '/shared/dom.js';
import { createGlobe } from '/shared/globe.js';
import { followVerdicts } from '/shared/verdict-stream.js';

const API = '/api/svc/v1';
const COLORS = { ALLOW: '#3ecf8e', REVIEW: '#f5b041', DENY: '#ef5350', vessel: '#4fc3f7', aircraft: '#e0e0e0' };
const TRAIL = 40; // positions kept per drone track

const state = { vessels: [], tracks: [], zones: [], aircraft: [], origin: null, bbox: null, trails: new Map() };
const globe = createGlobe(document.getElementById('globe'));

function render() {
  const points = [
    ...state.vessels.map((v) => ({ lat: v.lat, lon: v.lon, color: COLORS.vessel, r: 4, label: v.label })),
    ...state.aircraft.map((a) => ({ lat: a.lat, lon: a.lon, color: COLORS.aircraft, shape: 'diamond', label: a.label })),
    ...state.tracks.map((t) => ({ lat: t.lat, lon: t.lon, color: COLORS[t.decision] ?? '#fff', r: 5, tag: t.id, tagMinZoom: 200, label: t.label })),
  ];
  const lines = [...state.trails.entries()].map(([id, coords]) => ({ coords, color: COLORS[state.tracks.find((t) => t.id === id)?.decision] ?? '#888' }));
  const polygons = state.zones.map((z) => ({ ring: z.polygon, fill: 'rgba(239, 83, 80, 0.25)', stroke: '#ef5350' }));
  globe.setLayers({ polygons, lines, points });
}

async function loadVessels() {
  const r = await getJson(`${API}/fleet/vessels`);
  const items = Array.isArray(r.data?.items) ? r.data.items : [];
  state.vessels = items
    .filter((v) => Number.isFinite(v.position?.lat) && Number.isFinite(v.position?.lon))
    .map((v) => ({ lat: v.position.lat, lon: v.position.lon, label: `${v.name ?? v.imo} (IMO ${v.imo}) · ${v.ship_type ?? ''} · position: ${v.position.method ?? v.position.kind ?? 'from dataset'}` }));
  if (!r.ok) setText('vessels-status', `no data (${r.error})`);
  else if (!state.vessels.length) setText('vessels-status', 'no data');
  else setText('vessels-status', `${state.vessels.length} vessels · positions from the fleet dataset (synthetic, not AIS)`);
  render();
}

async function loadScene() {
  const r = await getJson(`${API}/edge/3d`);
  const doc = r.ok ? r.data : null;
  state.origin = doc?.frame?.origin ?? state.origin;
  state.zones = Array.isArray(doc?.zones) ? doc.zones.filter((z) => Array.isArray(z.polygon)) : [];
  const tracks = Array.isArray(doc?.tracks) ? doc.tracks : [];
  state.tracks = tracks.filter((t) => Number.isFinite(t.position?.lat) && Number.isFinite(t.position?.lon)).map((t) => ({
    id: t.track_id,
    lat: t.position.lat,
    lon: t.position.lon,
    decision: t.decision,
    lambda: t.lambda,
    simulated: t.simulated,
    ts: t.ts_utc,
    label: `${t.track_id} · ${t.decision} λ=${fmt(t.lambda)} · ${t.source ?? 'unknown source'}${t.simulated ? ' · simulated' : ''}`,
  }));
  // trails of tracks that left the scene's ring buffer go with them
  for (const id of state.trails.keys()) if (!state.tracks.some((t) => t.id === id)) state.trails.delete(id);
  for (const t of state.tracks) {
    const trail = state.trails.get(t.id) ?? [];
    const last = trail.at(-1);
    if (!last || last[0] !== t.lat || last[1] !== t.lon) trail.push([t.lat, t.lon]);
    state.trails.set(t.id, trail.slice(-TRAIL));
  }
  if (!doc) setText('scene-status', `no data (${r.error})`);
  else {
    const simulated = state.tracks.filter((t) => t.simulated).length;
    setText('scene-status', `${state.tracks.length} tracks (${simulated} simulated) · ${state.zones.length} no-fly zones · ledger ${doc.ledger_size} nodes`);
  }
  fill(
    'tracks',
    state.tracks.map((t) => el('li', {}, el('span', { class: `tag ${String(t.decision).toLowerCase()}`, text: t.decision }), ` ${t.id} λ=${fmt(t.lambda)} ${timeOf(t.ts)}${t.simulated ? ' (simulated)' : ''}`)),
    'no tracks yet: the simulated flight runs while the stream is watched',
  );
  render();
}

async function loadAdsb() {
  const r = await getJson(`${API}/adsb`);
  const doc = r.ok ? r.data : null;
  state.bbox = doc?.bbox ?? state.bbox;
  state.aircraft = (Array.isArray(doc?.aircraft) ? doc.aircraft : [])
    .filter((a) => Number.isFinite(a.lat) && Number.isFinite(a.lon))
    .map((a) => ({ lat: a.lat, lon: a.lon, label: `${a.callsign ?? a.hex} · ${a.type_code ?? 'type ?'} · ${a.alt_baro_ft ?? '?'} ft` }));
  if (!doc) setText('adsb-status', `no data (${r.error})`);
  else {
    const age = doc.age_s == null ? '' : ` · snapshot age ${Math.round(doc.age_s)} s`;
    setText('adsb-status', `live=${doc.live} · ${state.aircraft.length} aircraft · source ${doc.source ?? 'none'}${age}${doc.reason ? ` · ${doc.reason}` : ''}`);
  }
  render();
}

// a verdict changes a track's decision at once; positions follow from a (debounced) scene reload
let sceneTimer = null;
function onVerdict(v) {
  const t = state.tracks.find((x) => x.id === v.track_id);
  if (t) Object.assign(t, { decision: v.decision, lambda: v.lambda });
  render();
  sceneTimer ??= setTimeout(() => {
    sceneTimer = null;
    loadScene();
  }, 1500);
}

document.getElementById('view-world').onclick = () => globe.focus(30, -40, 1);
document.getElementById('view-site').onclick = () => globe.focus(state.origin?.lat ?? 36.2, state.origin?.lon ?? -115.2, 900);
document.getElementById('view-adsb').onclick = () => {
  const b = state.bbox ?? { lat_min: 24, lat_max: 50, lon_min: -125, lon_max: -60 };
  globe.focus((b.lat_min + b.lat_max) / 2, (b.lon_min + b.lon_max) / 2, 3);
};
document.getElementById('zoom-in').onclick = () => globe.zoomBy(2);
document.getElementById('zoom-out').onclick = () => globe.zoomBy(0.5);

whileVisible(loadVessels, 300_000);
whileVisible(loadScene, 5_000);
whileVisible(loadAdsb, 30_000);
followVerdicts({ onVerdict, onState: (s) => setText('stream-status', `stream: ${s}`) });
