/**
 * Interface 4.9: the globe and entry pages, the /shared and /jackin files, and the asset manifest.
 * Everything is served from the in-memory catalogue (assets.ts) with a strong ETag (its SHA-256):
 * files are cacheable for five minutes, pages and the manifest revalidate on every load.
 */
import { createHash } from 'node:crypto';
import Joi from 'joi';
import type { Context } from 'koa';
import { notModified } from '../http/etag.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Errors } from '../http/errors.js';
import { API, ASSET_NAME, manifestDocument, type Asset, type AssetCatalogue } from './assets.js';
import type { BuiltDir } from './build.js';

export { API };
export const ASSET_CACHE = 'public, max-age=300';
export const PAGE_CACHE = 'no-cache';

/** Answers 304 when the client already holds these bytes, else the bytes with their type. */
function send(ctx: Context, etag: string, type: string, bytes: Buffer, cache: string): Buffer | undefined {
  if (notModified(ctx, etag, cache)) return undefined;
  // set before the body so Koa keeps it (it only infers a type when none is set)
  ctx.set('Content-Type', type);
  return bytes;
}

/** Content-hashed names (esbuild's `-[hash]`, ours for data) never change their bytes: cache for a year. */
export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';
export const HASHED_NAME = /-[A-Z0-9]{8,}\.[a-z]+$/;

const sendAsset = (ctx: Context, a: Asset, cache = HASHED_NAME.test(a.key) ? IMMUTABLE_CACHE : ASSET_CACHE): Buffer | undefined => send(ctx, a.etag, a.contentType, a.bytes, cache);

const nameParam = (name: string): Joi.ObjectSchema => Joi.object({ [name]: Joi.string().pattern(ASSET_NAME).required() });

function fileRoute(cat: AssetCatalogue, dir: Exclude<BuiltDir, 'pages' | 'assets'>, param: string, summary: string, produces: string): RouteDef {
  const files = cat.inDir(dir);
  return defineRoute({
    method: 'GET',
    path: `/${dir}/:${param}`,
    summary,
    tag: 'ui',
    params: nameParam(param),
    produces,
    errors: [304, 404],
    handler({ params, ctx }) {
      const name = (params as Record<string, string>)[param]!;
      const asset = files.get(name);
      if (!asset) throw Errors.itemNotFound('asset', name);
      return sendAsset(ctx, asset);
    },
  });
}

export function uiRoutes(cat: AssetCatalogue): RouteDef[] {
  const pages = [...cat.inDir('pages').values()].flatMap((page) =>
    [page.path, ...page.aliases].map((path) =>
      defineRoute({
        method: 'GET',
        path,
        summary: page.key === 'globe.html' ? 'Operational globe page: land, no-fly zones, ADS-B aircraft, drone tracks by verdict, CoT tracks and vessels on a canvas globe' : 'Entry page: status of health, pool, ledger, ADS-B feed and stream; latest verdicts; links',
        tag: 'ui',
        produces: 'text/html',
        html: 'ui',
        errors: [304],
        handler: ({ ctx }) => sendAsset(ctx, page, PAGE_CACHE),
      }),
    ),
  );
  const manifest = Buffer.from(JSON.stringify(manifestDocument(cat)));
  const manifestEtag = `"${createHash('sha256').update(manifest).digest('hex')}"`;
  return [
    ...pages,
    fileRoute(cat, 'jackin', 'jk_path', 'A file of the UI pages (content-hashed page bundle, its licence notes, or the icon)', 'application/javascript'),
    fileRoute(cat, 'shared', 'fname', 'A shared front-end file (content-hashed ES module chunk or style sheet used by the pages)', 'application/javascript'),
    defineRoute({
      method: 'GET',
      path: `${API}/assets/manifest`,
      summary: 'Every served UI asset: key, path, content type, byte size and SHA-256 (computed at start-up)',
      tag: 'ui',
      errors: [304],
      handler: ({ ctx }) => send(ctx, manifestEtag, 'application/json', manifest, PAGE_CACHE),
    }),
    defineRoute({
      method: 'GET',
      path: `${API}/assets/:key`,
      summary: 'One UI asset by its manifest key (bundles, styles, pages and data such as land-110m)',
      tag: 'ui',
      params: nameParam('key'),
      produces: 'application/octet-stream',
      errors: [304, 404],
      handler({ params, ctx }) {
        const key = (params as { key: string }).key;
        const asset = cat.byKey.get(key);
        if (!asset) throw Errors.itemNotFound('asset', key);
        return sendAsset(ctx, asset);
      },
    }),
  ];
}
