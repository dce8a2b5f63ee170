/**
 * Passive health, so a health probe can never load an upstream: each feature registers checks in
 * the IETF "Health Check Response Format" shape; /health reads them without probing anything or
 * calling upstreams.
 */

export type HealthStatus = 'pass' | 'warn' | 'fail';

export interface HealthCheck {
  componentType: string;
  observedValue: number | string | boolean | null;
  observedUnit: string;
  status: HealthStatus;
  time: string;
  output?: string;
}

export type CheckFn = () => Omit<HealthCheck, 'time'>;

export class HealthRegistry {
  private readonly checks = new Map<string, CheckFn>();

  register(name: string, fn: CheckFn): void {
    if (this.checks.has(name)) throw new Error(`health check ${name} registered twice`);
    this.checks.set(name, fn);
  }

  run(now = new Date()): { status: HealthStatus; checks: Record<string, HealthCheck> } {
    const time = now.toISOString();
    const checks: Record<string, HealthCheck> = {};
    let status: HealthStatus = 'pass';
    for (const [name, fn] of this.checks) {
      let check: HealthCheck;
      try {
        check = { ...fn(), time };
      } catch (err) {
        check = { componentType: 'component', observedValue: null, observedUnit: '', status: 'fail', time, output: (err as Error).message };
      }
      checks[name] = check;
      if (check.status === 'fail') status = 'fail';
      else if (check.status === 'warn' && status === 'pass') status = 'warn';
    }
    return { status, checks };
  }
}
