/**
 * What this process can measure about itself, as deltas from the moment the app was built: CPU time
 * from process.cpuUsage() (worker threads are threads of this process, so pool work is included),
 * wall time from the monotonic clock, event-loop utilisation from perf_hooks, request counts from
 * the app's registry, and the RAPL package counter when the kernel exposes it. Nothing here is a
 * constant standing in for a reading.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { samples, sumWhere } from './prom.js';

export interface Reading {
  at: Date;
  uptimeS: number;
  cpuUserS: number;
  cpuSystemS: number;
  vcpus: number;
  /** Event-loop busy ratio since start, and the busy (active) seconds it implies. */
  elu: number;
  eluActiveS: number;
  requestsTotal: number;
  rapl: { joules: number; path: string } | { joules: null; reason: string };
}

export class EnergyMeter {
  private readonly t0 = performance.now();
  private readonly cpu0 = process.cpuUsage();
  private readonly elu0: EventLoopUtilization = performance.eventLoopUtilization();
  private rapl0: number | null | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly raplPath: string,
  ) {}

  private readRaplUj(): number | string {
    if (this.raplPath === 'none') return 'disabled by configuration (raplPath = none)';
    try {
      const v = Number(readFileSync(this.raplPath, 'utf8').trim());
      return Number.isFinite(v) ? v : `unreadable value at ${this.raplPath}`;
    } catch (err) {
      return `${this.raplPath} not readable (${(err as NodeJS.ErrnoException).code ?? 'error'}): no power meter, the CPU-time model is used`;
    }
  }

  async read(): Promise<Reading> {
    // the clocks are read with the counters, before any await: a point divides the CPU between two
    // readings by the time between the same two moments (read after the await, a late registry
    // answer moved the time and not the CPU, and an interval could come out shorter than its timer)
    const at = new Date();
    const uptimeS = (performance.now() - this.t0) / 1000;
    const cpu = process.cpuUsage(this.cpu0);
    const elu = performance.eventLoopUtilization(this.elu0);
    const requestsTotal = sumWhere(await samples(this.registry, 'http_requests_total'));
    const raw = this.readRaplUj();
    let rapl: Reading['rapl'];
    if (typeof raw === 'string') rapl = { joules: null, reason: raw };
    else {
      // the counter is since boot; the first reading is this app's zero (wrap-around not handled)
      if (this.rapl0 === undefined || this.rapl0 === null) this.rapl0 = raw;
      rapl = { joules: (raw - this.rapl0) / 1e6, path: this.raplPath };
    }
    return {
      at,
      uptimeS,
      cpuUserS: cpu.user / 1e6,
      cpuSystemS: cpu.system / 1e6,
      vcpus: availableParallelism(),
      elu: elu.utilization,
      eluActiveS: elu.active / 1000,
      requestsTotal,
      rapl,
    };
  }
}

export interface PowerModel {
  wMinPerVcpu: number;
  wMaxPerVcpu: number;
  pue: number;
}

export interface ModelResult {
  utilization: number;
  avgPowerW: number;
  energyJTotal: number;
  energyJMarginal: number;
  energyKwh: number;
}

/**
 * CCF compute model [S57]: u = cpu_s / (wall_s × vcpus); W = vcpus × (W_min + u(W_max − W_min));
 * E_total = W × wall_s × PUE; E_marginal = (W_max − W_min) × cpu_s (the work-attributable part).
 */
export function powerModel(r: Pick<Reading, 'uptimeS' | 'cpuUserS' | 'cpuSystemS' | 'vcpus'>, m: PowerModel): ModelResult {
  const cpuS = r.cpuUserS + r.cpuSystemS;
  const u = r.uptimeS > 0 ? cpuS / (r.uptimeS * r.vcpus) : 0;
  const avgPowerW = r.vcpus * (m.wMinPerVcpu + u * (m.wMaxPerVcpu - m.wMinPerVcpu));
  const energyJTotal = avgPowerW * r.uptimeS * m.pue;
  return { utilization: u, avgPowerW, energyJTotal, energyJMarginal: (m.wMaxPerVcpu - m.wMinPerVcpu) * cpuS, energyKwh: energyJTotal / 3.6e6 };
}
