/**
 * The UI build: esbuild bundles the browser code under src/ui/client (and the server/browser wire
 * types and pure helpers under src/isomorphic it imports) into one module per page plus shared
 * chunks, content-hashed, and the page templates get the hashed names. `npm run build` writes the
 * result to dist/ui (with manifest.json); the service reads it back into memory at start. When
 * dist/ui is missing or was built from other sources (a fresh clone, a test run, an edited file)
 * the same build runs in memory instead, so nothing ever serves stale bundles. esbuild is loaded
 * lazily: a production install that already has dist/ui never needs it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { projectRoot } from '../config/load.js';
import { API } from '../isomorphic/api.js';

export type BuiltDir = 'pages' | 'jackin' | 'shared' | 'assets';

export interface BuiltFile {
  /** Manifest key and served file name (unique across directories). */
  key: string;
  dir: BuiltDir;
  bytes: Buffer;
  /** `project` for our own files, `package@version` for copied third-party data. */
  origin: string;
  licence: string;
}

export interface UiBuild {
  files: BuiltFile[];
  /** Digest of every input (sources, templates, bundled package versions); dist/ui is reused only when it matches. */
  sourcesSha256: string;
  /** `dist` (read from dist/ui) or `memory` (built at start). */
  from: 'dist' | 'memory';
  buildMs: number;
}

/** Third-party packages that end up in a bundle or as a data asset. */
const BUNDLED = ['d3-geo', 'd3-array', 'internmap', 'topojson-client', 'world-atlas', 'mgrs', 'esbuild'] as const;

/**
 * Data copied verbatim from world-atlas (Natural Earth land, public domain): 1:110m (55 KB) drawn
 * while the globe moves, 1:50m (546 KB, fetched after the page is ready) drawn once it rests, and
 * 1:10m (3.1 MB) fetched only when the view is zoomed in far enough to need it.
 */
const NATURAL_EARTH = 'ISC (world-atlas); data public domain (Natural Earth 4.1.0)';
const DATA_ASSETS = [
  { pkg: 'world-atlas', file: 'land-110m.json', licence: NATURAL_EARTH },
  { pkg: 'world-atlas', file: 'land-50m.json', licence: NATURAL_EARTH },
  { pkg: 'world-atlas', file: 'land-10m.json', licence: NATURAL_EARTH },
];

const ENTRIES = { globe: 'src/ui/client/globe/main.ts', jackin: 'src/ui/client/jackin/main.ts' };
const STYLES = { ui: 'src/ui/client/styles/ui.css' };
/**
 * Style sheets under a stable name: the /energy-sovereign panel is rendered by the energy feature,
 * which links its sheet by name rather than through this build's hashed names (5-minute cache).
 */
const STABLE_STYLES = { energy: 'src/ui/client/styles/energy.css' };
const TEMPLATES = { 'globe.html': 'src/ui/pages/globe.html', 'jackin.html': 'src/ui/pages/jackin.html' };
const FIXED = [{ dir: 'jackin' as const, src: 'src/ui/pages/favicon.svg' }];

const req = createRequire(import.meta.url);

function pkgVersion(name: string, root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'missing';
  }
}

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Hash of every build input: a changed source, template or package version changes it. */
export function sourcesDigest(root = projectRoot()): string {
  const h = createHash('sha256');
  for (const file of [...listFiles(join(root, 'src/ui/client')), ...listFiles(join(root, 'src/isomorphic')), ...listFiles(join(root, 'src/ui/pages')), join(root, 'src/ui/build.ts')]) {
    h.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  for (const p of BUNDLED) h.update(`${p}@${pkgVersion(p, root)}\0`);
  return h.digest('hex');
}

const short = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex').slice(0, 10).toUpperCase();

/** Fills `{{name}}` placeholders of a page template with the served paths of the build. */
export function fillTemplate(template: string, paths: Record<string, string>, page: string): string {
  return template.replace(/\{\{([\w.-]+)\}\}/g, (_, name: string) => {
    const p = paths[name];
    if (!p) throw new Error(`${page}: no built file for {{${name}}}`);
    return p;
  });
}

export function buildUiSync(root = projectRoot()): UiBuild {
  const started = performance.now();
  const esbuild = req('esbuild') as typeof import('esbuild');
  const common = {
    absWorkingDir: root,
    bundle: true,
    minify: true,
    write: false,
    metafile: true,
    outdir: 'out',
    target: 'es2022',
    legalComments: 'external',
    logLevel: 'silent',
    charset: 'utf8',
  } as const;
  const js = esbuild.buildSync({ ...common, entryPoints: ENTRIES, format: 'esm', splitting: true, entryNames: 'jackin/[name]-[hash]', chunkNames: 'shared/[name]-[hash]' });
  const css = esbuild.buildSync({ ...common, entryPoints: STYLES, entryNames: 'shared/[name]-[hash]' });
  const stableCss = esbuild.buildSync({ ...common, entryPoints: STABLE_STYLES, entryNames: 'shared/[name]' });
  const files: BuiltFile[] = [];
  const paths: Record<string, string> = {};
  for (const result of [js, css, stableCss]) {
    for (const out of result.outputFiles) {
      const rel = relative(join(root, 'out'), out.path);
      const dir = rel.split('/')[0] as 'jackin' | 'shared';
      const key = basename(rel);
      const bytes = Buffer.from(out.contents);
      const isLegal = key.endsWith('.LEGAL.txt');
      files.push({ key, dir, bytes, origin: isLegal ? 'bundled packages (their licence comments)' : 'project (bundled with esbuild)', licence: isLegal ? 'see file' : 'project' });
      const meta = result.metafile.outputs[`out/${rel}`];
      const entry = meta?.entryPoint ? Object.entries({ ...ENTRIES, ...STYLES, ...STABLE_STYLES }).find(([, src]) => src === meta.entryPoint)?.[0] : undefined;
      if (entry) paths[`${entry}${key.endsWith('.css') ? '.css' : '.js'}`] = `/${dir}/${key}`;
    }
  }
  for (const { pkg, file, licence } of DATA_ASSETS) {
    const bytes = readFileSync(join(dirname(req.resolve(`${pkg}/package.json`, { paths: [root] })), file));
    const key = file.replace(/\.json$/, `-${short(bytes)}.json`);
    files.push({ key, dir: 'assets', bytes, origin: `${pkg}@${pkgVersion(pkg, root)}`, licence });
    paths[file] = `${API}/assets/${key}`;
  }
  for (const { dir, src } of FIXED) {
    files.push({ key: basename(src), dir, bytes: readFileSync(join(root, src)), origin: 'project', licence: 'project' });
    paths[basename(src)] = `/${dir}/${basename(src)}`;
  }
  for (const [page, src] of Object.entries(TEMPLATES)) {
    const html = fillTemplate(readFileSync(join(root, src), 'utf8'), paths, page);
    files.push({ key: page, dir: 'pages', bytes: Buffer.from(html), origin: 'project', licence: 'project' });
  }
  return { files, sourcesSha256: sourcesDigest(root), from: 'memory', buildMs: performance.now() - started };
}

interface DistManifest {
  schema: 'svc.ui-build/v1';
  sources_sha256: string;
  files: { key: string; dir: BuiltDir; sha256: string; origin: string; licence: string }[];
}

export function distDir(root = projectRoot()): string {
  return join(root, 'dist', 'ui');
}

export function writeUiBuild(build: UiBuild, dir = distDir()): void {
  rmSync(dir, { recursive: true, force: true });
  for (const f of build.files) {
    mkdirSync(join(dir, f.dir), { recursive: true });
    writeFileSync(join(dir, f.dir, f.key), f.bytes);
  }
  const manifest: DistManifest = {
    schema: 'svc.ui-build/v1',
    sources_sha256: build.sourcesSha256,
    files: build.files.map((f) => ({ key: f.key, dir: f.dir, sha256: createHash('sha256').update(f.bytes).digest('hex'), origin: f.origin, licence: f.licence })),
  };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
}

/** dist/ui when it was built from exactly these sources and its files match their hashes; else null. */
export function readUiBuild(dir = distDir(), expectedDigest: string | null = sourcesDigest()): UiBuild | null {
  const started = performance.now();
  const file = join(dir, 'manifest.json');
  if (!existsSync(file)) return null;
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as DistManifest;
  if (manifest.schema !== 'svc.ui-build/v1' || (expectedDigest !== null && manifest.sources_sha256 !== expectedDigest)) return null;
  const files: BuiltFile[] = [];
  for (const f of manifest.files) {
    const bytes = readFileSync(join(dir, f.dir, f.key));
    if (createHash('sha256').update(bytes).digest('hex') !== f.sha256) return null;
    files.push({ key: f.key, dir: f.dir, bytes, origin: f.origin, licence: f.licence });
  }
  return { files, sourcesSha256: manifest.sources_sha256, from: 'dist', buildMs: performance.now() - started };
}

/**
 * What the service serves: dist/ui when fresh; otherwise an in-memory build. When the sources are
 * not shipped (an install with only dist/), whatever dist/ui holds is served.
 */
export function loadUiBuild(root = projectRoot()): UiBuild {
  const haveSources = existsSync(join(root, 'src/ui/client'));
  const digest = haveSources ? sourcesDigest(root) : null;
  const fromDist = readUiBuild(distDir(root), digest);
  if (fromDist) return fromDist;
  // a test process builds many apps: the same sources are bundled once (immutable result, keyed by digest)
  const key = `${root}\0${digest}`;
  let built = MEMORY_BUILDS.get(key);
  if (!built) MEMORY_BUILDS.set(key, (built = buildUiSync(root)));
  return built;
}

const MEMORY_BUILDS = new Map<string, UiBuild>();

// `node dist/src/ui/build.js` (npm run build): write dist/ui
if (process.argv[1] && /[/\\]ui[/\\]build\.(js|ts)$/.test(process.argv[1])) {
  const build = buildUiSync();
  writeUiBuild(build);
  const bytes = build.files.reduce((n, f) => n + f.bytes.length, 0);
  console.log(`ui: ${build.files.length} files, ${(bytes / 1024).toFixed(1)} KiB, built in ${build.buildMs.toFixed(0)} ms → ${relative(process.cwd(), distDir())}`);
}
