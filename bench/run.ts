/**
 * `npm run bench -- [options] [scenario …]`: the scenarios locally (the service built and started
 * here, against baselines measured in the same run) or against a running deployment (--target),
 * a table per scenario, the report in bench/results/*.json, and the --slo thresholds checked
 * against it. `npm run bench -- --help` lists options, scenarios and environment variables.
 * Arguments are checked before anything is built, loaded or started.
 */
import { spawnSync } from 'node:child_process';
import { EXIT_BREACH, EXIT_USAGE, evaluateSlo, formatSlo, parseArgs, usage, type SloResult } from './cli.js';

const parsed = parseArgs(process.argv.slice(2));
if (parsed.kind === 'help') {
  process.stdout.write(usage());
  process.exit(0);
}
if (parsed.kind === 'error') {
  process.stderr.write(`bench: ${parsed.message}\n`);
  process.exit(EXIT_USAGE);
}
const options = parsed.options;

const { environment, saveReport } = await import('./lib.js');
const report: { environment: Record<string, unknown>; scenarios: Record<string, unknown>; slo?: SloResult[] } = {
  environment: { ...environment(options.target), ...(options.target ? { token: options.token ? 'sent, not recorded' : 'none', rate_per_s: options.rate } : {}) },
  scenarios: {},
};
try {
  if (options.target) {
    const { runTarget } = await import('./target.js');
    await runTarget({ base: options.target, token: options.token, rate: options.rate }, options.scenarios, report.scenarios);
  } else {
    // the service runs from the build, as in production (a target needs none)
    const build = spawnSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
    if (build.status !== 0) throw new Error(`npm run build exited with ${build.status ?? build.signal}`);
    const { runLocal } = await import('./local.js');
    await runLocal(options.scenarios, report.scenarios);
  }
} catch (e) {
  process.stderr.write(`bench: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
}
if (options.slo.length) {
  report.slo = evaluateSlo(options.slo, report);
  for (const line of formatSlo(report.slo)) console.log(line);
}
console.log(`\nreport: ${saveReport('bench', report)}`);
if (options.report) {
  const { writeReportMarkdown } = await import('./report.js');
  const { writeGoals } = await import('./write-goals.js');
  console.log(`markdown: ${writeReportMarkdown(report)}`);
  console.log(`goals: ${writeGoals()}`);
}
process.exit(report.slo?.some((r) => !r.pass) ? EXIT_BREACH : 0);
