/**
 * What a worker thread loads. The build runs dist/workers/*.js as compiled. From sources (tests,
 * `npm run dev`: tsx) a `.ts` entry is bundled with esbuild, as the UI is (src/ui/build.ts), and
 * its threads start without the TypeScript loader: under Node 20 a thread that registers tsx spends
 * ~370 ms of CPU doing so, before loading a single module of its own, and a test run starts
 * hundreds of threads.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { projectRoot } from '../config/load.js';
import { sha256Hex as sha256 } from '../lib/numbers.js';

export interface WorkerSource {
  /** What piscina loads (a file URL). */
  filename: string;
  /** The thread's Node options; undefined inherits the process's. */
  execArgv: string[] | undefined;
}

/**
 * A worker entry `path` (without extension) relative to the module at `base`: its `.ts` source
 * where the caller runs from sources (tsx: tests, dev), its `.js` build where it runs from dist.
 */
export function entryNextTo(path: string, base: string): URL {
  return new URL(`${path}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}

const bundled = new Map<string, string>();
const req = createRequire(import.meta.url);

export function workerSource(entry: URL): WorkerSource {
  if (!entry.pathname.endsWith('.ts')) return { filename: entry.href, execArgv: undefined };
  let file = bundled.get(entry.href);
  if (file === undefined) {
    file = bundleWorker(fileURLToPath(entry));
    bundled.set(entry.href, file);
  }
  return { filename: pathToFileURL(file).href, execArgv: (threadArgv ??= acceptedByWorkers(withoutTsLoader(process.execArgv))) };
}

let threadArgv: string[] | undefined;

/**
 * Options a thread inherits silently may be refused when given explicitly: V8 and per-process
 * options (`--expose-gc`, `--max-old-space-size`, `--title`). The Worker constructor names every
 * refused one at once, before starting a thread; they are left out (with a value given as the
 * next argument). Tried once per process; with options left, the trial starts one thread.
 */
export function acceptedByWorkers(argv: readonly string[]): string[] {
  let out = [...argv];
  while (out.length > 0) {
    let refused: string[];
    try {
      void new Worker('', { eval: true, execArgv: out }).terminate();
      return out;
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw err;
      refused = e.message.slice(e.message.indexOf(': ') + 2).split(', ');
    }
    const kept: string[] = [];
    for (let i = 0; i < out.length; i++) {
      if (!refused.includes(out[i]!)) kept.push(out[i]!);
      else if (!out[i]!.includes('=') && out[i + 1] !== undefined && !out[i + 1]!.startsWith('-')) i++;
    }
    if (kept.length === out.length) return []; // a refusal not matched to an option: inherit nothing
    out = kept;
  }
  return out;
}

/** One directory per user: another user's would not be writable. */
const bundleDir = (): string => join(tmpdir(), `svc-workers-${process.getuid?.() ?? 'user'}`);

/** What a bundle was made from: reused while every input file still has its digest. */
interface BundleIndex {
  bundle: string;
  /** esbuild's version and options: a bundle is also a function of the tool. */
  tool: string;
  inputs: Record<string, string>;
}

/**
 * One CommonJS file with every module the entry imports, packages included, so it runs from a
 * temporary directory. CommonJS rather than ESM: the bundled CommonJS packages (joi) `require`
 * Node's built-ins, which an ESM bundle cannot. Named by its content, so processes starting at
 * once (replicas in the tests) share a file and never read a half-written one. A process reuses
 * the last bundle while its inputs are unchanged (one read and digest per input, ~10 ms, where
 * bundling costs ~350 ms): a file the entry newly imports needs an edit to one it imported.
 */
export function bundleWorker(entryPath: string): string {
  const dir = bundleDir();
  const stem = `${basename(entryPath, '.ts')}-${sha256(entryPath).slice(0, 8)}`;
  const indexFile = join(dir, `${stem}.inputs.json`);
  const esbuild = req('esbuild') as typeof import('esbuild');
  const root = projectRoot();
  const options = {
    bundle: true,
    platform: 'node',
    // CommonJS output of ES modules keeps them strict ("use strict" first)
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    // sections of the bundle are headed by their file, relative to the project
    absWorkingDir: root,
  } as const;
  const tool = `esbuild ${esbuild.version} ${JSON.stringify(options)}`;
  const reused = reusable(indexFile, tool);
  if (reused) return reused;
  const startedMs = Date.now();
  const result = esbuild.buildSync({ ...options, entryPoints: [entryPath], write: false, metafile: true, logLevel: 'silent' });
  const out = result.outputFiles[0]!.contents;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${stem}-${sha256(out).slice(0, 16)}.cjs`);
  const inputs: Record<string, string> = {};
  // esbuild also reads the project's tsconfig.json (class fields, JSX, paths)
  for (const path of [...Object.keys(result.metafile.inputs).map((rel) => resolve(root, rel)), join(root, 'tsconfig.json')]) {
    inputs[path] = sha256(readFileSync(path));
  }
  writeAtomically(file, out);
  // an input edited while esbuild ran may not be what it read: its digest would vouch for a stale
  // bundle, so such a bundle is used once and not indexed for reuse
  const editedMeanwhile = Object.keys(inputs).some((path) => statSync(path).mtimeMs > startedMs);
  if (!editedMeanwhile) writeAtomically(indexFile, JSON.stringify({ bundle: file, tool, inputs } satisfies BundleIndex));
  prune(dir, stem, file);
  return file;
}

/** Earlier bundles of this entry, a day old: edits while developing would otherwise pile up. A
 * younger one may still be the file a running process restarts a crashed thread from. */
function prune(dir: string, stem: string, keep: string): void {
  const dayAgo = Date.now() - 86_400_000;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (path === keep || !name.startsWith(`${stem}-`) || !/\.cjs(\.\d+\.tmp)?$/.test(name)) continue;
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { force: true });
    } catch {
      // removed by another process meanwhile
    }
  }
}

function reusable(indexFile: string, tool: string): string | null {
  try {
    const index = JSON.parse(readFileSync(indexFile, 'utf8')) as BundleIndex;
    if (index.tool !== tool || !existsSync(index.bundle)) return null;
    for (const [path, digest] of Object.entries(index.inputs)) if (sha256(readFileSync(path)) !== digest) return null;
    return index.bundle;
  } catch {
    return null; // no index yet, or an input gone
  }
}

function writeAtomically(file: string, bytes: Uint8Array | string): void {
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, bytes);
  renameSync(partial, file);
}

/** The process's Node options without the tsx loader (`--import tsx`, `--import=tsx`, tsx's own `--require`/`--import` paths). */
export function withoutTsLoader(argv: readonly string[]): string[] {
  const isTsx = (v: string | undefined): boolean => v !== undefined && (v === 'tsx' || v.startsWith('tsx/') || /[/\\]tsx[/\\]/.test(v));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    if (flag === '--import' || flag === '--require' || flag === '-r' || flag === '--loader' || flag === '--experimental-loader') {
      if (inline !== undefined ? isTsx(inline) : isTsx(argv[i + 1])) {
        if (inline === undefined) i++;
        continue;
      }
    }
    out.push(a);
  }
  return out;
}
