/**
 * SSE fan-out at scale: N raw viewers on one stream for a while. For every verdict event each
 * viewer records its arrival time; reported are the event age at arrival (ts_utc of the receipt →
 * arrival, signing included), the fan-out spread (first → last viewer per event), events missed,
 * and the service's RSS before and after the viewers connect (from /metrics).
 */
import { clientFor, scrapeMetrics } from './lib.js';

/** The service's /metrics, or none when it does not answer there (a deployment may not expose it). */
const metricsOf = (base: string): Promise<Map<string, number>> => scrapeMetrics(base).catch(() => new Map<string, number>());

/** Where a histogram's p99 lies: at most `ms`, or above `ms` (the largest finite bucket bound) when `over`. */
export interface BucketP99 {
  ms: number;
  over: boolean;
}

/**
 * The p99 bucket bound of an unlabelled Prometheus histogram from one scrape's samples; null when
 * the scrape has no such histogram or it holds no observation, since a bound read from empty
 * buckets would be a figure nothing measured.
 */
export function histogramP99(samples: Map<string, number>, name: string): BucketP99 | null {
  const prefix = `${name}_bucket{le="`;
  const buckets = [...samples].filter(([series]) => series.startsWith(prefix)).map(([series, n]) => ({ le: Number(series.slice(prefix.length, -2).replace('+Inf', 'Infinity')), n }));
  const total = buckets.at(-1)?.n ?? 0;
  if (total === 0) return null;
  const at = buckets.find((b) => b.n >= 0.99 * total)!;
  if (Number.isFinite(at.le)) return { ms: at.le * 1000, over: false };
  const largest = buckets.filter((b) => Number.isFinite(b.le)).at(-1);
  return largest ? { ms: largest.le * 1000, over: true } : null;
}

/** A p99 bucket bound as the report prints it. */
export function describeBucketP99(p: BucketP99 | null): string {
  if (p === null) return 'n/a (no sample)';
  return p.over ? `> ${p.ms} ms` : `<= ${p.ms} ms`;
}

export interface SseRow {
  viewers: number;
  /** Viewers answered other than 200 (e.g. 503 at a connection cap); they count as no viewer. */
  refused: number;
  events: number;
  missed: number;
  ageP50Ms: number;
  ageP99Ms: number;
  spreadP99Ms: number;
  /** Server-side: main-thread write time per event to all viewers (histogram bucket bound); null when the target's /metrics gave no sample. */
  serverFanoutP99Ms: number | null;
  /** True when that p99 lies above serverFanoutP99Ms, the histogram's largest finite bucket bound. */
  serverFanoutP99Over: boolean;
  rssBeforeMb: number;
  rssAfterMb: number;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : 0;
};

async function rssMb(base: string): Promise<number> {
  return ((await metricsOf(base)).get('process_resident_memory_bytes') ?? NaN) / 2 ** 20;
}

/** `headers` go with every viewer's request (a bearer token, against a deployment that wants one). */
export async function sseBench(svc: { base: string }, viewers = Number(process.env.BENCH_SSE_VIEWERS ?? 2000), seconds = Number(process.env.BENCH_DURATION ?? 10), headers: Record<string, string> = {}): Promise<SseRow> {
  const rssBefore = await rssMb(svc.base);
  const arrivals = new Map<number, { ts: number; at: number[] }>();
  const sockets: (() => void)[] = [];
  let refused = 0;
  const url = `${svc.base}/api/svc/v1/stream/verdicts`;
  await Promise.all(
    Array.from({ length: viewers }, () =>
      new Promise<void>((resolve, reject) => {
        const req = clientFor(url).request(url, { agent: false, headers }, (res) => {
          if (res.statusCode !== 200) {
            refused++;
            res.resume();
            resolve();
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            const now = Date.now();
            buf += chunk;
            let cut: number;
            while ((cut = buf.indexOf('\n\n')) >= 0) {
              const block = buf.slice(0, cut);
              buf = buf.slice(cut + 2);
              if (!block.startsWith('id: ')) continue; // retry line, pings
              const id = Number(block.slice(4, block.indexOf('\n')));
              let rec = arrivals.get(id);
              if (!rec) {
                // the same event reaches every viewer: read its timestamp once (keeps the client cheap)
                const ts = /"ts_utc":"([^"]+)"/.exec(block);
                rec = { ts: ts ? Date.parse(ts[1]!) : NaN, at: [] };
                arrivals.set(id, rec);
              }
              rec.at.push(now);
            }
          });
          res.on('error', () => {});
          resolve();
        });
        req.on('error', reject);
        sockets.push(() => req.destroy());
        req.end();
      }),
    ),
  );
  const connectedAt = Date.now();
  const rssAfterConnect = await rssMb(svc.base);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const rssAfter = Math.max(rssAfterConnect, await rssMb(svc.base));
  sockets.forEach((close) => close());
  // ignore events still being delivered at the end of the window
  // and events made before every viewer had connected
  const complete = [...arrivals.entries()].sort((a, b) => a[0] - b[0]).slice(0, -4).filter(([, rec]) => rec.ts >= connectedAt);
  const ages: number[] = [];
  const spreads: number[] = [];
  let missed = 0;
  const connected = viewers - refused;
  for (const [, rec] of complete) {
    missed += connected - rec.at.length;
    for (const at of rec.at) ages.push(at - rec.ts);
    spreads.push(Math.max(...rec.at) - Math.min(...rec.at));
  }
  const fanout = histogramP99(await metricsOf(svc.base), 'svc_sse_fanout_seconds');
  return { viewers, refused, events: complete.length, missed, ageP50Ms: pct(ages, 50), ageP99Ms: pct(ages, 99), spreadP99Ms: pct(spreads, 99), serverFanoutP99Ms: fanout?.ms ?? null, serverFanoutP99Over: fanout?.over ?? false, rssBeforeMb: rssBefore, rssAfterMb: rssAfter };
}

/** The run's figures as the bench prints them. */
export function describeSse(r: SseRow): string {
  const refused = r.refused ? ` (${r.refused} refused)` : '';
  return `events ${r.events}, missed deliveries ${r.missed}${refused}, event age at arrival p50 ${r.ageP50Ms} ms / p99 ${r.ageP99Ms} ms, fan-out spread p99 ${r.spreadP99Ms} ms (client side), server fan-out p99 ${describeBucketP99(r.serverFanoutP99Ms === null ? null : { ms: r.serverFanoutP99Ms, over: r.serverFanoutP99Over })}, RSS ${Number.isFinite(r.rssBeforeMb) && Number.isFinite(r.rssAfterMb) ? `${r.rssBeforeMb.toFixed(0)} -> ${r.rssAfterMb.toFixed(0)} MB` : 'n/a (no /metrics)'}`;
}
