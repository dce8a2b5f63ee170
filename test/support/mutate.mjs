// `npm run mutate -- <file...> [--spec <glob,...>] [--grep <pattern>] [--concurrency N] [--exclude Mutator,...] [--timeout MS] [--cache NAME] [--force]`:
// StrykerJS on the given source files, under Node 24 from the npm registry (StrykerJS 10 refuses Node < 22; this repo runs on 20).
// Without --spec the tests are narrowed from the files: a kernel's own test file for
// workers/kernels/*.ts, the lib and kernel tests for workers/lib/*.ts, test/<area>/ for
// src/<area>/*.ts, else the whole suite (the registry test is left out: its wall-clock budget
// fails under Stryker's instrumentation). The dry run then measures per-test coverage, so each mutant runs only the tests that reach it.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

const args = process.argv.slice(2);
const files = [];
let spec;
let concurrency = '2';
let exclude = '';
let force = false;
let timeout = '';
let grep = '';
let cache = '';
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--spec') spec = args[++i];
  else if (args[i] === '--concurrency') concurrency = args[++i];
  else if (args[i] === '--exclude') exclude = args[++i];
  else if (args[i] === '--timeout') timeout = args[++i];
  else if (args[i] === '--grep') grep = args[++i];
  else if (args[i] === '--cache') cache = args[++i];
  else if (args[i] === '--force') force = true;
  else files.push(args[i]);
}
if (!files.length) {
  console.error('usage: npm run mutate -- <file...> [--spec <glob,...>] [--grep <pattern>] [--concurrency N] [--exclude Mutator,...] [--timeout MS] [--cache NAME] [--force]');
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
  // src/<area>/… → test/<area>/ when that folder exists
  const area = /^src\/([^/]+)\//.exec(file)?.[1];
  if (area && existsSync(`test/${area}`)) return [`test/${area}/**/*.test.ts`];
  return ['test/**/*.test.ts'];
}
spec ??= [...new Set(files.flatMap(specFor))].join(',');

// StrykerJS 10's instrumenter crashes on an update of a non-null assertion (`a[i]!++`,
// TSNonNullExpression): such lines are left out with Stryker's line ranges, and reported here.
function ranges(file) {
  if (file.includes('*')) return [file];
  const lines = readFileSync(file, 'utf8').split('\n');
  const bad = lines.flatMap((l, i) => (/!\s*(\+\+|--)|(\+\+|--)\s*[\w.[\]]+!/.test(l) ? [i + 1] : []));
  if (!bad.length) return [file];
  console.error(`  ${file}: lines ${bad.join(', ')} not mutated (x!++ crashes the instrumenter)`);
  const out = [];
  let start = 1;
  for (const b of [...bad, lines.length + 1]) {
    if (b > start) out.push(`${file}:${start}-${b - 1}`);
    start = b + 1;
  }
  return out;
}
const mutate = files.flatMap(ranges);

const env = { ...process.env, MUTATE_SPEC: spec, MUTATE_CONCURRENCY: concurrency, MUTATE_EXCLUDE: exclude, MUTATE_TIMEOUT_MS: timeout, MUTATE_GREP: grep, MUTATE_CACHE: cache };
console.error(`mutate: ${files.join(' ')}\n  tests: ${spec}`);
const r = spawnSync(
  'npx',
  ['-y', '-p', 'node@24', '--', 'node', 'node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'stryker.config.mjs', '--mutate', mutate.join(','), ...(force ? ['--force'] : [])],
  { stdio: 'inherit', env },
);
process.exit(r.status ?? 1);
