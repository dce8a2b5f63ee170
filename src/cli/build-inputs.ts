/**
 * What `npm run build` reads and what it must leave behind. A build that succeeds writes the digest
 * of its inputs, taken before it started, to dist/build-stamp.json; `npm start` rebuilds only when
 * that stamp is missing, names other inputs, or an output it vouches for is gone. Node built-ins
 * only: this runs before dist/ exists, on every start.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Folders whose every file is an input: the server and worker sources, and the UI's client code, templates and wire types under src/. */
const INPUT_DIRS = ['src', 'workers'] as const;
/** Files at the root that change what tsc or the UI bundle emit (compiler options, package versions, module type). */
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'] as const;
/** Sources tsc does not compile (tsconfig.json excludes them): esbuild bundles them into dist/ui. */
const NOT_COMPILED = 'src/ui/client/';

export const STAMP_FILE = join('dist', 'build-stamp.json');
const STAMP_SCHEMA = 'svc.build-stamp/v1';

export interface BuildStamp {
  schema: typeof STAMP_SCHEMA;
  inputs_sha256: string;
  inputs: number;
  built_at: string;
  build_ms: number;
}

function filesUnder(root: string, dir: string): string[] {
  const abs = join(root, dir);
  if (!existsSync(abs)) return [];
  return readdirSync(abs, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)).split('\\').join('/'));
}

/** Every input of the build, as sorted paths relative to `root` (forward slashes). */
export function inputFiles(root: string): string[] {
  const files = INPUT_DIRS.flatMap((d) => filesUnder(root, d));
  for (const f of INPUT_FILES) if (existsSync(join(root, f))) files.push(f);
  return files.sort();
}

/** SHA-256 over every input's path and bytes: an edit, a new file, a removed or renamed one all change it. */
export function inputsDigest(root: string, files = inputFiles(root)): string {
  const h = createHash('sha256');
  for (const f of files) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}

/** What a finished build leaves: a .js per compiled .ts, and the UI build's manifest. */
export function expectedOutputs(files: readonly string[]): string[] {
  const compiled = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith(NOT_COMPILED));
  return [...compiled.map((f) => `dist/${f.slice(0, -3)}.js`), 'dist/ui/manifest.json'];
}

export function readStamp(root: string): BuildStamp | null {
  try {
    const stamp = JSON.parse(readFileSync(join(root, STAMP_FILE), 'utf8')) as BuildStamp;
    return stamp.schema === STAMP_SCHEMA && typeof stamp.inputs_sha256 === 'string' ? stamp : null;
  } catch {
    return null;
  }
}

/** Why dist/ must be built again, or null when it was built from exactly these inputs and is whole. */
export function staleReason(root: string, files = inputFiles(root), digest = inputsDigest(root, files)): string | null {
  if (!existsSync(join(root, 'dist'))) return 'dist/ is missing';
  const stamp = readStamp(root);
  if (!stamp) return `${STAMP_FILE} is missing (no complete build recorded)`;
  if (stamp.inputs_sha256 !== digest) return 'sources changed since the last build';
  const missing = expectedOutputs(files).find((f) => !existsSync(join(root, f)));
  return missing ? `${missing} is missing` : null;
}

export function writeStamp(root: string, digest: string, inputs: number, buildMs: number): void {
  const stamp: BuildStamp = { schema: STAMP_SCHEMA, inputs_sha256: digest, inputs, built_at: new Date().toISOString(), build_ms: Math.round(buildMs) };
  writeFileSync(join(root, STAMP_FILE), JSON.stringify(stamp, null, 2) + '\n');
}

export function removeStamp(root: string): void {
  rmSync(join(root, STAMP_FILE), { force: true });
}
