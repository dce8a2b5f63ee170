// `npm run mutate -- <file...> [--spec <glob,...>] [--concurrency N]`: StrykerJS on the given source
// files, under Node 24 from the npm registry (StrykerJS 10 refuses Node < 22; this repo runs on 20).
// Without --spec the tests are narrowed from the files: a kernel's own test file for
// workers/kernels/*.ts, the lib and kernel tests for workers/lib/*.ts, else the whole suite (the
// registry test is left out: its wall-clock budget fails under Stryker's instrumentation). The
// dry run then measures per-test coverage, so each mutant runs only the tests that reach it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const files = [];
let spec;
let concurrency = '2';
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--spec') spec = args[++i];
  else if (args[i] === '--concurrency') concurrency = args[++i];
  else files.push(args[i]);
}
if (!files.length) {
  console.error('usage: npm run mutate -- <file...> [--spec <glob,...>] [--concurrency N]');
  process.exit(2);
}
for (const f of files) if (!f.includes('*') && !existsSync(f)) { console.error(`no such file: ${f}`); process.exit(2); }

function specFor(file) {
  const m = /^workers\/kernels\/(.+)\.ts$/.exec(file);
  if (m) {
    const own = `test/workers/kernels/${basename(m[1]).replace(/-params$/, '')}.test.ts`;
    return [existsSync(own) ? own : 'test/workers/kernels/*.test.ts'];
  }
  if (file.startsWith('workers/lib/')) return ['test/workers/lib/*.test.ts', 'test/workers/kernels/*.test.ts'];
  return ['test/**/*.test.ts'];
}
spec ??= [...new Set(files.flatMap(specFor))].join(',');

const env = { ...process.env, MUTATE_SPEC: spec, MUTATE_CONCURRENCY: concurrency };
console.error(`mutate: ${files.join(' ')}\n  tests: ${spec}`);
const r = spawnSync(
  'npx',
  ['-y', '-p', 'node@24', '--', 'node', 'node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'stryker.config.mjs', '--mutate', files.join(',')],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
