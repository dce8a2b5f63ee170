// The spec reporter plus one plain closing line, `N passed, N failed, N skipped`, that CI reads
// as the pass count. CommonJS: mocha 11 (kept for StrykerJS's mocha runner) loads reporters with
// require(), which would hand it an ES module's namespace instead of the class.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS reporter
const Mocha = require('mocha');

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;
// how long after the last test the process may take to exit by itself (overridable to test the guard)
const EXIT_GRACE_MS = Number(process.env.MOCHA_EXIT_GRACE_MS ?? 60_000);

class TallyReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      process.stdout.write(`\n${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
      // mocha exits once nothing is left open; a test that leaves a loop or a socket behind would
      // otherwise hold CI until its wall-clock limit, so name what is open and fail instead
      setTimeout(() => {
        process.stderr.write(`the test process was still running ${EXIT_GRACE_MS / 1000} s after the last test; open: ${process.getActiveResourcesInfo().join(', ')}\n`);
        // mocha sets the exit code from the failure count in its own exit listener; this one runs after it
        const code = Math.min(Math.max(s.failures, 1), 255);
        process.on('exit', () => (process.exitCode = code));
        process.exit(code);
      }, EXIT_GRACE_MS).unref();
    });
  }
}

module.exports = TallyReporter;
