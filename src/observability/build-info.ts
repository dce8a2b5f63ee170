/**
 * What build is running, for `svc_build_info`: the package version, the Node version, and the git
 * commit. The commit is read once per process: `git rev-parse HEAD` in the project root when it is
 * a git checkout of its own (a clone, dev, tests, `npm start` after a pull), else `SOURCE_COMMIT`
 * (set by the image build or the platform: an image has no .git), else `unknown`. A missing git,
 * a checkout git refuses, or a malformed variable never stops the start.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../config/load.js';

export interface BuildInfo {
  version: string;
  commit: string;
  node: string;
}

/** Hex object names: abbreviated (7+) up to SHA-256 repositories' 64. */
const COMMIT = /^[0-9a-f]{7,64}$/;

/** HEAD of the checkout rooted exactly at `root` (not a repository further up that happens to contain it), or null. */
export function gitCommit(root: string): string | null {
  try {
    const out = execFileSync('git', ['rev-parse', '--show-toplevel', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 2000 });
    const [top, head] = out.trim().split('\n');
    return top && head && realpathSync(top) === realpathSync(root) && COMMIT.test(head) ? head : null;
  } catch {
    return null;
  }
}

/** The commit named by the environment, lower-cased, or null when unset or not a hex object name. */
export function envCommit(env: NodeJS.ProcessEnv): string | null {
  const v = env.SOURCE_COMMIT?.trim().toLowerCase();
  return v && COMMIT.test(v) ? v : null;
}

export function readBuildInfo(root: string, env: NodeJS.ProcessEnv): BuildInfo {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { version, commit: gitCommit(root) ?? envCommit(env) ?? 'unknown', node: process.version };
}

// a fact about the process, read once: tests build many apps, and git costs a few ms per call
let cached: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  return (cached ??= readBuildInfo(projectRoot(), process.env));
}
