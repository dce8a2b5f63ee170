// `npm run test:stress -- [--runs N] [--factor F] [--spec <file|glob>]... [-- <mocha options>]`:
// the test suite (npm test's mocha part) on a deliberately loaded machine. It starts F busy-loop
// processes per core (default 5, so a load average of about 5× the cores before the suite's own
// work), runs mocha, stops the load and exits with mocha's code. `--runs N` repeats the suite and
// stops at the first failing run. Each run prints mocha's tally, its wall time and the 1-minute
// load average seen while it ran (sampled every 5 s), so a pass is known to have been under load.
import { spawn } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);
/** The mocha process of the run under way, for the signal handlers to pass a signal on to. */
let current = null;

/** A busy loop that yields for 1 ms every 50 ms: runnable ~98 % of the time, yet it still sees its parent go. */
function busy() {
  const parent = process.ppid;
  const spin = () => {
    const until = performance.now() + 50;
    while (performance.now() < until);
    // an orphan (the runner killed with SIGKILL) must not spin on forever
    if (process.ppid !== parent) process.exit(0);
    setTimeout(spin, 1);
  };
  spin();
}

if (process.argv[2] === '--busy') {
  busy();
} else {
  await main();
}

function usage(message) {
  if (message) console.error(message);
  console.error('usage: npm run test:stress -- [--runs N] [--factor F] [--spec <file|glob>]... [-- <mocha options>]');
  process.exit(2);
}

function parse(argv) {
  const o = { runs: 1, factor: 5, specs: [], mocha: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { o.mocha = argv.slice(i + 1); break; }
    if (a === '--help' || a === '-h') usage();
    const value = argv[++i];
    if (value === undefined) usage(`${a} needs a value`);
    if (a === '--runs') o.runs = Number(value);
    else if (a === '--factor') o.factor = Number(value);
    else if (a === '--spec') o.specs.push(value);
    else usage(`unknown option ${a}`);
  }
  if (!Number.isInteger(o.runs) || o.runs < 1) usage('--runs takes a whole number ≥ 1');
  if (!Number.isFinite(o.factor) || o.factor < 0) usage('--factor takes a number ≥ 0');
  if (!o.specs.length) o.specs.push('test/**/*.test.ts');
  return o;
}

/** Samples the 1-minute load average every 5 s (the kernel's own update period) until stopped. */
function sampleLoad() {
  const samples = [];
  const take = () => samples.push(loadavg()[0]);
  const timer = setInterval(take, 5000);
  return () => {
    clearInterval(timer);
    take();
    // the first minute is the average still rising towards the load, so it is reported apart
    const settled = samples.length > 12 ? samples.slice(12) : samples;
    const mean = settled.reduce((s, x) => s + x, 0) / settled.length;
    return { mean, min: Math.min(...settled), max: Math.max(...samples), n: samples.length, span: samples.length > 12 ? 'after its first minute' : 'over the run' };
  };
}

function runMocha(specs, extra) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['node_modules/mocha/bin/mocha.js', ...specs, ...extra], { stdio: 'inherit' });
    child.once('exit', (code, signal) => resolve({ child, code: code ?? (signal ? 1 : 0) }));
    current = child;
  });
}

async function main() {
  const o = parse(process.argv.slice(2));
  const cores = availableParallelism();
  const count = Math.round(cores * o.factor);
  const loaders = Array.from({ length: count }, () => spawn(process.execPath, [SELF, '--busy'], { stdio: 'ignore' }));
  const stopLoad = () => { for (const l of loaders) if (l.exitCode === null) l.kill('SIGKILL'); };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      stopLoad();
      current?.kill(sig);
      process.exit(130);
    });
  }
  process.once('exit', stopLoad);
  console.log(`stress: ${count} busy processes on ${cores} cores (${o.factor} per core); the 1-minute load average is ${loadavg()[0].toFixed(1)} at the start`);
  const results = [];
  let code = 0;
  for (let run = 1; run <= o.runs; run++) {
    console.log(`\n== stress run ${run} of ${o.runs}: mocha ${[...o.specs, ...o.mocha].join(' ')}`);
    const stop = sampleLoad();
    const started = performance.now();
    ({ code } = await runMocha(o.specs, o.mocha));
    const seconds = (performance.now() - started) / 1000;
    const load = stop();
    results.push({ run, code, seconds, load });
    console.log(`== stress run ${run}: mocha exited ${code} after ${seconds.toFixed(0)} s; 1-minute load average ${load.span}: mean ${load.mean.toFixed(1)}, min ${load.min.toFixed(1)}, max ${load.max.toFixed(1)} (${load.n} samples; target ≥ ${(o.factor * cores).toFixed(0)})`);
    if (code !== 0) break;
  }
  stopLoad();
  const passed = results.filter((r) => r.code === 0).length;
  console.log(`\nstress: ${passed} of ${results.length} run(s) passed${code !== 0 ? ` (stopped at run ${results.length})` : ''} under ${count} busy processes on ${cores} cores`);
  process.exit(code);
}
