// `npm run test:unit`: the in-process test files only (see unit-set.cjs), same options as .mocharc.json.
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS config
const { unitFiles } = require('./unit-set.cjs');

module.exports = {
  'node-option': ['import=tsx'],
  extension: ['ts'],
  timeout: 120000,
  reporter: './test/support/tally-reporter.cjs',
  spec: unitFiles(),
};
