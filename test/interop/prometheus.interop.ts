/**
 * Interop: the alert rules and the Grafana dashboard against a real Prometheus, from Debian's
 * `prometheus` package (prometheus and promtool). promtool lints and unit-tests the rules; then two
 * service processes (memory mode, ADS-B from a fake upstream) are scraped every second by a real
 * prometheus that loads the rules, a short load runs, and every dashboard panel query and every
 * rule expression goes through /api/v1/query: each must parse and return at least one series.
 * Run by `npm run test:interop` (not by `npm test`: it needs the Debian package).
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../helpers/free-port.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/config/load.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';
import { openSse, type SseReader } from '../helpers/sse.js';
import { until } from '../helpers/until.js';

const INSTALL = 'apt-get install -y prometheus';
const API = '/api/svc/v1';
const JOB = 'drone-intel-svc';
const ROOT = projectRoot();
const RULES = join(ROOT, 'deploy/prometheus/rules.yml');
const RULE_TESTS = join(ROOT, 'deploy/prometheus/rules.test.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/dashboard.json');
/** What Grafana puts in for the dashboard's variables: the job, every replica, a rate window of a few scrapes. */
const GRAFANA_VARS: Record<string, string> = { job: JOB, instance: '.+', __rate_interval: '1m' };

interface Run {
  code: number | null;
  out: string;
  err: string;
}

/** Runs one of the package's binaries; a missing binary fails naming the package, never skips. */
function run(cmd: 'promtool' | 'prometheus', args: string[], input?: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e) => reject(new Error(`the Prometheus interop test needs \`${cmd}\` from the Debian package \`prometheus\` (${e.message}); install it: ${INSTALL}`)));
    child.once('close', (code) => resolve({ code, out, err }));
    child.stdin.end(input ?? '');
  });
}

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
}

/**
 * The rules of rules.yml with their expressions, read with a line scanner (no YAML package in the
 * project): `- record:`/`- alert:` open a rule, `expr:` is inline or a `|` block.
 */
function readRules(text: string): Rule[] {
  const rules: Rule[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*- (record|alert): (\S+)\s*$/.exec(lines[i]!);
    if (open) rules.push({ [open[1]!]: open[2]!, expr: '' });
    const expr = /^(\s*)expr: (.*)$/.exec(lines[i]!);
    if (!expr) continue;
    if (expr[2]!.trim() !== '|') {
      rules.at(-1)!.expr = expr[2]!.trim();
      continue;
    }
    const block: string[] = [];
    while (i + 1 < lines.length && (lines[i + 1]!.trim() === '' || lines[i + 1]!.search(/\S/) > expr[1]!.length)) block.push(lines[++i]!.trim());
    rules.at(-1)!.expr = block.join(' ').trim();
  }
  return rules;
}

/**
 * The alert's condition with every comparison against a number made a `bool` comparison: a healthy
 * system answers an alert expression with no series, so the signals it compares are what must exist.
 */
function signalOf(expr: string): string {
  return expr.replace(/(>=|<=|==|!=|>|<)\s*(?=[0-9])/g, '$1 bool ');
}

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}

function dashboardQueries(): { source: string; expr: string }[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[]; templating: { list: { name: string; definition?: string }[] } };
  const fill = (q: string): string => q.replace(/\$(\w+)/g, (all, name: string) => GRAFANA_VARS[name] ?? all);
  const out: { source: string; expr: string }[] = [];
  for (const v of dash.templating.list) {
    // label_values(selector, label): the variable's options are the label's values on those series
    const lv = v.definition && /^label_values\((.+), (\w+)\)$/.exec(v.definition);
    if (lv) out.push({ source: `variable $${v.name}`, expr: `count by (${lv[2]}) (${fill(lv[1]!)})` });
  }
  for (const p of dash.panels) for (const t of p.targets ?? []) out.push({ source: `panel "${p.title}"`, expr: fill(t.expr) });
  return out;
}

const strong = { source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 2000 };
/** Strong evidence, middling evidence, and a fix inside the demo no-fly zone: every decision. */
function frame(k: number): Record<string, unknown> {
  const id = `pr${k.toString(16).padStart(4, '0')}`;
  return [{ ...strong, track_id: id }, { ...strong, track_id: id, n_observations: 800 }, { ...strong, track_id: id, lat: 36.22, lon: -115.16 }][k % 3]!;
}

describe('interop: Prometheus rules (promtool, Debian package prometheus)', function () {
  this.timeout(60_000);

  it('promtool check rules and promtool test rules pass', async () => {
    const check = await run('promtool', ['check', 'rules', RULES]);
    expect(check.code, check.out + check.err).to.equal(0);
    const rules = readRules(readFileSync(RULES, 'utf8'));
    expect(check.out).to.include(`SUCCESS: ${rules.length} rules found`);
    const tests = await run('promtool', ['test', 'rules', RULE_TESTS]);
    expect(tests.code, tests.out + tests.err).to.equal(0);
    expect(tests.out).to.include('SUCCESS');
    // every alert is exercised by the unit tests
    const tested = readFileSync(RULE_TESTS, 'utf8');
    for (const r of rules.filter((x) => x.alert)) expect(tested, r.alert).to.include(`alertname: ${r.alert}\n`);
  });
});

describe('interop: the dashboard and the rules against a real prometheus scraping two replicas', function () {
  this.timeout(180_000);
  const dir = mkdtempSync(join(tmpdir(), 'svc-prometheus-'));
  let fake: FakeUpstream | undefined;
  const replicas: ServiceProcess[] = [];
  let prom: ChildProcess | undefined;
  let promErr = '';
  let promBase = '';
  let viewer: SseReader | undefined;
  const VERDICTS = 12;

  async function query(expr: string): Promise<{ ok: true; series: { metric: Record<string, string>; value: [number, string] }[] } | { ok: false; error: string }> {
    const res = await fetch(`${promBase}/api/v1/query?${new URLSearchParams({ query: expr })}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] } };
    if (body.status !== 'success') return { ok: false, error: `${body.status}: ${body.error}` };
    return { ok: true, series: body.data!.resultType === 'vector' ? body.data!.result : [] };
  }

  /** The instant vector's value per instance (one series per instance expected). */
  async function perInstance(expr: string): Promise<Map<string, number>> {
    const r = await query(expr);
    if (!r.ok) throw new Error(`${expr}: ${r.error}`);
    return new Map(r.series.map((s) => [s.metric.instance!, Number(s.value[1])]));
  }

  before(async () => {
    // the binaries first: without them the test fails here, naming the package
    for (const bin of ['promtool', 'prometheus'] as const) await run(bin, ['--version']);
    fake = await startFakeUpstream();
    const env = { SVC_LEDGER_MODE: 'memory', SVC_ADSB_PROVIDERS: `fake=${fake.url}`, SVC_ADSB_SHARED_REFRESH: 'local', SVC_STREAM_TICK_MS: '100' };
    replicas.push(...(await Promise.all([startService(env), startService(env)])));
    const port = await freePort();
    promBase = `http://127.0.0.1:${port}`;
    const targets = replicas.map((r) => JSON.stringify(new URL(r.base).host)).join(', ');
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  scrape_timeout: 1s',
        '  evaluation_interval: 1s',
        'rule_files:',
        `  - ${JSON.stringify(RULES)}`,
        'scrape_configs:',
        `  - job_name: ${JOB}`,
        '    static_configs:',
        `      - targets: [${targets}]`,
        '',
      ].join('\n'),
    );
    prom = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    prom.stderr!.on('data', (d: Buffer) => (promErr += d.toString()));
    const exited = new Promise<never>((_, reject) => prom!.once('exit', (code) => reject(new Error(`prometheus exited with ${code}: ${promErr.slice(-2000)}`))));
    exited.catch(() => {});
    await Promise.race([
      until('prometheus to be ready', async () => (await fetch(`${promBase}/-/ready`).catch(() => null))?.ok, 30_000),
      exited,
    ]);
    await until('prometheus to scrape both replicas', async () => {
      const up = await perInstance(`up{job="${JOB}"} == 1`);
      return up.size === 2;
    });

    // the load: verdicts of every decision, reads, a kernel, the ADS-B feed, a 404; the simulated
    // flight on replica 0 while a viewer watches its stream
    viewer = await openSse(`${replicas[0]!.base}${API}/stream/verdicts`);
    for (const [i, r] of replicas.entries()) {
      for (let k = 0; k < VERDICTS; k++) {
        const res = await fetch(`${r.base}${API}/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(frame(i * 100 + k)) });
        expect(res.status, `verdict ${k} on replica ${i}`).to.equal(200);
        await res.arrayBuffer();
      }
      for (const path of [`${API}/health`, `${API}/ledger/readiness`, `${API}/ssm/scan?seq_len=8`, `${API}/adsb`, `${API}/nope`]) {
        const res = await fetch(`${r.base}${path}`);
        expect(res.status, path).to.be.oneOf(path.endsWith('/nope') ? [404] : [200]);
        await res.arrayBuffer();
      }
    }
    await viewer.waitFor(5);
    // scraped after the load: Prometheus holds exactly the verdicts posted, and the flight's
    const leader = new URL(replicas[0]!.base).host;
    await until('prometheus to hold the posted verdicts and the flight leader', async () => {
      const real = await perInstance(`sum by (instance) (svc_verdicts_total{job="${JOB}",simulated="false"})`);
      const role = await perInstance(`svc_replica_role{job="${JOB}",role="flight_leader"}`);
      const simulated = await perInstance(`sum by (instance) (svc_verdicts_total{job="${JOB}",simulated="true"})`);
      return [...real.values()].every((n) => n === VERDICTS) && real.size === 2 && role.get(leader) === 1 && (simulated.get(leader) ?? 0) > 0;
    });
    viewer.close();
    // two scrapes of each replica begun after the load: every series it made has the two samples rate() needs
    const loadEnd = Date.now() / 1000;
    await until('two scrapes of each replica after the load', async () => {
      const last = await perInstance(`timestamp(up{job="${JOB}"})`);
      return last.size === 2 && [...last.values()].every((t) => t > loadEnd + 1.5);
    });
  });

  after(async () => {
    viewer?.close();
    if (prom && prom.exitCode === null && prom.signalCode === null) {
      prom.kill('SIGTERM');
      await once(prom, 'exit');
    }
    for (const r of replicas) {
      if (r.child.exitCode === null && r.child.signalCode === null) {
        r.child.kill('SIGTERM');
        await once(r.child, 'exit');
      }
    }
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('loads every rule, and every panel query and rule expression parses and returns a series', async () => {
    const rules = readRules(readFileSync(RULES, 'utf8'));
    // the rules Prometheus loaded evaluate without error
    const loaded = await until('every rule evaluated once', async () => {
      const body = (await (await fetch(`${promBase}/api/v1/rules`)).json()) as { data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } };
      const all = body.data.groups.flatMap((g) => g.rules);
      return all.length === rules.length && all.every((r) => r.health !== 'unknown') ? all : null;
    });
    expect(loaded.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`)).to.deep.equal([]);

    const checks = [
      ...dashboardQueries(),
      ...rules.filter((r) => r.record).map((r) => ({ source: `record ${r.record}`, expr: r.expr })),
      ...rules.filter((r) => r.alert).map((r) => ({ source: `alert ${r.alert} (compared with bool)`, expr: signalOf(r.expr) })),
    ];
    for (const c of checks) expect(c.expr, c.source).to.not.match(/\$/);
    // rate() needs two samples of a series after it appeared: polled until each query has a series
    const rows: { source: string; expr: string; series: number | string }[] = [];
    const deadline = Date.now() + 30_000;
    for (const c of checks) {
      let r = await query(c.expr);
      while (r.ok && r.series.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        r = await query(c.expr);
      }
      rows.push({ ...c, series: r.ok ? r.series.length : r.error });
    }
    // the alert expressions as written parse too (a healthy system makes them return nothing)
    for (const r of rules.filter((x) => x.alert)) {
      const q = await query(r.expr);
      rows.push({ source: `alert ${r.alert} (as written)`, expr: r.expr, series: q.ok ? q.series.length : q.error });
    }
    const width = Math.max(...rows.map((r) => r.source.length));
    console.log(`\n  series  ${'source'.padEnd(width)}  query`);
    for (const r of rows) console.log(`  ${String(r.series).padStart(6)}  ${r.source.padEnd(width)}  ${r.expr}`);
    console.log(`  ${rows.length} queries against prometheus (${checks.length} must return a series)\n`);

    const failed = rows.filter((r) => (r.source.endsWith('(as written)') ? typeof r.series !== 'number' : !(typeof r.series === 'number' && r.series > 0)));
    expect(failed.map((r) => `${r.source}: ${r.series} — ${r.expr}`)).to.deep.equal([]);
  });

  it('a scrape of each replica passes promtool check metrics, with the operator series in it', async () => {
    for (const r of replicas) {
      const text = await (await fetch(`${r.base}/metrics`)).text();
      const lint = await run('promtool', ['check', 'metrics'], text);
      expect({ code: lint.code, out: lint.out + lint.err }, r.base).to.deep.equal({ code: 0, out: '' });
      for (const name of ['svc_verdicts_total', 'svc_build_info', 'svc_replica_role', 'svc_ledger_checkpoint_age_seconds', 'svc_ledger_checkpoint_size']) expect(text, name).to.match(new RegExp(`^${name}\\{?`, 'm'));
    }
  });
});
