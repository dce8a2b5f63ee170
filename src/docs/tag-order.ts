/**
 * The order and one-line description of the OpenAPI tags. Swagger UI (/docs) lists its groups in
 * the order of the document's top-level `tags`, so an operator meets what the service is for first
 * (verdicts and their ledger, then the live views) and the seeded computational kernels last.
 */
export const TAG_ORDER: readonly { name: string; description: string }[] = [
  { name: 'verdicts', description: 'Evaluate a telemetry frame, sign it as a DSSE receipt and append it to the ledger' },
  { name: 'ledger', description: 'Export, prove and verify receipts; signed checkpoints and transparency-log tiles' },
  { name: 'stream', description: 'Signed verdicts of the simulated flight as Server-Sent Events; the 3-D edge scene' },
  { name: 'mesh', description: 'The wire board: counters, traces and ledger summaries of this process' },
  { name: 'adsb', description: 'Live military aircraft from public feeds, never fabricated' },
  { name: 'cot', description: 'Cursor-on-Target 2.0 export, validation and ingest' },
  { name: 'fleet', description: 'Vessels, certificates, inspections, maintenance and voyages (seeded synthetic dataset)' },
  { name: 'security', description: 'Read-only security posture computed from the live process' },
  { name: 'evidence', description: 'Claims and readiness sections re-checked against the live service' },
  { name: 'energy', description: 'Measured CPU time and counters through a stated power model' },
  { name: 'core', description: 'Health, the verdict doctrine and Prometheus metrics' },
  { name: 'ui', description: 'The browser pages and their assets' },
  { name: 'docs', description: 'This API description' },
  { name: 'kernels', description: 'Computational kernels run in the worker pool, on seeded synthetic inputs' },
];

/**
 * The document's `tags`: those the operations use, in TAG_ORDER; a tag missing from it goes just
 * before kernels so a new feature is never hidden after them.
 */
export function orderedTags(used: ReadonlySet<string>): { name: string; description?: string }[] {
  const known = TAG_ORDER.filter((t) => used.has(t.name));
  const listed = new Set(TAG_ORDER.map((t) => t.name));
  const extra = [...used].filter((t) => !listed.has(t)).map((name) => ({ name }));
  const k = known.findIndex((t) => t.name === 'kernels');
  return k < 0 ? [...known, ...extra] : [...known.slice(0, k), ...extra, ...known.slice(k)];
}
