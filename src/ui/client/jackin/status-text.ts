/**
 * The entry page's words for the ledger mode and the health checks, taken from the API answers
 * (/ledger/readiness and /health), never from what the page assumes. Pure.
 */
/** Where the ledger keeps signed verdicts, in words, from /ledger/readiness's durability_state and persistence_scope. */
export function ledgerWhere(durability: string | null, persistence: string | null): string {
  if (!durability) return 'the ledger (its storage is unknown: /ledger/readiness did not answer)';
  if (durability === 'EPHEMERAL' || persistence === 'PROCESS_MEMORY') return 'the ledger in process memory, which resets on restart';
  if (persistence === 'LOCAL_FILE') return `the ledger file in the data directory (${durability.toLowerCase()}: kept across restarts)`;
  if (persistence === 'POSTGRES') return `the PostgreSQL ledger shared by every replica (${durability.toLowerCase()}: kept across restarts)`;
  return `the ledger (${durability.toLowerCase()}, ${persistence ?? 'scope unknown'})`;
}

export interface HealthCheckDoc {
  status: string;
  output?: string;
  observedValue?: unknown;
  observedUnit?: string;
}

/** Each health check that does not pass, with the reason it gives (its output, else its observed value): "name warn: reason". */
export function healthReasons(checks: Record<string, HealthCheckDoc> | undefined): string[] {
  return Object.entries(checks ?? {})
    .filter(([, c]) => c.status !== 'pass')
    .map(([name, c]) => `${name} ${c.status}: ${c.output ?? `${String(c.observedValue)} ${c.observedUnit ?? ''}`.trim()}`);
}
