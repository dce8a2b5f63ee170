/**
 * `npm run bench:ab -- <checkout A> <checkout B> [rounds]`: two built checkouts of the service
 * (each after `npm run build`, e.g. a `git worktree` of the base commit and this one) under the same
 * verdict load, alternately A, B, A, B…, one fresh process each. This machine's speed drifts by a
 * quarter from minute to minute, so a comparison is only fair between runs close in time; per run it
 * prints req/s and what the load does not blur: main-thread and whole-process CPU per verdict (from
 * /proc) and minor-GC time per verdict (prom-client's nodejs_gc_duration_seconds).
 *   git worktree add /tmp/base <commit> && (cd /tmp/base && ln -s "$PWD/node_modules" . && npm run build)
 *   npm run bench:ab -- /tmp/base . 3
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuSeconds, describeStages, load, minorGcSeconds, scrapeMetrics, SERVICE_LOAD_ENV, startServer, VERDICT_FRAME, verdictStages, warm } from './lib.js';

const [a, b, roundsArg] = process.argv.slice(2);
if (!a || !b) throw new Error('usage: bench:ab -- <checkout A> <checkout B> [rounds]');
const rounds = Number(roundsArg ?? 3);
const post = { method: 'POST' as const, body: VERDICT_FRAME, headers: { 'content-type': 'application/json' } };

for (let round = 1; round <= rounds; round++) {
  for (const [label, dir] of [
    ['A', a],
    ['B', b],
  ] as const) {
    const entry = join(resolve(dir), 'dist', 'src', 'main.js');
    const svc = await startServer(label, [entry], '/api/svc/v1/health', { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-ab-')), ...SERVICE_LOAD_ENV });
    try {
      const url = `${svc.base}/api/svc/v1/verdict`;
      await warm(url, post);
      const [cpu0, m0] = [cpuSeconds(svc.child.pid!), await scrapeMetrics(svc.base)];
      const r = await load(`${label} ${round}`, { url, ...post });
      const [cpu1, m1] = [cpuSeconds(svc.child.pid!), await scrapeMetrics(svc.base)];
      const per = (s: number) => ((1e6 * s) / r.requests).toFixed(1);
      const cpu = cpu0 && cpu1 ? `main ${per(cpu1.main - cpu0.main)} µs, process ${per(cpu1.all - cpu0.all)} µs` : 'CPU n/a (no /proc)';
      console.log(`${label} round ${round}: ${r.reqPerSec.toFixed(0)} verdicts/s, p99 ${r.p99} ms; per verdict: ${cpu}, minor GC ${per(minorGcSeconds(m1) - minorGcSeconds(m0))} µs; ${describeStages(verdictStages(m0), verdictStages(m1))}`);
    } finally {
      await svc.stop();
    }
  }
}
