/**
 * A bounded ring of real samples of this process, so the energy panel charts a measured series, not
 * one snapshot. A timer (unref'd) takes one meter reading every `intervalMs`; each point is the
 * difference between two consecutive readings, so it says what happened in that interval: CPU
 * seconds, event-loop busy share, requests, and the power model applied to them. Nothing is
 * interpolated: a point exists only where two readings were actually taken.
 */
import type { EnergyConfig } from './energy.config.js';
import { powerModel, type EnergyMeter, type Reading } from './meter.js';
import { q } from './quantity.js';
import type { EnergySeries, SeriesPoint } from '../isomorphic/wire/energy.js';

type Raw = Pick<Reading, 'at' | 'uptimeS' | 'cpuUserS' | 'cpuSystemS' | 'vcpus' | 'eluActiveS' | 'requestsTotal'>;

/** The point for the interval between readings `a` and `b` (b later). */
export function intervalPoint(a: Raw, b: Raw, cfg: Pick<EnergyConfig, 'wMinPerVcpu' | 'wMaxPerVcpu' | 'pue'>): SeriesPoint {
  const dt = b.uptimeS - a.uptimeS;
  const cpuS = b.cpuUserS + b.cpuSystemS - (a.cpuUserS + a.cpuSystemS);
  // the same CCF formula as /energy/sovereign's avg_power_w, over this interval only
  const m = powerModel({ uptimeS: dt, cpuUserS: cpuS, cpuSystemS: 0, vcpus: b.vcpus }, cfg);
  return {
    at: b.at.toISOString(),
    interval_s: dt,
    cpu_s: cpuS,
    cpu_utilization: m.utilization,
    event_loop_utilization: dt > 0 ? Math.min(1, (b.eluActiveS - a.eluActiveS) / dt) : 0,
    requests: b.requestsTotal - a.requestsTotal,
    avg_power_w: m.avgPowerW,
  };
}

export class SeriesSampler {
  /** maxPoints + 1 readings give maxPoints intervals. */
  private readonly readings: Raw[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight = false;

  constructor(
    private readonly meter: EnergyMeter,
    private readonly cfg: EnergyConfig,
  ) {}

  /** Takes the first reading now, then one every `seriesIntervalMs`. */
  start(): void {
    if (this.timer) return;
    void this.sample();
    this.timer = setInterval(() => void this.sample(), this.cfg.seriesIntervalMs);
    this.timer.unref();
  }

  async sample(): Promise<void> {
    // a slow registry read must not stack readings up
    if (this.inFlight) return;
    this.inFlight = true;
    try {
      const r = await this.meter.read();
      this.readings.push({ at: r.at, uptimeS: r.uptimeS, cpuUserS: r.cpuUserS, cpuSystemS: r.cpuSystemS, vcpus: r.vcpus, eluActiveS: r.eluActiveS, requestsTotal: r.requestsTotal });
      if (this.readings.length > this.cfg.seriesPoints + 1) this.readings.splice(0, this.readings.length - this.cfg.seriesPoints - 1);
    } catch {
      // a failed reading is a missing point, never an invented one
    } finally {
      this.inFlight = false;
    }
  }

  points(): SeriesPoint[] {
    const out: SeriesPoint[] = [];
    for (let i = 1; i < this.readings.length; i++) out.push(intervalPoint(this.readings[i - 1]!, this.readings[i]!, this.cfg));
    return out;
  }

  document(): EnergySeries {
    return {
      interval_ms: q(this.cfg.seriesIntervalMs, 'ms', 'config', 'time between two samples (a timer of this process)'),
      max_points: q(this.cfg.seriesPoints, 'points', 'config', 'ring size; older points are dropped'),
      fields: {
        interval_s: { unit: 's', basis: 'measured', note: 'monotonic clock between the two samples' },
        cpu_s: { unit: 's', basis: 'measured', note: 'process.cpuUsage (user + system, worker threads included) over the interval' },
        cpu_utilization: { unit: 'ratio', basis: 'computed', note: 'cpu_s / (interval_s x vcpus)' },
        event_loop_utilization: { unit: 'ratio', basis: 'measured', note: 'perf_hooks event-loop busy time / interval_s' },
        requests: { unit: 'requests', basis: 'measured', note: 'increase of http_requests_total over the interval' },
        avg_power_w: { unit: 'W', basis: 'model', note: 'vcpus x (w_min_per_vcpu + cpu_utilization x (w_max_per_vcpu - w_min_per_vcpu)), as avg_power_w of /energy/sovereign' },
      },
      points: this.points(),
      honesty: 'Each point is the difference of two readings this process took of itself; none is interpolated or filled in. The series starts when the app was built and resets on restart.',
    };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
