/**
 * What a worker thread loads. The build runs dist/workers/*.js as compiled. From sources (tests,
 * `npm run dev`: tsx) a `.ts` entry is bundled once per process with esbuild, as the UI is
 * (src/ui/build.ts), and its threads start without the TypeScript loader: under Node 20 a thread
 * that registers tsx spends ~370 ms of CPU doing so, before loading a single module of its own
 * (bench/README.md, "Starting an app"), and a test run starts hundreds of threads.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export interface WorkerSource {
  /** What piscina loads (a file URL). */
  filename: string;
  /** The thread's Node options; undefined inherits the process's. */
  execArgv: string[] | undefined;
}

const bundled = new Map<string, string>();
const req = createRequire(import.meta.url);

export function workerSource(entry: URL): WorkerSource {
  if (!entry.pathname.endsWith('.ts')) return { filename: entry.href, execArgv: undefined };
  let file = bundled.get(entry.href);
  if (file === undefined) {
    file = bundle(fileURLToPath(entry));
    bundled.set(entry.href, file);
  }
  return { filename: pathToFileURL(file).href, execArgv: withoutTsLoader(process.execArgv) };
}

/**
 * One CommonJS file with every module the entry imports, packages included, so it runs from a
 * temporary directory. CommonJS rather than ESM: the bundled CommonJS packages (joi) `require`
 * Node's built-ins, which an ESM bundle cannot. Named by its content, so processes starting at
 * once (replicas in the tests) share a file and never read a half-written one.
 */
function bundle(entryPath: string): string {
  const esbuild = req('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({
    entryPoints: [entryPath],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    // ES modules are strict; the bundle keeps them so
    banner: { js: '"use strict";' },
    write: false,
    logLevel: 'silent',
  }).outputFiles[0]!.contents;
  // one directory per user: another user's would not be writable
  const dir = join(tmpdir(), `svc-workers-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true });
  const name = `${entryPath.split('/').pop()!.replace(/\.ts$/, '')}-${createHash('sha256').update(out).digest('hex').slice(0, 16)}.cjs`;
  const file = join(dir, name);
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, out);
  renameSync(partial, file);
  return file;
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
