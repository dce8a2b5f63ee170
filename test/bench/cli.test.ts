import { expect } from 'chai';
import { evaluateSlo, formatSlo, parseArgs, parseSlo, usage, type Parsed, type RunOptions } from '../../bench/cli.js';
import { CATALOGUE, ENV_VARS, NAMES } from '../../bench/catalogue.js';
import { heldBack } from '../../bench/lib.js';

const run = (p: Parsed): RunOptions => {
  if (p.kind !== 'run') throw new Error(`expected a run, got ${JSON.stringify(p)}`);
  return p.options;
};
const error = (p: Parsed): string => {
  if (p.kind !== 'error') throw new Error(`expected an error, got ${JSON.stringify(p)}`);
  return p.message;
};

describe('bench arguments', () => {
  it('--help or -h anywhere asks for the usage, whatever else is there', () => {
    expect(parseArgs(['--help']).kind).to.equal('help');
    expect(parseArgs(['verdicts', '-h']).kind).to.equal('help');
    expect(parseArgs(['no-such-scenario', '--help']).kind).to.equal('help');
  });

  it('the usage names every option, every scenario with its title, and every environment variable', () => {
    const text = usage();
    for (const option of ['--target', '--token', '--slo', '--rate', '--report', '--help']) expect(text).to.include(option);
    const lines = text.split('\n');
    for (const s of CATALOGUE) expect(lines.find((l) => l.startsWith(`  ${s.name} `)), s.name).to.include(s.title);
    for (const [name] of ENV_VARS) expect(text).to.include(name);
  });

  it('no scenario named: every one but those run only when named; with a target, every one that runs remotely', () => {
    expect(run(parseArgs([])).scenarios).to.deep.equal(NAMES.filter((n) => n !== 'ledger-scale'));
    expect(run(parseArgs(['--target', 'http://h:8000'])).scenarios).to.deep.equal(['http', 'kernels', 'verdicts', 'saturation', 'sse', 'ledger']);
  });

  it('named scenarios run in catalogue order, each once', () => {
    expect(run(parseArgs(['verdicts', 'http', 'verdicts'])).scenarios).to.deep.equal(['http', 'verdicts']);
  });

  it('an unknown scenario is a one-line error listing every valid name', () => {
    const message = error(parseArgs(['verdicts', 'verdict']));
    expect(message).to.include('"verdict"').and.not.include('\n');
    for (const name of NAMES) expect(message).to.include(name);
  });

  it('an unknown option is an error naming the options', () => {
    const message = error(parseArgs(['--targte', 'http://h']));
    expect(message).to.include('--targte').and.include('--target').and.not.include('\n');
    expect(error(parseArgs(['--report=yes']))).to.include('--report');
  });

  it('--target takes the base URL, as a separate argument or after =, without a trailing slash', () => {
    expect(run(parseArgs(['--target', 'http://10.0.0.5:8000/', 'verdicts'])).target).to.equal('http://10.0.0.5:8000');
    expect(run(parseArgs(['--target=https://svc.example/prefix/', 'verdicts'])).target).to.equal('https://svc.example/prefix');
    expect(run(parseArgs(['verdicts'])).target).to.equal(null);
  });

  it('--target refuses what is not an http(s) base URL', () => {
    expect(error(parseArgs(['--target', 'localhost:8000']))).to.include('--target');
    expect(error(parseArgs(['--target', 'ftp://h']))).to.include('ftp:');
    expect(error(parseArgs(['--target', 'http://h/?x=1']))).to.include('base URL');
    expect(error(parseArgs(['--target']))).to.include('needs a value');
  });

  it('a scenario that cannot run remotely is refused with a target, saying why', () => {
    const message = error(parseArgs(['--target', 'http://h', 'verdicts', 'signing']));
    expect(message).to.include('signing').and.include('bench process');
    expect(message).to.not.include('verdicts');
    expect(run(parseArgs(['signing'])).scenarios).to.deep.equal(['signing']);
  });

  it('--token goes with a target only, and must be a header-safe string', () => {
    expect(run(parseArgs(['--target', 'http://h', '--token', 's3cret', 'verdicts'])).token).to.equal('s3cret');
    expect(run(parseArgs(['--target', 'http://h', 'verdicts'])).token).to.equal(null);
    expect(error(parseArgs(['--token', 's3cret', 'verdicts']))).to.include('--target');
    expect(error(parseArgs(['--target', 'http://h', '--token', 'a b']))).to.include('--token');
  });

  it('--rate goes with a target, as a whole number of requests per second', () => {
    expect(run(parseArgs(['--target', 'http://h', '--rate', '250'])).rate).to.equal(250);
    expect(run(parseArgs(['--target', 'http://h'])).rate).to.equal(null);
    expect(error(parseArgs(['--rate', '250']))).to.include('--target');
    expect(error(parseArgs(['--target', 'http://h', '--rate', '0']))).to.include('--rate');
    expect(error(parseArgs(['--target', 'http://h', '--rate', '1.5']))).to.include('--rate');
  });

  it('--report is for local runs', () => {
    expect(run(parseArgs(['--report', 'http'])).report).to.equal(true);
    expect(error(parseArgs(['--report', '--target', 'http://h']))).to.include('--report');
  });

  it('--slo is parsed with the arguments: a malformed one, or one selecting no scenario of the run, is an error', () => {
    expect(run(parseArgs(['--slo', 'verdict.p99<50ms,errors<0.1%', 'verdicts'])).slo.map((t) => t.text)).to.deep.equal(['verdict.p99<50ms', 'errors<0.1%']);
    expect(error(parseArgs(['--slo', 'verdict.p99 under 50ms', 'verdicts']))).to.include('verdict.p99 under 50ms');
    expect(error(parseArgs(['--slo', 'kernels.p99<50ms', 'verdicts']))).to.include('kernels').and.include('verdicts');
    expect(error(parseArgs(['--slo', 'verdict.p99<1ms', '--slo', 'errors<1%']))).to.include('twice');
  });
});

describe('SLO thresholds', () => {
  it('reads scenario prefix, metric, comparison and limit, latencies in ms', () => {
    expect(parseSlo('verdict.p99<50ms')).to.deep.equal([{ text: 'verdict.p99<50ms', selector: 'verdict', metric: 'p99', op: '<', limit: 50, percent: false }]);
    const [a, b, c, d, e] = parseSlo('verdict.p99.9 <= 0.2s, p99.9<7, rps>1500, errors<0.1%, ledger-scale.non2xx<=3');
    expect(a).to.include({ selector: 'verdict', metric: 'p99.9', op: '<=', limit: 200 });
    expect(b).to.include({ selector: null, metric: 'p99.9', limit: 7 });
    expect(c).to.include({ selector: null, metric: 'rps', op: '>', limit: 1500 });
    expect(d).to.include({ metric: 'errors', limit: 0.1, percent: true });
    expect(e).to.include({ selector: 'ledger-scale', metric: 'non2xx', op: '<=', limit: 3, percent: false });
  });

  it('refuses a malformed threshold or a unit the metric does not have', () => {
    for (const bad of ['', 'verdict.p99', 'verdict.p98<5ms', 'p99=5ms', 'p99<5%', 'rps>100ms', 'rps>5%', 'errors<5ms', 'p99<-1ms', 'verdict.p99<50ms,']) {
      expect(() => parseSlo(bad), bad).to.throw(/--slo/);
    }
  });

  const row = (label: string, f: Partial<{ reqPerSec: number; p50: number; p99: number; p999: number; errors: number; non2xx: number; requests: number; sent: number }>) => ({
    label,
    reqPerSec: 1000,
    p50: 1,
    p99: 2,
    p999: 3,
    errors: 0,
    non2xx: 0,
    requests: 1000,
    sent: 1000,
    ...f,
  });
  const report = {
    scenarios: {
      verdicts: [
        row('baseline koa+router hello (before)', { p99: 500, errors: 900, reqPerSec: 1 }),
        row('POST /api/svc/v1/verdict', { p99: 40, p50: 5, reqPerSec: 1200, errors: 1, sent: 1000 }),
        row('POST /api/svc/v1/verdict, 200 connections', { p99: 45.5, p999: 80, reqPerSec: 1500, non2xx: 4, sent: 1000 }),
        row('↳ POST /verdict against the Koa route', { p99: 900, errors: 900 }),
      ],
      http: [row('GET /api/svc/v1/health', { p99: 3, reqPerSec: 9000, errors: 0, sent: 2000 })],
      ledger: { rows: [row('GET /receipt/proof?index=<random>', { p99: 70, reqPerSec: 800 })], checkpointSize: 512 },
      sse: { viewers: 100, refused: 10, events: 50, missed: 9, ageP50Ms: 4, ageP99Ms: 30 },
    },
  };
  const check = (slo: string) => evaluateSlo(parseSlo(slo), report);

  it('a latency threshold takes the slowest row of the scenarios its prefix names, baselines and restated rows left out', () => {
    const [pass, breach] = check('verdict.p99<50ms,verdict.p99<45ms');
    expect(pass).to.include({ measured: 45.5, pass: true });
    expect(pass!.shown).to.include('200 connections');
    expect(breach).to.include({ measured: 45.5, pass: false });
    expect(check('verdict.p99.9<=80ms')[0]).to.include({ measured: 80, pass: true });
    expect(check('verdict.p50<0.005s')[0]).to.include({ measured: 5, pass: false });
  });

  it('a rate threshold takes the slowest matching row', () => {
    expect(check('verdict.rps>1100')[0]).to.include({ measured: 1200, pass: true });
    expect(check('verdict.rps>=1300')[0]).to.include({ measured: 1200, pass: false });
  });

  it('errors and non-2xx are summed over the matching rows: a share of the requests sent with %, else a count', () => {
    expect(check('verdict.errors<0.1%')[0]).to.include({ measured: 0.05, pass: true });
    expect(check('verdict.errors<0.04%')[0]).to.include({ measured: 0.05, pass: false });
    expect(check('verdict.non2xx<=4')[0]).to.include({ measured: 4, pass: true });
    expect(check('verdict.non2xx<4')[0]).to.include({ measured: 4, pass: false });
  });

  it('a threshold without a prefix covers every request row of the run', () => {
    // 1 error in 1000 + 1000 + 2000 + 1000 requests sent
    expect(check('errors<0.03%')[0]).to.include({ measured: 0.02, pass: true });
    expect(check('p99<60ms')[0]).to.include({ measured: 70, pass: false });
    expect(check('rps>700')[0]).to.include({ measured: 800, pass: true });
  });

  it('the sse scenario: event age for latency, missed deliveries and refused viewers for errors', () => {
    expect(check('sse.p99<40ms')[0]).to.include({ measured: 30, pass: true });
    // 9 missed of 50 events × 90 viewers connected
    expect(check('sse.errors<0.1%')[0]).to.include({ measured: 0.2, pass: false });
    expect(check('sse.non2xx<=10')[0]).to.include({ measured: 10, pass: true });
  });

  it('a threshold with nothing measured is a breach, not a pass', () => {
    const quiet = { scenarios: { sse: { viewers: 10, refused: 0, events: 0, missed: 0, ageP50Ms: 0, ageP99Ms: 0 }, verdicts: [] } };
    const results = evaluateSlo(parseSlo('sse.p99<1s,sse.errors<1%,verdict.p99<1s,sse.rps>1'), quiet);
    expect(results.map((r) => [r.measured, r.pass])).to.deep.equal([
      [null, false],
      [null, false],
      [null, false],
      [null, false],
    ]);
  });

  it('prints each threshold with its measured value and pass or FAIL, then the count breached', () => {
    const lines = formatSlo(check('verdict.p99<50ms,errors<0.01%'));
    expect(lines.find((l) => l.includes('verdict.p99<50ms'))).to.match(/^pass .*45\.50 ms/);
    expect(lines.find((l) => l.includes('errors<0.01%'))).to.match(/^FAIL .*0\.0200% errors \(1 of 5000\)/);
    expect(lines.at(-1)).to.equal('SLO: 1 of 2 thresholds breached');
  });
});

describe('fixed-rate latency correction', () => {
  it('an answer slower than its interval adds the latencies of the requests it held back', () => {
    expect(heldBack(35, 10)).to.deep.equal([25, 15]);
    expect(heldBack(20, 10)).to.deep.equal([10]);
    expect(heldBack(19.9, 10)).to.deep.equal([]);
    expect(heldBack(3, 10)).to.deep.equal([]);
  });
});
