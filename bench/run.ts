/**
 * `npm run bench`: every scenario against baselines measured in the same run. Prints a table and
 * writes bench/results/*.json. Scenario names on the command line run a subset:
 *   npm run bench -- http kernels saturation
 * BENCH_DURATION (s, default 10) and BENCH_CONNECTIONS (default 50) tune every run.
 */
import { SCENARIOS } from './scenarios.js';
import { environment, printTable, saveReport, startServer, type Server, type Summary } from './lib.js';

const wanted = process.argv.slice(2);
const chosen = SCENARIOS.filter((s) => wanted.length === 0 || wanted.includes(s.name));

const koa = await startServer('koa-hello', ['--import', 'tsx', 'bench/servers/koa-hello.ts'], '/hello');
const bare = await startServer('http-hello', ['--import', 'tsx', 'bench/servers/http-hello.ts'], '/');
// the service runs from the compiled build, as in production
const svc: Server = await startServer('service', ['dist/src/main.js'], '/api/svc/v1/health');
const report: Record<string, unknown> = { environment: environment(), scenarios: {} };
try {
  for (const scenario of chosen) {
    const rows: (Summary & { ratio?: number; vs?: string })[] = await scenario.run({ koa, bare, svc });
    printTable(`${scenario.name}: ${scenario.title}`, rows);
    (report.scenarios as Record<string, unknown>)[scenario.name] = rows;
  }
} finally {
  await Promise.all([koa.stop(), bare.stop(), svc.stop()]);
}
console.log(`\nreport: ${saveReport('bench', report)}`);
