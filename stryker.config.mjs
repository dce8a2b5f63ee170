// StrykerJS configuration: `npm run mutate -- <files...>` (see test/MUTATION.md). Not part of `npm test`.
// StrykerJS 10 needs Node >= 22: test/support/mutate.mjs runs it under Node 24 from the npm registry.
// mutate.mjs --cache NAME gives a run its own sandbox, incremental file and reports, so two runs can share a checkout
const CACHE = `node_modules/.cache/${process.env.MUTATE_CACHE || 'stryker'}`;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  packageManager: 'npm',
  testRunner: 'mocha',
  // mocha 11 (the mocha runner 10 loads mocha/lib/cli/run-helpers, renamed in mocha 12); TS through tsx
  testRunnerNodeArgs: ['--import', 'tsx'],
  mochaOptions: {
    config: '.mocharc.json',
    // test/support/mutate.mjs narrows this with --spec when it knows which tests reach a file
    spec: (process.env.MUTATE_SPEC ?? 'test/**/*.test.ts').split(','),
    // mutate.mjs --grep: only the tests whose title matches (e.g. a file's in-process blocks, not its child-process ones)
    ...(process.env.MUTATE_GREP ? { grep: process.env.MUTATE_GREP } : {}),
  },
  // each mutant runs only the tests that reached its code in the dry run
  coverageAnalysis: 'perTest',
  // re-runs test only mutants in changed code or reached by changed tests
  incremental: true,
  incrementalFile: `${CACHE}/incremental.json`,
  tempDirName: `${CACHE}/tmp`,
  cleanTempDir: true,
  // TS is executed by tsx, never type-checked in the sandbox: Stryker adds // @ts-nocheck itself
  disableTypeChecks: '{src,workers,test}/**/*.ts',
  checkers: [],
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 2),
  timeoutFactor: 2,
  // a mutant that loops for ever costs this much on top of twice its tests' dry-run time; kernel
  // tests that run in under a second can take --timeout 4000 (mutate.mjs) on a quiet machine
  timeoutMS: Number(process.env.MUTATE_TIMEOUT_MS || 10000),
  reporters: ['clear-text', 'progress-append-only', 'json', 'html'],
  jsonReporter: { fileName: `${CACHE}/mutation.json` },
  htmlReporter: { fileName: `${CACHE}/mutation.html` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0, reportScoreTable: true },
  thresholds: { high: 85, low: 75, break: null },
  mutator: {
    // Noise only: these mutate messages, labels and log text (a changed error string is not a wrong
    // answer) or produce `{}` / `[]` stand-ins for option bags whose absence is equivalent.
    // MUTATE_EXCLUDE (mutate.mjs --exclude A,B) adds more for one run, e.g. UpdateOperator on files
    // where StrykerJS 10's instrumenter crashes on `a[i]!++` (TSNonNullExpression in an update).
    excludedMutations: ['StringLiteral', 'ObjectLiteral', 'Regex', ...(process.env.MUTATE_EXCLUDE ? process.env.MUTATE_EXCLUDE.split(',') : [])],
  },
  ignoreStatic: true,
  ignorePatterns: ['dist', 'coverage', 'bench/results', '*.log'],
};
