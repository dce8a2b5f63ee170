/**
 * The globe and entry pages, the /shared and /jackin files, and the asset manifest. Everything is
 * served from the in-memory catalogue (assets.ts) with a strong ETag (its SHA-256): files are
 * cacheable for five minutes, pages and the manifest revalidate on every load.
 */
import { createHash } from 'node:crypto';
import Joi from 'joi';
import type { ObjectParam } from '../lib/params.js';
import type { Context } from 'koa';
import { notModified } from '../http/etag.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { hex64, int, isoTime, listOf, mapOf, num, oneOf, openShape, shape, str, text } from '../http/response-schema.js';
import { Errors } from '../http/errors.js';
import { ASSET_NAME, manifestDocument, type Asset, type AssetCatalogue } from './assets.js';
import type { BuiltDir } from './build.js';

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

/** Path parameters of one asset name, `{ <name>: string }`. */
function nameParam<N extends string>(name: N, description: string): ObjectParam<Record<N, string>> {
  return Joi.object({ [name]: Joi.string().pattern(ASSET_NAME).required().description(description) });
}

/** The media types (without parameters) of a set of assets: what a file route may answer with. */
const mediaTypes = (assets: Iterable<Asset>): string[] => [...new Set([...assets].map((a) => a.contentType.split(';')[0]!.trim()))].sort();

/** A served file: its text (HTML, JS, CSS, SVG, plain text), or the document of a JSON data file. */
/** A TopoJSON topology (topojson-specification 1.0): the JSON data files the globe draws. */
const TOPOLOGY = shape({
  type: oneOf('Topology'),
  objects: mapOf(openShape({ type: str(), geometries: listOf(openShape({ type: str() })).optional() })).description('geometry collections by name'),
  arcs: listOf(listOf(listOf(num()).min(2))).description('quantised, delta-encoded positions'),
  bbox: listOf(num()).optional(),
  transform: shape({ scale: listOf(num()).length(2), translate: listOf(num()).length(2) }).optional(),
}).description('A JSON data file (land-110m TopoJSON)');
const FILE = Joi.alternatives(text('The file, byte for byte as listed in the manifest'), TOPOLOGY);
const PAGE = text('The HTML page (scripts and styles are same-origin files under /jackin and /shared)');

const MANIFEST = shape({
  schema: oneOf('svc.assets-manifest/v1'),
  loaded_at: isoTime(),
  build: shape({ from: str(), ms: int().min(0), sources_sha256: hex64(), tool: oneOf('esbuild') }),
  count: int().min(0),
  assets: listOf(
    shape({
      key: str(),
      path: str().description('Canonical URL path'),
      aliases: listOf(str()).description('Further paths serving the same bytes (pages)'),
      url: str().description('The same bytes under /api/svc/v1/assets/{key}'),
      content_type: str(),
      bytes: int().min(0),
      sha256: hex64(),
      origin: str(),
      licence: str(),
    }),
  ),
  honesty: str(),
});

function fileRoute(cat: AssetCatalogue, dir: Exclude<BuiltDir, 'pages' | 'assets'>, param: string, summary: string, paramDescription: string): RouteDef {
  const files = cat.inDir(dir);
  return defineRoute({
    method: 'GET',
    path: `/${dir}/:${param}`,
    root: true,
    uses: [],
    summary,
    tag: 'ui',
    params: nameParam(param, paramDescription),
    produces: mediaTypes(files.values()),
    response: FILE,
    errors: [304, 404],
    handler({ params, ctx }) {
      // joi requires the parameter; `?? ''` only answers the index signature's `undefined`
      const name = params[param] ?? '';
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
        root: true,
        uses: [],
        summary: page.key === 'globe.html' ? 'Operational globe page: land, no-fly zones, ADS-B aircraft, drone tracks by verdict, CoT tracks and vessels on a canvas globe' : 'Entry page: status of health, pool, ledger, ADS-B feed and stream; latest verdicts; links',
        tag: 'ui',
        produces: 'text/html',
        response: PAGE,
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
    fileRoute(cat, 'jackin', 'jk_path', 'A file of the UI pages (content-hashed page bundle, its licence notes, or the icon)', 'File name under /jackin, as the manifest lists it (e.g. favicon.svg)'),
    fileRoute(cat, 'shared', 'fname', 'A shared front-end file (content-hashed ES module chunk or style sheet used by the pages)', 'File name under /shared, as the manifest lists it'),
    defineRoute({
      method: 'GET',
      path: '/assets/manifest',
      uses: [],
      summary: 'Every served UI asset: key, path, content type, byte size and SHA-256 (computed at start-up)',
      tag: 'ui',
      errors: [304],
      response: MANIFEST,
      handler: ({ ctx }) => send(ctx, manifestEtag, 'application/json', manifest, PAGE_CACHE),
    }),
    defineRoute({
      method: 'GET',
      path: '/assets/:key',
      uses: [],
      summary: 'One UI asset by its manifest key (bundles, styles, pages and data such as land-110m)',
      tag: 'ui',
      params: nameParam('key', 'Manifest key of the asset (its file name, e.g. land-110m-<hash>.json)'),
      produces: mediaTypes(cat.all),
      response: FILE,
      errors: [304, 404],
      handler({ params, ctx }) {
        const { key } = params;
        const asset = cat.byKey.get(key);
        if (!asset) throw Errors.itemNotFound('asset', key);
        return sendAsset(ctx, asset);
      },
    }),
  ];
}
