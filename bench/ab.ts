/**
 * `npm run bench:ab -- <A> <B> [rounds] [--route=<GET path>]`: two launches of the built service
 * under the same load, alternately A, B, A, B…, one fresh process each. This machine's speed drifts
 * by a quarter from minute to minute, so a comparison is only fair between runs close in time; per
 * run it prints req/s and what the load does not blur: main-thread and whole-process CPU per request
 * (from /proc), minor-GC time per request and the full collections (prom-client's
 * nodejs_gc_duration_seconds), and for verdicts the signing and commit stages.
 *
 * A side is a built checkout (e.g. a `git worktree` of the base commit, after `npm run build`),
 * optionally followed by settings, each after a `+`: `NAME=value` goes into the service's
 * environment, `--flag` to Node. The load is `POST /verdict` unless `--route` names a GET path.
 *   git worktree add /tmp/base <commit> && (cd /tmp/base && ln -s "$PWD/node_modules" . && npm run build)
 *   npm run bench:ab -- /tmp/base . 3
 *   npm run bench:ab -- .+SVC_POOL_MAX_OLD_GENERATION_SIZE_MB=256 . 3 --route=/api/svc/v1/blt/entropy-patch
 *   npm run bench:ab -- .+--max-old-space-size=512 . 2 --route=/api/svc/v1/ssm/scan
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuSeconds, describeStages, load, minorGcSeconds, scrapeMetrics, SERVICE_LOAD_ENV, startServer, VERDICT_FRAME, verdictStages, warm } from './lib.js';

interface Side {
  label: string;
  entry: string;
  env: Record<string, string>;
  nodeArgs: string[];
}

function side(label: string, spec: string): Side {
  const [dir, ...settings] = spec.split('+');
  const env: Record<string, string> = {};
  const nodeArgs: string[] = [];
  for (const s of settings) {
    if (s.startsWith('--')) nodeArgs.push(s);
    else if (/^[A-Z_][A-Z0-9_]*=/.test(s)) env[s.slice(0, s.indexOf('='))] = s.slice(s.indexOf('=') + 1);
    else throw new Error(`bench:ab: "${s}" is neither NAME=value nor a --flag`);
  }
  return { label: settings.length ? `${label} (${settings.join(' ')})` : label, entry: join(resolve(dir!), 'dist', 'src', 'main.js'), env, nodeArgs };
}

const args = process.argv.slice(2);
const route = args.find((x) => x.startsWith('--route='))?.slice('--route='.length);
const [a, b, roundsArg] = args.filter((x) => !x.startsWith('--route='));
if (!a || !b) throw new Error('usage: bench:ab -- <checkout A>[+NAME=value|+--flag…] <checkout B>[…] [rounds] [--route=<GET path>]');
const rounds = Number(roundsArg ?? 3);
const request = route ? { path: route, what: 'call' } : { path: '/api/svc/v1/verdict', what: 'verdict', method: 'POST' as const, body: VERDICT_FRAME, headers: { 'content-type': 'application/json' } };

for (let round = 1; round <= rounds; round++) {
  for (const s of [side('A', a), side('B', b)]) {
    const svc = await startServer(s.label, [...s.nodeArgs, s.entry], '/api/svc/v1/health', { SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-ab-')), ...SERVICE_LOAD_ENV, ...s.env });
    try {
      const { path, what, ...http } = request;
      const url = `${svc.base}${path}`;
      await warm(url, http);
      const [cpu0, m0] = [cpuSeconds(svc.child.pid!), await scrapeMetrics(svc.base)];
      const r = await load(`${s.label} ${round}`, { url, ...http });
      const [cpu1, m1] = [cpuSeconds(svc.child.pid!), await scrapeMetrics(svc.base)];
      const per = (x: number) => ((1e6 * x) / r.requests).toFixed(1);
      const cpu = cpu0 && cpu1 ? `main ${per(cpu1.main - cpu0.main)} µs, process ${per(cpu1.all - cpu0.all)} µs` : 'CPU n/a (no /proc)';
      const major = (m: Map<string, number>): number => m.get('nodejs_gc_duration_seconds_count{kind="major"}') ?? 0;
      const stages = route ? '' : `; ${describeStages(verdictStages(m0), verdictStages(m1))}`;
      console.log(`${s.label} round ${round}: ${r.reqPerSec.toFixed(0)} ${what}s/s, p99 ${r.p99} ms; per ${what}: ${cpu}, minor GC ${per(minorGcSeconds(m1) - minorGcSeconds(m0))} µs; ${major(m1) - major(m0)} full GCs${stages}`);
    } finally {
      await svc.stop();
    }
  }
}
