/**
 * The simulated flight's clock: every tick it decides its drones' frames as signed verdicts,
 * never overlapping ticks, and holds off while the ledger is near its cap.
 */
import type { StreamServices, StreamSources } from './sources.js';
import { flightFrames } from './flight.js';

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
    private readonly core: StreamSources,
    private readonly tickMs: number,
    private readonly s: StreamServices,
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
