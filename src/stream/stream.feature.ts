/**
 * The live parts built on the ledger: one shared simulated flight that runs only while somebody
 * watches, the SSE hub that fans its verdicts out, and the edge scene of recent verdicts.
 */
import type { Context } from 'koa';
import { Counter, Gauge, Histogram } from 'prom-client';
import { definePlugin, type Built } from '../platform/plugin.js';
import type { VerdictCore } from '../verdicts/verdicts.feature.js';
import { keyUrlFor } from '../ledger/documents.js';
import type { Services } from '../platform/services.js';
import { nodeVerdictBody } from '../verdicts/verdicts.routes.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import type { LedgerStore } from '../ledger/store/store.js';
import type { TrackSource } from '../cot/tracks.js';
import { flightFrames } from './flight.js';
import { SseHub } from './hub.js';
import { EdgeScene } from './scene.js';
import { streamRoutes } from './stream.routes.js';
import { procSendQueueProbe } from './tcp-queue.js';
import { ClientAddresses } from '../http/client-address.js';
import { WriteTokens } from '../http/write-guard.js';

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
    private readonly core: VerdictCore,
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

/**
 * Exactly one replica runs the simulated flight (postgres mode: a session advisory lock on a
 * dedicated connection). A replica with viewers that is not the leader keeps trying every few
 * seconds, so the flight moves when the leader's viewers leave or the leader dies; its verdicts
 * reach every replica's viewers through the shared ledger. Alone with its store, a process leads.
 */
export class FlightLeadership {
  private wanted = false;
  private retry: NodeJS.Timeout | null = null;
  leading = false;

  constructor(
    private readonly store: LedgerStore,
    private readonly flight: FlightRunner,
    private readonly retryMs = 2000,
  ) {}

  want(): void {
    this.wanted = true;
    void this.attempt();
  }

  unwant(): void {
    this.wanted = false;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.flight.stop();
    this.leading = false;
    void this.store.resign?.('flight');
  }

  private async attempt(): Promise<void> {
    if (!this.wanted || this.leading) return;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    const got = this.store.tryLead ? await this.store.tryLead('flight', () => this.lost()) : true;
    if (!this.wanted) {
      if (got) void this.store.resign?.('flight');
      return;
    }
    if (got) {
      this.leading = true;
      this.flight.start();
    } else {
      this.retry = setTimeout(() => void this.attempt(), this.retryMs);
      this.retry.unref();
    }
  }

  private lost(): void {
    this.leading = false;
    this.flight.stop();
    if (this.wanted) void this.attempt();
  }

  close(): void {
    this.unwant();
  }
}

export interface StreamCore {
  hub: SseHub;
  scene: EdgeScene;
  flight: FlightRunner;
}

export const streamPlugin = definePlugin({
  name: 'stream',
  needs: ['verdicts', 'cot'],
  build: (s: Services, { verdicts, cot }) => buildStream(s, verdicts, (name, source) => cot.tracks.register(name, source)),
});

function buildStream(s: Services, core: VerdictCore, registerTrackSource: (name: string, source: TrackSource) => void): Built<'stream'> {
  const cfg = s.config.stream;
  const keyUrl = s.config.server.publicBaseUrl ? keyUrlFor(s.config.server.publicBaseUrl) : null;
  const wire = (id: number, data: unknown): string => `id: ${id}\nevent: verdict\ndata: ${JSON.stringify(data)}\n\n`;
  // replay budgets count per client as the other per-address limits do (trusted proxies, IPv6 /64)
  const clients = new ClientAddresses(s.config.guard.trustProxy);
  const hub = new SseHub({
    maxViewers: cfg.maxViewers,
    ringSize: cfg.ringSize,
    heartbeatMs: cfg.heartbeatMs,
    sendBufferBytes: cfg.sendBufferBytes,
    retryMs: 2000,
    replayMaxBytes: cfg.replayMaxBytes,
    replayBytesPerAddressPerS: cfg.replayBytesPerAddressPerS,
    clientOf: (res) => clients.of(res.req.socket.remoteAddress, res.req.headers['x-forwarded-for'] as string | undefined),
    sendQueue: procSendQueueProbe(),
    lagCheckMs: cfg.lagCheckMs,
    newestIndex: () => (core.ledger.size ? core.ledger.size - 1 : null),
    // replicas apply each other's nodes within the catch-up poll (a second) after a NOTIFY is missed
    aheadGraceMs: core.store.mode === 'postgres' ? 3000 : 0,
    // older than the ring: rebuilt from the ledger mirror, which every replica holds whole
    backfill: (from, to) => {
      const out: { id: number; wire: () => string }[] = [];
      for (let i = from; i < to; i++) {
        const n = core.ledger.get(i);
        if (n?.kind === RECEIPT_KIND) out.push({ id: i, wire: () => wire(i, nodeVerdictBody(n, core, keyUrl)) });
      }
      return out;
    },
  });
  const scene = new EdgeScene(cfg.sceneSize, s.config.ledger.noFlyZones);
  const flight = new FlightRunner(core, cfg.tickMs, s);
  const leadership = new FlightLeadership(core.store, flight);
  // the flight appends to the ledger: with write tokens set, only viewers bearing one keep it running
  const tokens = new WriteTokens(s.config.guard.writeTokens);
  let starters = 0;
  const watchFlight = (ctx: Context): void => {
    const res = ctx.res;
    if (cfg.flight !== 'on-demand' || res.closed || (tokens.required && tokens.match(ctx.get('authorization')) === null)) return;
    if (++starters === 1) leadership.want();
    res.once('close', () => {
      if (--starters === 0) leadership.unwant();
    });
  };
  const onPause: FlightRunner['onPause'] = (paused, detail) =>
    hub.notice(paused ? 'paused' : 'resumed', {
      reason: paused ? 'the simulated flight is paused: the ledger is near its cap, the rest is kept for real verdicts' : 'the simulated flight resumed',
      ...detail,
    });
  flight.onPause = onPause;
  if (cfg.flight === 'always') leadership.want();
  // the drones are CoT sample tracks too (simulated: exported with how="m-s", opex="s")
  if (cfg.flight !== 'off')
    registerTrackSource('flight', () =>
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
    help: 'Time from publishing one event to its write to the last SSE viewer (a slice of viewers per event-loop turn)',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25],
    registers: [s.metrics.registry],
  });
  new Gauge({ name: 'svc_sse_viewers', help: 'Connected SSE viewers', registers: [s.metrics.registry], collect() { this.set(hub.stats().viewers); } });
  // the hub keeps the totals; these counters catch up with them at scrape time
  const hubCounter = (name: string, help: string, total: () => number) => {
    let seen = 0;
    new Counter({ name, help, registers: [s.metrics.registry], collect() { const now = total(); this.inc(now - seen); seen = now; } });
  };
  hubCounter('svc_sse_events_published_total', 'Verdict events published to the SSE stream', () => hub.stats().events);
  hubCounter('svc_sse_viewers_dropped_total', 'SSE viewers dropped for too many unacknowledged bytes (queued in the process or in the kernel)', () => hub.stats().dropped);
  hubCounter('svc_sse_replays_cut_total', 'SSE resumes whose replay stopped at a byte budget (ended with event: catchup)', () => hub.stats().catchups);
  const onFanout = (seconds: number): void => fanout.observe(seconds);
  hub.onFanout = onFanout;
  // every verdict the ledger applies, this replica's and (postgres mode) every other replica's, in
  // index order, told from the node alone so every replica serves the same bytes for an id;
  // serialised once per event, whatever the number of viewers
  scene.backfill((i) => core.ledger.get(i), core.ledger.size);
  core.ledger.onAppend((node, own) => {
    if (node.kind !== RECEIPT_KIND) return;
    scene.add(node, own);
    hub.publish(node.index, 'verdict', () => nodeVerdictBody(node, core, keyUrl));
  });
  return {
    routes: streamRoutes({ hub, scene, verdicts: core.verdicts, ledger: core.ledger, maxFrames: cfg.maxFramesPerRequest, retryAfterS: s.config.pool.retryAfterS, watchFlight }),
    drain() {
      // the flight first, so nothing is appended while the streams end with `event: shutdown`
      leadership.unwant();
      hub.close();
    },
    close() {
      leadership.close();
      hub.close();
    },
    provides: { hub, scene, flight },
  };
}
