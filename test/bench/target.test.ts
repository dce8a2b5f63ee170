import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killService, startService, type ServiceProcess } from '../helpers/service-process.js';

const TOKEN = 'bench-e2e-token';

interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The bench's entry (what `npm run bench` runs) to its exit. */
function bench(args: string[], env: Record<string, string>): Promise<Exit> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

interface SavedReport {
  environment: Record<string, unknown>;
  scenarios: { verdicts?: { label: string; requests: number; status: Record<string, number> }[] };
  slo?: { threshold: string; measured: number | null; pass: boolean }[];
}

describe('the bench CLI against a running service (--target)', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  let svc: ServiceProcess;
  let results: string;
  let env: Record<string, string>;
  const reports = (): SavedReport[] =>
    readdirSync(results).map((f) => JSON.parse(readFileSync(join(results, f), 'utf8')) as SavedReport);

  before(async () => {
    // writes need the token: a bench that did not send it would get 401s
    svc = await startService({ SVC_WRITE_TOKENS: TOKEN });
    results = mkdtempSync(join(tmpdir(), 'bench-results-'));
    env = { BENCH_DURATION: '1', BENCH_CONNECTIONS: '4', BENCH_RESULTS_DIR: results };
  });

  after(async () => {
    await killService(svc);
    rmSync(results, { recursive: true, force: true });
  });

  it('usage errors exit 2 with one line and start nothing; --help exits 0', async () => {
    const [refused, unknown, malformed, help] = await Promise.all([
      bench(['--target', svc.base, 'overload'], env),
      bench(['--target', svc.base, 'verdict'], env),
      bench(['--target', svc.base, '--slo', 'verdict.p99<fast', 'verdicts'], env),
      bench(['--help'], env),
    ]);
    for (const r of [refused, unknown, malformed]) {
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr.trim().split('\n'), r.stderr).to.have.length(1);
      expect(r.stdout).to.equal('');
    }
    expect(refused.stderr).to.include('overload');
    expect(unknown.stderr).to.include('verdicts, saturation');
    expect(help.code).to.equal(0);
    expect(help.stdout).to.include('--target URL').and.include('BENCH_DURATION');
    expect(readdirSync(results)).to.deep.equal([]);
  });

  it('loads POST /verdict with the token: exit 0 when every threshold holds, 1 when one is breached', async () => {
    // both at once: the lenient thresholds hold on a shared machine, and the test takes one run's time
    const [met, breached] = await Promise.all([
      bench(['--target', svc.base, '--token', TOKEN, '--slo', 'verdict.p99<30s,verdict.non2xx<1%,errors<1%,verdict.rps>1', 'verdicts'], env),
      bench(['--target', svc.base, '--token', TOKEN, '--slo', 'verdict.p99<0.001ms,verdict.rps>1', 'verdicts'], env),
    ]);
    expect(met.code, met.stdout + met.stderr).to.equal(0);
    expect(met.stdout).to.match(/^POST \/api\/svc\/v1\/verdict +\d+/m);
    expect(met.stdout).to.match(/^pass +verdict\.non2xx<1% +0\.00% non-2xx \(0 of [1-9]\d*\)$/m);
    expect(met.stdout).to.include('SLO: all 4 thresholds met');

    expect(breached.code, breached.stdout + breached.stderr).to.equal(1);
    expect(breached.stdout).to.match(/^FAIL +verdict\.p99<0\.001ms +p99 [\d.]+ ms/m);
    expect(breached.stdout).to.match(/^pass +verdict\.rps>1 /m);

    const first = reports().find((r) => r.slo!.length === 4);
    const second = reports().find((r) => r.slo!.length === 2);
    expect(first!.environment.target).to.equal(svc.base);
    expect(JSON.stringify(first)).to.not.include(TOKEN);
    const posted = first!.scenarios.verdicts!;
    expect(posted.map((r) => r.label)).to.deep.equal(['POST /api/svc/v1/verdict', 'POST /api/svc/v1/verdict, 16 connections']);
    for (const r of posted) expect(r.status).to.deep.equal({ 200: r.requests });
    expect(first!.slo!.every((s) => s.pass)).to.equal(true);
    expect(second!.slo![0]).to.include({ threshold: 'verdict.p99<0.001ms', pass: false });
    expect(second!.slo![0]!.measured).to.be.greaterThan(0.001);
  });
});
