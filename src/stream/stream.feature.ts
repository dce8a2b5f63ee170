/**
 * The live parts built on the ledger: one shared simulated flight that runs only while somebody
 * watches, the SSE hub that fans its verdicts out, and the edge scene of recent verdicts.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Feature } from '../feature.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import { keyUrlFor } from '../ledger/documents.js';
import type { Services } from '../services.js';
import { verdictBody } from '../verdicts/verdicts.routes.js';
import { registerTrackSource } from '../cot/tracks.js';
import { flightFrames } from './flight.js';
import { SseHub } from './hub.js';
import { EdgeScene } from './scene.js';
import { streamRoutes } from './stream.routes.js';

export class FlightRunner {
  private timer: NodeJS.Timeout | null = null;
  private tick = 0;

  /** The flight's current tick (its drones' positions are a pure function of it). */
  get currentTick(): number {
    return this.tick;
  }
  private busy = false;
  ticks = 0;
  lastError: string | null = null;
  /** True while the flight holds off because the ledger is near its cap (real verdicts keep room). */
  paused = false;
  /** Told when the flight pauses for the ledger cap and when it resumes. */
  onPause: (paused: boolean, detail: { ledger_size: number; max_nodes: number; pause_at: number }) => void = () => {};

  constructor(
    private readonly core: LedgerCore,
    private readonly tickMs: number,
    private readonly s: Services,
  ) {}

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.step(), this.tickMs);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private step(): void {
    if (this.busy) return; // signing still in flight: never overlap ticks
    const frames = flightFrames(this.tick, this.tickMs / 1000, Date.now());
    // the simulated flight never takes the ledger's last room: it pauses at a share of the cap
    const { size, maxNodes } = this.core.ledger;
    const pauseAt = Math.floor(maxNodes * this.s.config.guard.flightPauseRatio);
    const pause = size + frames.length > pauseAt;
    if (pause !== this.paused) {
      this.paused = pause;
      if (pause) this.s.log.warn({ ledgerSize: size, maxNodes, pauseAt }, 'simulated flight paused: ledger near its cap');
      this.onPause(pause, { ledger_size: size, max_nodes: maxNodes, pause_at: pauseAt });
    }
    if (pause) return;
    this.tick++;
    this.busy = true;
    this.core.verdicts.decideAll(frames, { simulated: true }).then(
      () => {
        this.ticks++;
        this.lastError = null;
      },
      (err: unknown) => {
        const msg = (err as Error).message;
        if (msg !== this.lastError) this.s.log.warn({ err }, 'simulated flight could not append');
        this.lastError = msg;
      },
    ).finally(() => {
      this.busy = false;
    });
  }
}

export interface StreamCore {
  hub: SseHub;
  scene: EdgeScene;
  flight: FlightRunner;
}

export function streamFeature(s: Services, core: LedgerCore): Feature & { stream: StreamCore } {
  const cfg = s.config.stream;
  const hub = new SseHub({ maxViewers: cfg.maxViewers, ringSize: cfg.ringSize, heartbeatMs: cfg.heartbeatMs, sendBufferBytes: cfg.sendBufferBytes, retryMs: 2000 });
  const scene = new EdgeScene(cfg.sceneSize, s.config.ledger.noFlyZones);
  const flight = new FlightRunner(core, cfg.tickMs, s);
  hub.onActive = (active) => (active ? flight.start() : flight.stop());
  flight.onPause = (paused, detail) =>
    hub.notice(paused ? 'paused' : 'resumed', {
      reason: paused ? 'the simulated flight is paused: the ledger is near its cap, the rest is kept for real verdicts' : 'the simulated flight resumed',
      ...detail,
    });
  // the drones are CoT sample tracks too (simulated: exported with how="m-s", opex="s")
  registerTrackSource(s, 'flight', () =>
    flightFrames(flight.currentTick, cfg.tickMs / 1000, Date.now()).map((f) => ({
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
    })),
  );
  const fanout = new Histogram({
    name: 'svc_sse_fanout_seconds',
    help: 'Main-thread time to write one event to every SSE viewer',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [s.metrics.registry],
  });
  new Gauge({ name: 'svc_sse_viewers', help: 'Connected SSE viewers', registers: [s.metrics.registry], collect() { this.set(hub.stats().viewers); } });
  // the hub keeps the totals; these counters catch up with them at scrape time
  const hubCounter = (name: string, help: string, total: () => number) => {
    let seen = 0;
    new Counter({ name, help, registers: [s.metrics.registry], collect() { const now = total(); this.inc(now - seen); seen = now; } });
  };
  hubCounter('svc_sse_events_published_total', 'Verdict events published to the SSE stream', () => hub.stats().events);
  hubCounter('svc_sse_viewers_dropped_total', 'SSE viewers dropped for a full send buffer', () => hub.stats().dropped);
  hub.onFanout = (seconds) => fanout.observe(seconds);
  const keyUrl = s.config.server.publicBaseUrl ? keyUrlFor(s.config.server.publicBaseUrl) : null;
  core.verdicts.onVerdict((v) => {
    scene.add(v);
    // serialised once per event, whatever the number of viewers
    hub.publish(v.node.index, 'verdict', () => verdictBody(v, core.ledger, keyUrl));
  });
  return {
    routes: streamRoutes({ hub, scene, verdicts: core.verdicts, ledger: core.ledger, maxFrames: cfg.maxFramesPerRequest, retryAfterS: s.config.pool.retryAfterS }),
    drain() {
      // the flight first, so nothing is appended while the streams end with `event: shutdown`
      flight.stop();
      hub.close();
    },
    close() {
      flight.stop();
      hub.close();
    },
    stream: { hub, scene, flight },
  };
}
