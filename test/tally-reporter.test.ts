import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '../..');

/** Runs mocha with the project's reporter on one fixture, with an exit grace of `graceMs`. */
function runMocha(fixture: string, graceMs: number): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/mocha/bin/mocha.js'), '--no-config', '--node-option', 'import=tsx', '--reporter', join(ROOT, 'test/support/tally-reporter.cjs'), join(ROOT, 'test/fixtures/mocha', fixture)], {
    cwd: ROOT,
    env: { ...process.env, MOCHA_EXIT_GRACE_MS: String(graceMs) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - t0 })));
}

describe('the test reporter (test/support/tally-reporter.cjs)', function () {
  // runs mocha under tsx in a child: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);

  it('prints the pass count and exits 0 when nothing is left open', async () => {
    // a grace a loaded machine cannot outrun (tsx's teardown alone may take seconds there); a process held open still fails, later
    const r = await runMocha('exits.fixture.ts', 120_000);
    expect(r.stdout).to.contain('\n1 passed, 0 failed, 0 skipped\n');
    expect(r.stderr).to.not.contain('still running');
    expect(r.code).to.equal(0);
  });

  it('fails a run whose process is still held open after the last test, naming what holds it', async () => {
    const r = await runMocha('leaks-a-timer.fixture.ts', 300);
    expect(r.stdout).to.contain('\n1 passed, 0 failed, 0 skipped\n');
    expect(r.stderr).to.match(/the test process was still running 0\.3 s after the last test; open: .*Timeout/);
    expect(r.code).to.equal(1);
  });
});
