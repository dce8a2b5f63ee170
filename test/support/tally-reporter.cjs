// The spec reporter plus one plain closing line, `N passed, N failed, N skipped`, that CI reads
// as the pass count. CommonJS: mocha 11 (kept for StrykerJS's mocha runner) loads reporters with
// require(), which would hand it an ES module's namespace instead of the class.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS reporter
const Mocha = require('mocha');

const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class TallyReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      process.stdout.write(`\n${s.passes} passed, ${s.failures} failed, ${s.pending} skipped\n`);
    });
  }
}

module.exports = TallyReporter;
