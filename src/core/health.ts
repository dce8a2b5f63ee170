// interim: the health registry moved to the platform; kept until the evidence views import it there
export type { CheckFn, HealthCheck, HealthStatus } from '../platform/health.js';
