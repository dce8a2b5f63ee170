/**
 * The UI asset catalogue: every file of the UI build (build.ts: esbuild bundles, CSS, page HTML,
 * copied data) is kept in memory with its SHA-256, so requests never touch the file system (no
 * path from a request ever reaches `join`, which rules out traversal) and the manifest is computed
 * from the exact bytes served.
 */
import { createHash } from 'node:crypto';
import { extname } from 'node:path';
import type { BuiltDir, BuiltFile, UiBuild } from './build.js';
import { API } from '../isomorphic/api.js';

/** One path segment of a served file or manifest key: no slash, no leading dot, no `..`. */
export const ASSET_NAME = /^(?!\.)(?!.*\.\.)[A-Za-z0-9._-]{1,64}$/;

/** Only these extensions are served; anything else in a build stops start-up (nothing slips out). */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};


export interface Asset {
  /** Manifest key, unique across directories: the file name. */
  key: string;
  dir: BuiltDir;
  /** Canonical URL path; pages are also served under `aliases`. */
  path: string;
  aliases: readonly string[];
  contentType: string;
  bytes: Buffer;
  sha256: string;
  /** Strong validator: the content hash, quoted (RFC 9110 8.8.3). */
  etag: string;
  origin: string;
  licence: string;
}

/** The pages and the paths each is served under; the first one is canonical. */
export const PAGE_PATHS: Record<string, readonly string[]> = {
  'globe.html': ['/elite/globe', '/elite/globe/', '/jackin/globe'],
  'jackin.html': ['/jackin', '/jackin/', '/elite/jackin'],
};

export interface AssetCatalogue {
  all: readonly Asset[];
  byKey: ReadonlyMap<string, Asset>;
  /** Files of one directory by name (what /shared/:fname and /jackin/:jk_path look up). */
  inDir(dir: BuiltDir): ReadonlyMap<string, Asset>;
  loadedAt: string;
  build: { from: UiBuild['from']; ms: number; sourcesSha256: string };
}

function urlPaths(f: BuiltFile): readonly string[] {
  if (f.dir === 'assets') return [`${API}/assets/${f.key}`];
  if (f.dir !== 'pages') return [`/${f.dir}/${f.key}`];
  const paths = PAGE_PATHS[f.key];
  if (!paths) throw new Error(`page ${f.key} has no route: add it to PAGE_PATHS`);
  return paths;
}

export function catalogue(build: UiBuild): AssetCatalogue {
  const all: Asset[] = [];
  const byKey = new Map<string, Asset>();
  const dirs = new Map<BuiltDir, Map<string, Asset>>((['pages', 'shared', 'jackin', 'assets'] as const).map((d) => [d, new Map()]));
  for (const f of [...build.files].sort((a, b) => a.dir.localeCompare(b.dir) || a.key.localeCompare(b.key))) {
    const contentType = TYPES[extname(f.key)];
    if (!ASSET_NAME.test(f.key) || !contentType) throw new Error(`ui build ${f.dir}/${f.key}: not a servable asset name or type`);
    if (byKey.has(f.key)) throw new Error(`ui build ${f.dir}/${f.key}: duplicate asset key`);
    const sha256 = createHash('sha256').update(f.bytes).digest('hex');
    const [path, ...aliases] = urlPaths(f);
    const asset: Asset = { key: f.key, dir: f.dir, path: path!, aliases, contentType, bytes: f.bytes, sha256, etag: `"${sha256}"`, origin: f.origin, licence: f.licence };
    all.push(asset);
    byKey.set(f.key, asset);
    dirs.get(f.dir)!.set(f.key, asset);
  }
  for (const page of Object.keys(PAGE_PATHS)) if (!byKey.has(page)) throw new Error(`ui build: page ${page} is missing`);
  return { all, byKey, inDir: (dir) => dirs.get(dir)!, loadedAt: new Date().toISOString(), build: { from: build.from, ms: Math.round(build.buildMs), sourcesSha256: build.sourcesSha256 } };
}

/** The body of GET /api/svc/v1/assets/manifest. */
export function manifestDocument(cat: AssetCatalogue): Record<string, unknown> {
  return {
    schema: 'svc.assets-manifest/v1',
    loaded_at: cat.loadedAt,
    build: { from: cat.build.from, ms: cat.build.ms, sources_sha256: cat.build.sourcesSha256, tool: 'esbuild' },
    count: cat.all.length,
    assets: cat.all.map((a) => ({
      key: a.key,
      path: a.path,
      aliases: a.aliases,
      url: `${API}/assets/${a.key}`,
      content_type: a.contentType,
      bytes: a.bytes.length,
      sha256: a.sha256,
      origin: a.origin,
      licence: a.licence,
    })),
    honesty: 'bytes and sha256 are computed at start-up from the files this process serves (the esbuild output); every path and url answers with exactly these bytes.',
  };
}
