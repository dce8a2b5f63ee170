/**
 * The build: tsc (tsconfig.build.json) into dist/, the UI bundles into dist/ui, then the stamp
 * that records which inputs they were built from (build-inputs.ts).
 *   npm run build        builds
 *   npm start            (prestart) `--if-stale`: builds only when dist/ is missing, incomplete or older than its inputs
 * Exit 0 when dist/ is current; otherwise the failing step's exit code.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { inputFiles, inputsDigest, removeStamp, staleReason, writeStamp } from './build-inputs.js';

/** One step, run as `node <args…>` in the project root. */
export interface BuildStep {
  name: string;
  args: string[];
}

export function buildSteps(root: string): BuildStep[] {
  const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
  return [
    { name: 'tsc', args: [tsc, '-p', 'tsconfig.build.json'] },
    { name: 'ui', args: ['dist/src/ui/build.js'] },
  ];
}

export interface BuildOptions {
  /** Skip the build when dist/ is current. */
  ifStale: boolean;
  steps?: BuildStep[];
  /** Where the one-line account of what was done goes. */
  say?: (line: string) => void;
}

export interface BuildOutcome {
  built: boolean;
  /** 0, or the exit code of the step that failed. */
  code: number;
  ms: number;
}

function sayOnStdout(line: string): void {
  process.stdout.write(`build: ${line}\n`);
}

export function build(root: string, { ifStale, steps = buildSteps(root), say = sayOnStdout }: BuildOptions): BuildOutcome {
  const started = performance.now();
  const since = (): number => performance.now() - started;
  // the digest is taken before any step runs: a file saved while tsc runs leaves the stamp behind the tree, so the next start builds again
  const files = inputFiles(root);
  const digest = inputsDigest(root, files);
  const reason = staleReason(root, files, digest);
  if (ifStale && reason === null) {
    say(`dist/ is current (${files.length} inputs, sha256 ${digest.slice(0, 12)}, checked in ${Math.round(since())} ms): not rebuilding`);
    return { built: false, code: 0, ms: since() };
  }
  say(ifStale ? `${reason}: building` : 'building');
  removeStamp(root);
  const timings: string[] = [];
  for (const step of steps) {
    const stepStarted = performance.now();
    const run = spawnSync(process.execPath, step.args, { cwd: root, stdio: 'inherit' });
    if (run.status !== 0) {
      say(`${step.name} failed (${run.error?.message ?? (run.signal ? `signal ${run.signal}` : `exit ${run.status}`)}); dist/ is not marked current`);
      return { built: false, code: run.status || 1, ms: since() };
    }
    timings.push(`${step.name} ${((performance.now() - stepStarted) / 1000).toFixed(1)} s`);
  }
  writeStamp(root, digest, files.length, since());
  say(`done in ${(since() / 1000).toFixed(1)} s (${timings.join(', ')})`);
  return { built: true, code: 0, ms: since() };
}

/** The project root: the nearest folder above this file holding tsconfig.build.json (src/cli or dist/src/cli). */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'tsconfig.build.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`tsconfig.build.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

// `node --import tsx src/cli/build.ts [--if-stale]` (npm run build, npm start)
if (process.argv[1] && /[/\\]cli[/\\]build\.(js|ts)$/.test(process.argv[1])) {
  let ifStale = false;
  try {
    ifStale = parseArgs({ options: { 'if-stale': { type: 'boolean' } }, strict: true }).values['if-stale'] === true;
  } catch (err) {
    process.stderr.write(`build: ${(err as Error).message}\nusage: node --import tsx src/cli/build.ts [--if-stale]\n`);
    process.exit(2);
  }
  process.exitCode = build(projectRoot(), { ifStale }).code;
}
