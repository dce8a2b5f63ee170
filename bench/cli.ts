/**
 * `npm run bench` arguments and SLO thresholds: parsing, the usage text, and the check of a
 * finished report against the thresholds. Pure (nothing here starts, loads or prints), so the
 * front end can refuse bad arguments before anything runs, and tests can call it directly.
 */
import { CATALOGUE, ENV_VARS, NAMES } from './catalogue.js';
import type { Summary } from './lib.js';

export type Metric = 'p50' | 'p99' | 'p99.9' | 'rps' | 'errors' | 'non2xx';
export type Op = '<' | '<=' | '>' | '>=';

export interface Threshold {
  /** As written, for the printout. */
  text: string;
  /** Scenario-name prefix (`verdict` selects `verdicts`); null: every request row of the run. */
  selector: string | null;
  metric: Metric;
  op: Op;
  /** Milliseconds for latencies, req/s for rps, a percentage when `percent`, else a count. */
  limit: number;
  percent: boolean;
}

export interface RunOptions {
  /** The deployment's base URL without a trailing slash, or null for a local run. */
  target: string | null;
  token: string | null;
  slo: Threshold[];
  /** Requests per second of every target load, or null for closed loops. */
  rate: number | null;
  /** Also write bench/REPORT.md. */
  report: boolean;
  /** In catalogue order. */
  scenarios: string[];
}

export type Parsed = { kind: 'help' } | { kind: 'error'; message: string } | { kind: 'run'; options: RunOptions };

const OPTIONS = ['--target', '--token', '--slo', '--rate', '--report', '--help'] as const;
const WITH_VALUE = new Set(['--target', '--token', '--slo', '--rate']);

/** Exit codes: a breached threshold, and arguments that were not understood. */
export const EXIT_BREACH = 1;
export const EXIT_USAGE = 2;

export function usage(): string {
  const width = Math.max(...NAMES.map((n) => n.length)) + 2;
  const envWidth = Math.max(...ENV_VARS.map(([n]) => n.length)) + 2;
  const lines = [
    'usage: npm run bench -- [options] [scenario ...]',
    '',
    'Runs the named scenarios (with none named, every one but ledger-scale; with --target, every one',
    'that can run remotely), prints a table per scenario and writes bench/results/bench-<time>.json.',
    'A local run builds the service and starts its own servers; --target starts nothing.',
    '',
    'options:',
    '  --target URL   load the deployment at URL (http[s]://host[:port][/prefix]) instead of local servers',
    '  --token T      with --target: sent as "Authorization: Bearer T" on writes (POST /verdict) and by',
    '                 SSE viewers (with write tokens set, only a token-bearing viewer starts the flight)',
    "  --slo LIST     thresholds, comma-separated (e.g. 'verdict.p99<50ms,errors<0.1%'); exit 1 on a breach",
    '  --rate N       with --target: every load at a fixed N requests/s instead of a closed loop',
    '                 (saturation keeps its own paced probes)',
    '  --report       local runs: also write bench/REPORT.md',
    '  -h, --help     this text',
    '',
    'scenarios (against --target: absolute = the service rows without baselines, refused = local only):',
    ...CATALOGUE.map((s) => `  ${s.name.padEnd(width)}${s.title} [target: ${s.target.mode === 'refused' ? 'refused' : `${s.target.mode}, ${s.target.what}`}]`),
    '',
    'SLO thresholds: [scenario.]metric op value, op one of < <= > >=',
    '  p50, p99, p99.9   latency in ms (or s): the slowest matching row',
    '  rps               requests per second: the slowest matching row',
    '  errors, non2xx    failed requests (connection errors, timeouts) or non-2xx answers, summed over the',
    '                    matching rows: with % a share of the requests sent, else a count',
    '  The scenario part is a prefix of scenario names (verdict.p99 is the verdicts rows); without it a',
    '  threshold covers every request row of the run. sse: p50/p99 are the event age at arrival, errors',
    '  the missed deliveries, non2xx the viewers refused.',
    '',
    'environment:',
    ...ENV_VARS.map(([name, what]) => `  ${name.padEnd(envWidth)}${what}`),
    '',
    'exit status: 0 done (every threshold met), 1 a threshold breached or the run failed, 2 arguments not understood.',
  ];
  return `${lines.join('\n')}\n`;
}

const THRESHOLD = /^(?:([a-z][a-z0-9-]*)\.)?(p50|p99\.9|p99|rps|errors|non2xx)\s*(<=|>=|<|>)\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|%)?$/;

/** The thresholds of one --slo value; throws with a one-line message when one is malformed. */
export function parseSlo(text: string): Threshold[] {
  const out: Threshold[] = [];
  for (const raw of text.split(',')) {
    const item = raw.trim();
    const m = THRESHOLD.exec(item);
    if (!m) throw new Error(`--slo: cannot read "${item}" (expected [scenario.]metric<value, e.g. verdict.p99<50ms or errors<0.1%)`);
    const [, selector, metric, op, value, unit] = m as unknown as [string, string | undefined, Metric, Op, string, string | undefined];
    const latency = metric.startsWith('p');
    if (latency && unit === '%') throw new Error(`--slo: "${item}": a latency is in ms or s, not %`);
    if (!latency && (unit === 'ms' || unit === 's')) throw new Error(`--slo: "${item}": ${metric} is ${metric === 'rps' ? 'requests per second' : 'a count or a percentage'}, not a time`);
    if (metric === 'rps' && unit === '%') throw new Error(`--slo: "${item}": rps is requests per second, not a percentage`);
    const limit = Number(value) * (unit === 's' ? 1000 : 1);
    out.push({ text: item, selector: selector ?? null, metric, op, limit, percent: unit === '%' });
  }
  return out;
}

/** Every scenario whose name starts with `selector`. */
export const selects = (selector: string, names: readonly string[]): string[] => names.filter((n) => n.startsWith(selector));

/** Parses the bench's arguments (process.argv.slice(2)). Never throws: a problem is an `error`. */
export function parseArgs(argv: readonly string[]): Parsed {
  const values = new Map<string, string>();
  let report = false;
  const named: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return { kind: 'help' };
    if (arg === '--') continue;
    if (!arg.startsWith('-')) {
      named.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (name === '--report' && eq < 0) {
      report = true;
      continue;
    }
    if (!WITH_VALUE.has(name)) return { kind: 'error', message: `unknown option ${name}; options: ${OPTIONS.join(', ')} (npm run bench -- --help)` };
    const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') return { kind: 'error', message: `${name} needs a value (npm run bench -- --help)` };
    if (values.has(name)) return { kind: 'error', message: `${name} given twice` };
    values.set(name, value);
  }
  const unknown = named.filter((n) => !NAMES.includes(n));
  if (unknown.length) return { kind: 'error', message: `unknown scenario ${unknown.map((n) => `"${n}"`).join(', ')}; scenarios: ${NAMES.join(', ')}` };

  let target: string | null = null;
  const rawTarget = values.get('--target');
  if (rawTarget !== undefined) {
    let url: URL;
    try {
      url = new URL(rawTarget);
    } catch {
      return { kind: 'error', message: `--target: "${rawTarget}" is not a URL (e.g. http://10.0.0.5:8000)` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return { kind: 'error', message: `--target: ${url.protocol} is not http: or https:` };
    if (url.search || url.hash || url.username || url.password) return { kind: 'error', message: '--target: give the base URL only (no query, fragment or credentials; use --token)' };
    target = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  }
  const token = values.get('--token') ?? null;
  if (token !== null && !target) return { kind: 'error', message: '--token goes with --target (a local service takes writes without one)' };
  if (token !== null && !/^[\x21-\x7e]{1,512}$/.test(token)) return { kind: 'error', message: '--token: printable ASCII without spaces, at most 512 characters' };
  if (report && target) return { kind: 'error', message: '--report writes bench/REPORT.md from a local run; not with --target' };
  let rate: number | null = null;
  const rawRate = values.get('--rate');
  if (rawRate !== undefined) {
    if (!target) return { kind: 'error', message: '--rate goes with --target (the local scenarios set their own loads)' };
    rate = Number(rawRate);
    if (!Number.isInteger(rate) || rate < 1) return { kind: 'error', message: `--rate: "${rawRate}" is not a whole number of requests per second above 0` };
  }

  if (target) {
    const refused = named.map((n) => CATALOGUE.find((s) => s.name === n)!).filter((s) => s.target.mode === 'refused');
    if (refused.length) return { kind: 'error', message: `cannot run against a target: ${refused.map((s) => `${s.name} (${s.target.mode === 'refused' ? s.target.why : ''})`).join('; ')}` };
  }
  const scenarios = CATALOGUE.filter((s) => (named.length ? named.includes(s.name) : !s.onlyWhenNamed && !(target && s.target.mode === 'refused'))).map((s) => s.name);

  let slo: Threshold[] = [];
  const rawSlo = values.get('--slo');
  if (rawSlo !== undefined) {
    try {
      slo = parseSlo(rawSlo);
    } catch (e) {
      return { kind: 'error', message: (e as Error).message };
    }
    for (const t of slo) {
      if (t.selector !== null && selects(t.selector, scenarios).length === 0) return { kind: 'error', message: `--slo: "${t.text}": "${t.selector}" is the start of none of this run's scenarios (${scenarios.join(', ')})` };
    }
  }
  return { kind: 'run', options: { target, token, slo, rate, report, scenarios } };
}

/** The figures of a request row the thresholds read. */
type RowFigures = Pick<Summary, 'label' | 'reqPerSec' | 'p50' | 'p99' | 'p999' | 'errors' | 'non2xx' | 'requests'> & {
  /** Requests sent; rows without it count their answers. */
  sent?: number;
};

/** The figures of the sse scenario (bench/sse.ts SseRow). */
interface SseFigures {
  viewers: number;
  events: number;
  missed: number;
  refused?: number;
  ageP50Ms: number;
  ageP99Ms: number;
}

export interface ReportLike {
  scenarios: Record<string, unknown>;
}

export interface SloResult {
  threshold: string;
  /** Null when the run measured nothing the threshold reads (a breach). */
  measured: number | null;
  /** The measured value in words: the figure, its unit, and where it came from. */
  shown: string;
  pass: boolean;
}

const isRow = (r: unknown): r is RowFigures => !!r && typeof r === 'object' && typeof (r as RowFigures).reqPerSec === 'number' && typeof (r as RowFigures).label === 'string';

/**
 * A scenario's request rows that measure the service: baselines (labels `baseline …`) and rows
 * restating another against a second baseline (`↳ …`) are left out.
 */
export function requestRows(value: unknown): RowFigures[] {
  const rows = Array.isArray(value) ? value : value && typeof value === 'object' && Array.isArray((value as { rows?: unknown }).rows) ? (value as { rows: unknown[] }).rows : [];
  return rows.filter(isRow).filter((r) => !r.label.startsWith('baseline') && !r.label.startsWith('↳'));
}

const sseOf = (value: unknown): SseFigures | null => (value && typeof value === 'object' && typeof (value as SseFigures).viewers === 'number' && typeof (value as SseFigures).ageP99Ms === 'number' ? (value as SseFigures) : null);

const compare = (v: number, op: Op, limit: number): boolean => (op === '<' ? v < limit : op === '<=' ? v <= limit : op === '>' ? v > limit : v >= limit);

const fmt = (n: number): string => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3));

function measure(t: Threshold, rows: RowFigures[], sse: SseFigures[]): { value: number; shown: string } | null {
  if (t.metric === 'p50' || t.metric === 'p99' || t.metric === 'p99.9') {
    const key = t.metric === 'p50' ? 'p50' : t.metric === 'p99' ? 'p99' : 'p999';
    const candidates: [number, string][] = rows.map((r) => [r[key], r.label]);
    // a stream that carried no event measured no age
    if (t.metric !== 'p99.9') for (const s of sse.filter((x) => x.events > 0)) candidates.push([t.metric === 'p50' ? s.ageP50Ms : s.ageP99Ms, `sse event age, ${s.viewers} viewers`]);
    if (!candidates.length) return null;
    const [value, where] = candidates.reduce((a, b) => (b[0] > a[0] ? b : a));
    return { value, shown: `${t.metric} ${fmt(value)} ms (${where})` };
  }
  if (t.metric === 'rps') {
    if (!rows.length) return null;
    const slowest = rows.reduce((a, b) => (b.reqPerSec < a.reqPerSec ? b : a));
    return { value: slowest.reqPerSec, shown: `${fmt(slowest.reqPerSec)} req/s (${slowest.label})` };
  }
  let bad = 0;
  let of = 0;
  for (const r of rows) {
    bad += t.metric === 'errors' ? r.errors : r.non2xx;
    of += r.sent ?? r.requests;
  }
  for (const s of sse) {
    bad += t.metric === 'errors' ? s.missed : (s.refused ?? 0);
    of += t.metric === 'errors' ? s.events * (s.viewers - (s.refused ?? 0)) : s.viewers;
  }
  // nothing sent (or no event to deliver) is no measurement, not a clean one
  if (of === 0) return null;
  const what = t.metric === 'errors' ? (rows.length ? 'errors' : 'missed deliveries') : rows.length ? 'non-2xx' : 'viewers refused';
  if (!t.percent) return { value: bad, shown: `${bad} ${what} of ${of}` };
  const value = (100 * bad) / of;
  return { value, shown: `${fmt(value)}% ${what} (${bad} of ${of})` };
}

/** Each threshold against a finished report: its measured value and whether it holds. */
export function evaluateSlo(thresholds: readonly Threshold[], report: ReportLike): SloResult[] {
  const names = Object.keys(report.scenarios);
  return thresholds.map((t) => {
    const chosen = t.selector === null ? names : selects(t.selector, names);
    const rows = chosen.flatMap((n) => requestRows(report.scenarios[n]));
    // the stream's figures count only where a threshold names it
    const sse = t.selector === null ? [] : chosen.map((n) => sseOf(report.scenarios[n])).filter((s): s is SseFigures => s !== null);
    const m = measure(t, rows, sse);
    if (!m) return { threshold: t.text, measured: null, shown: `no ${t.metric} measured`, pass: false };
    return { threshold: t.text, measured: m.value, shown: m.shown, pass: compare(m.value, t.op, t.limit) };
  });
}

/** The SLO section of the printout: one line per threshold, then the verdict. */
export function formatSlo(results: readonly SloResult[]): string[] {
  const width = Math.max(...results.map((r) => r.threshold.length)) + 2;
  const breached = results.filter((r) => !r.pass).length;
  return [
    '',
    '## SLO',
    ...results.map((r) => `${r.pass ? 'pass' : 'FAIL'}  ${r.threshold.padEnd(width)}${r.shown}`),
    breached ? `SLO: ${breached} of ${results.length} thresholds breached` : `SLO: all ${results.length} thresholds met`,
  ];
}
