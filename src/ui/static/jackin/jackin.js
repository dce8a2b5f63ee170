/**
 * The entry page's status panel: health, ledger size and the latest verdicts. It only reads by
 * default; following the live stream is a button because watching starts the simulated flight,
 * which appends signed verdicts to the ledger.
 */
import { getJson, whileVisible } from '/shared/api.js';
import { el, fill, fmt, setText, timeOf } from '/shared/dom.js';
import { followVerdicts } from '/shared/verdict-stream.js';

const API = '/api/svc/v1';
const KEEP = 10; // verdicts listed
let latest = [];
let stopStream = null;

function verdictItem(v) {
  return el(
    'li',
    {},
    el('span', { class: `tag ${String(v.decision).toLowerCase()}`, text: v.decision }),
    ` ${v.track_id} λ=${fmt(v.lambda)} · ${timeOf(v.ts_utc)}${v.index == null ? '' : ` · node ${v.index}`}${v.simulated ? ' · simulated' : ''}`,
  );
}

function showVerdicts() {
  fill('verdicts', latest.map(verdictItem), 'no verdicts yet');
}

async function refresh() {
  const [health, ledger, scene] = await Promise.all([getJson(`${API}/health`), getJson(`${API}/ledger/readiness`), getJson(`${API}/edge/3d`)]);
  setText('health', health.data?.status ? `${health.data.status} · ${health.data.releaseId ?? ''} · up ${Math.round(health.data.uptime_s ?? 0)} s` : `no data (${health.error})`);
  const l = ledger.data;
  setText('ledger', l?.integrity ? `${l.integrity.nodes} nodes · ${l.durability_state} · integrity ${l.integrity.state}${l.ready ? '' : ' · not ready'}` : `no data (${ledger.error})`);
  if (!stopStream && Array.isArray(scene.data?.tracks)) {
    latest = scene.data.tracks
      .map((t) => ({ track_id: t.track_id, decision: t.decision, lambda: t.lambda, ts_utc: t.ts_utc, index: t.ledger_index, simulated: t.simulated }))
      .sort((a, b) => (b.index ?? 0) - (a.index ?? 0))
      .slice(0, KEEP);
    showVerdicts();
  } else if (!stopStream && !scene.ok) fill('verdicts', [], `no data (${scene.error})`);
  setText('updated', new Date().toISOString().slice(11, 19) + 'Z');
}

function onVerdict(v) {
  latest = [{ track_id: v.track_id, decision: v.decision, lambda: v.lambda, ts_utc: v.ts_utc, index: v.ledger?.index, simulated: v.simulated }, ...latest].slice(0, KEEP);
  showVerdicts();
}

const button = document.getElementById('follow');
button.onclick = () => {
  if (stopStream) {
    stopStream();
    stopStream = null;
    button.textContent = 'Follow live stream';
    setText('verdicts-source', 'latest verdict of each track in the edge scene');
    return;
  }
  stopStream = followVerdicts({ onVerdict, onState: (s) => setText('stream-status', `stream: ${s}`) });
  button.textContent = 'Stop following';
  setText('verdicts-source', 'live from /api/svc/v1/stream/verdicts');
};

whileVisible(refresh, 5_000);
