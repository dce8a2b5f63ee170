/**
 * The UI asset catalogue: every file under src/ui/static/{pages,shared,jackin} is read once at
 * start-up and kept in memory with its SHA-256, so requests never touch the file system (no path
 * from a request ever reaches `join`, which rules out traversal) and the manifest is computed from
 * the exact bytes served. The production build compiles only .ts, so the files are read from src/.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { projectRoot } from '../config/load.js';

/** One path segment of a served file or manifest key: no slash, no leading dot, no `..`. */
export const ASSET_NAME = /^(?!\.)(?!.*\.\.)[A-Za-z0-9._-]{1,64}$/;

/** Only these extensions are served; anything else in static/ stops start-up (nothing slips out). */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

export type AssetDir = 'pages' | 'shared' | 'jackin';

export interface Asset {
  /** Manifest key, unique across directories: the file name. */
  key: string;
  dir: AssetDir;
  /** Canonical URL path; pages are also served under `aliases`. */
  path: string;
  aliases: readonly string[];
  contentType: string;
  bytes: Buffer;
  sha256: string;
  /** Strong validator: the content hash, quoted (RFC 9110 8.8.3). */
  etag: string;
}

/** The pages and the paths each is served under (interface 4.9); the first one is canonical. */
export const PAGE_PATHS: Record<string, readonly string[]> = {
  'globe.html': ['/elite/globe', '/elite/globe/', '/jackin/globe'],
  'jackin.html': ['/jackin', '/jackin/', '/elite/jackin'],
};

export function staticRoot(): string {
  return join(projectRoot(), 'src', 'ui', 'static');
}

export interface AssetCatalogue {
  all: readonly Asset[];
  byKey: ReadonlyMap<string, Asset>;
  /** Files of one directory by name (what /shared/:fname and /jackin/:jk_path look up). */
  inDir(dir: AssetDir): ReadonlyMap<string, Asset>;
  loadedAt: string;
}

function urlPath(dir: AssetDir, name: string): readonly string[] {
  if (dir !== 'pages') return [`/${dir}/${name}`];
  const paths = PAGE_PATHS[name];
  if (!paths) throw new Error(`src/ui/static/pages/${name} has no route: add it to PAGE_PATHS`);
  return paths;
}

export function loadAssets(root = staticRoot()): AssetCatalogue {
  const all: Asset[] = [];
  const byKey = new Map<string, Asset>();
  const dirs = new Map<AssetDir, Map<string, Asset>>();
  for (const dir of ['pages', 'shared', 'jackin'] as const) {
    const files = new Map<string, Asset>();
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (!entry.isFile()) continue;
      const name = entry.name;
      const contentType = TYPES[extname(name)];
      if (!ASSET_NAME.test(name) || !contentType) throw new Error(`src/ui/static/${dir}/${name}: not a servable asset name or type`);
      if (byKey.has(name)) throw new Error(`src/ui/static/${dir}/${name}: duplicate asset key`);
      const bytes = readFileSync(join(root, dir, name));
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const [path, ...aliases] = urlPath(dir, name);
      const asset: Asset = { key: name, dir, path: path!, aliases, contentType, bytes, sha256, etag: `"${sha256}"` };
      all.push(asset);
      byKey.set(name, asset);
      files.set(name, asset);
    }
    dirs.set(dir, files);
  }
  for (const page of Object.keys(PAGE_PATHS)) if (!byKey.has(page)) throw new Error(`src/ui/static/pages/${page} is missing`);
  return { all, byKey, inDir: (dir) => dirs.get(dir)!, loadedAt: new Date().toISOString() };
}

/** The body of GET /api/svc/v1/assets/manifest. */
export function manifestDocument(cat: AssetCatalogue, apiPrefix: string): Record<string, unknown> {
  return {
    schema: 'svc.assets-manifest/v1',
    loaded_at: cat.loadedAt,
    count: cat.all.length,
    assets: cat.all.map((a) => ({
      key: a.key,
      path: a.path,
      aliases: a.aliases,
      url: `${apiPrefix}/assets/${a.key}`,
      content_type: a.contentType,
      bytes: a.bytes.length,
      sha256: a.sha256,
    })),
    honesty: 'bytes and sha256 are computed at start-up from the files this process serves; every path and url answers with exactly these bytes.',
  };
}
