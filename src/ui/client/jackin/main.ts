/**
 * The entry page: health, pool, ledger, ADS-B feed and stream at a glance, the latest verdicts and
 * links. It only reads by default; following the live stream is a button because watching starts
 * the simulated flight, which appends signed verdicts to the ledger.
 */
import { getJson, getText, whileVisible } from '../common/api.js';
import { $, chipInto, el, setText } from '../common/dom.js';
import { fmtNum, fmtTime } from '../common/format.js';
import { adsbChip, ledgerText } from '../common/honesty.js';
import { healthReasons, ledgerWhere, type HealthCheckDoc } from './status-text.js';
import type { AdsbAnswer } from '../../../isomorphic/wire/adsb.js';
import type { Decision } from '../common/palette.js';
import { drawSeries } from '../common/series-svg.js';
import { VerdictStream } from '../common/sse.js';
import type { EnergySeries } from '../../../isomorphic/wire/energy.js';
import { API } from '../../../isomorphic/api.js';

const KEEP = 10;
const SHAPE: Record<Decision, string> = { ALLOW: '●', REVIEW: '▲', DENY: '⊠' };

interface Row {
  track_id: string;
  decision: Decision;
  lambda: number;
  ts_utc: string;
  index: number | null;
  simulated: boolean;
}
let latest: Row[] = [];
let following = false;
let adsbOkAt: number | null = null;

function showVerdicts(): void {
  const items = latest.map((v) =>
    el(
      'li',
      { 'data-index': v.index ?? undefined },
      el('span', { class: `tag ${v.decision.toLowerCase()}`, text: `${SHAPE[v.decision] ?? '?'} ${v.decision}` }),
      ` ${v.track_id} λ ${fmtNum(v.lambda, 3)} · ${fmtTime(v.ts_utc)}${v.index === null ? '' : ` · #${v.index} `}`,
      v.index === null ? null : el('a', { href: `${API}/receipt/export?index=${v.index}`, text: 'receipt' }),
      v.simulated ? el('span', { class: 'muted', text: ' · simulated' }) : null,
    ),
  );
  $('verdicts').replaceChildren(...(items.length ? items : [el('li', { class: 'muted', text: 'no verdicts yet: the simulated flight runs while the stream is watched' })]));
}

/** Reads one series of the Prometheus text format (no labels), or null. */
function metric(text: string, name: string): number | null {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : null;
}

async function refresh(): Promise<void> {
  const [health, ledger, scene, adsb, metrics, energy] = await Promise.all([
    getJson<{ status: string; releaseId: string; uptime_s: number; checks?: Record<string, HealthCheckDoc>; pool: { threads: number; busy: number; queueSize: number; maxQueue: number; completed: number; crashes: number } }>(`${API}/health`),
    getJson<{ durability_state: string; persistence_scope: string; ready: boolean; reason?: string; integrity?: { nodes: number; state: string; root: string } }>(`${API}/ledger/readiness`),
    getJson<{ tracks: { track_id: string; decision: Decision; lambda: number; ts_utc: string; ledger_index: number; simulated: boolean }[] }>(`${API}/edge/3d`),
    getJson<AdsbAnswer>(`${API}/adsb?lat_min=-90&lat_max=90&lon_min=-180&lon_max=180`),
    getText('/metrics'),
    getJson<{ series: EnergySeries }>(`${API}/energy/sovereign`),
  ]);
  const h = health.data;
  setText('health', h?.status ?? `no data (${health.error})`);
  setText('health-detail', h ? `${h.releaseId} · up ${fmtNum(h.uptime_s)} s` : '');
  // a warn or fail is only useful with its reason: each check that does not pass, as the service words it
  const why = h ? healthReasons(h.checks) : [];
  $('health-why').replaceChildren(...why.map((w) => el('li', { text: w })));
  $('card-health').dataset.status = h?.status ?? 'unknown';
  setText('pool', h?.pool ? `${h.pool.threads} threads · ${fmtNum(h.pool.busy * 100)} % busy` : 'no data');
  setText('pool-detail', h?.pool ? `queue ${h.pool.queueSize}/${h.pool.maxQueue} · ${h.pool.completed} tasks done · ${h.pool.crashes} crashes` : '');
  const l = ledger.data;
  setText('ledger', l?.integrity ? `${l.integrity.nodes} nodes · integrity ${l.integrity.state}` : `no data (${ledger.error})`);
  setText('ledger-detail', l ? `${ledgerText(l.durability_state, l.persistence_scope)}${l.ready ? '' : ` · not ready${l.reason ? `: ${l.reason}` : ''}`}` : '');
  setText('stream-ledger', `Verdicts go to ${ledgerWhere(l?.durability_state ?? null, l?.persistence_scope ?? null)}.`);
  if (adsb.data) adsbOkAt = Date.now();
  chipInto('adsb', adsbChip(adsb.data, adsb.error, adsbOkAt, Date.now(), 5_000));
  setText('adsb-detail', adsb.data ? `${adsb.data.count} aircraft worldwide · ${adsb.data.attribution ?? ''}` : '');
  const m = metrics.data ?? '';
  const viewers = metric(m, 'svc_sse_viewers');
  const events = metric(m, 'svc_sse_events_published_total');
  setText('stream', viewers === null ? 'no data' : `${viewers} viewer${viewers === 1 ? '' : 's'}`);
  setText('stream-detail', events === null ? '' : `${fmtNum(events)} verdict events published since start`);
  if (!following && Array.isArray(scene.data?.tracks)) {
    latest = scene.data.tracks
      .map((t) => ({ track_id: t.track_id, decision: t.decision, lambda: t.lambda, ts_utc: t.ts_utc, index: t.ledger_index, simulated: t.simulated }))
      .sort((a, b) => (b.index ?? 0) - (a.index ?? 0))
      .slice(0, KEEP);
    showVerdicts();
  }
  showEnergy(energy.data?.series ?? null, energy.error);
  setText('updated', `updated ${new Date().toISOString().slice(11, 19)}Z`);
  document.body.dataset.ready = 'true';
}

/** The card's chart width bounds, in drawing units. */
const CHART_WIDTH = { min: 240, max: 460 };
let shownSeries: EnergySeries | null = null;

/** The card's width, bounded: below the maximum one drawing unit is one CSS pixel, so a phone shows the labels at full size. */
function chartWidth(box: Element): number {
  const w = Math.round(box.clientWidth);
  return w > 0 ? Math.min(CHART_WIDTH.max, Math.max(CHART_WIDTH.min, w)) : CHART_WIDTH.max;
}

function drawEnergyChart(series: EnergySeries): void {
  const box = $('energy-chart');
  drawSeries(box, series, chartWidth(box), 130, 'energy-chart-title');
}

/** The measured series of /energy/sovereign as a small line chart: points are real samples only. */
function showEnergy(series: EnergySeries | null, error: string | null): void {
  if (!series) {
    setText('energy-detail', `no data (${error})`);
    return;
  }
  shownSeries = series;
  drawEnergyChart(series);
  const last = series.points.at(-1);
  const every = `one sample every ${(series.interval_ms.value ?? 0) / 1000} s`;
  setText('energy-detail', last ? `${every}; latest interval: CPU ${fmtNum(last.cpu_utilization * 100, 1)} %, event loop ${fmtNum(last.event_loop_utilization * 100, 1)} %, ${last.requests} request${last.requests === 1 ? '' : 's'}, model ${fmtNum(last.avg_power_w, 2)} W` : `${every}; the first point appears after one interval`);
}

// a turned phone gets a chart drawn for its new width at once, not at the next refresh
addEventListener('resize', () => {
  if (shownSeries) drawEnergyChart(shownSeries);
});

const stream = new VerdictStream({
  url: `${API}/stream/verdicts`,
  onEvents(batch) {
    for (const e of batch as Record<string, unknown>[]) {
      const ledger = e.ledger as { index: number } | undefined;
      latest.unshift({ track_id: String(e.track_id), decision: e.decision as Decision, lambda: e.lambda as number, ts_utc: String(e.ts_utc), index: ledger?.index ?? null, simulated: Boolean(e.simulated) });
    }
    latest = latest.slice(0, KEEP);
    showVerdicts();
  },
  onStatus(s) {
    if (following) setText('stream-status', `stream: ${s.state}${s.lastId === null ? '' : ` · last id ${s.lastId}`}`);
  },
});

const button = $('follow');
button.addEventListener('click', () => {
  following = !following;
  if (following) {
    stream.start();
    button.textContent = 'Stop following';
    setText('verdicts-source', `live from ${API}/stream/verdicts`);
  } else {
    stream.stop();
    button.textContent = 'Follow live stream';
    setText('verdicts-source', 'latest verdict of each track in the edge scene');
    setText('stream-status', 'stopped');
  }
});

whileVisible(refresh, 5_000);
