/**
 * The ledger as a C2SP transparency log over HTTP: hash tiles and entry bundles (tlog-tiles) and a
 * per-receipt offline proof (tlog-proof). The checkpoint route sits with the other ledger routes.
 */
import { Joi } from '../lib/code-points.js';
import { createHash } from 'node:crypto';
import { Joi as QJoi, objectOf, required, typed } from '../lib/params.js';
import { Errors } from '../http/errors.js';
import { notModified } from '../http/etag.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { text } from '../http/response-schema.js';
import { parseTilePath, TILE_WIDTH } from '../lib/tlog-tiles.js';
import type { Checkpoints } from './checkpoint.js';
import type { Ledger } from './ledger.js';

const TILE_DOC =
  'C2SP tlog-tiles, tile height 8: `<L>/<N>[.p/<W>]` is the hash tile of level L (level 0: the RFC 6962 leaf hashes; level L: the roots of the full tiles of level L-1), ' +
  '`entries/<N>[.p/<W>]` the entry bundle (each entry a big-endian uint16 length 32 and the 32-byte node digest). N is written in 3-digit groups, all but the last prefixed with x (1234067 → x001/x234/067). ' +
  'A full tile is 256 hashes and never changes (cached for a year, with an ETag); a partial tile of width W < 256 is served for every width the log has reached, so for every size a checkpoint names. An empty or not yet complete tile is 404.';

/** How long a proof request waits for the next checkpoint to cover its receipt, at most. */
const PROOF_WAIT_MS = 10_000;

export function tlogRoutes(ledger: Ledger, checkpoints: Checkpoints, durable: boolean): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/ledger/tile/*tile',
      uses: ['ledger'],
      summary: 'A hash tile or an entry bundle of the ledger (C2SP tlog-tiles), application/octet-stream',
      description: TILE_DOC,
      tag: 'ledger',
      params: objectOf({ tile: required(Joi.string().max(64)).description('`<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]`') }),
      produces: 'application/octet-stream',
      response: text('The tile bytes: W·32 bytes of hashes, or W·34 bytes of length-prefixed entries'),
      errors: [304, 404],
      handler({ params, ctx }) {
        const path = params.tile;
        const t = parseTilePath(path.split('/'));
        if (!t) throw Errors.itemNotFound('tile', path);
        const tlog = ledger.tlog;
        const size = tlog.size;
        const available = t.level === 'entries' ? size : t.level < 64 ? tlog.levelLength(t.level) : 0;
        const from = t.index * TILE_WIDTH;
        if (from + t.width > available) throw Errors.itemNotFound('tile', path);
        const bytes = t.level === 'entries' ? tlog.entryRecords(from, t.width) : tlog.levelHashes(t.level, from, t.width);
        // a tile's bytes never change in a durable log; in memory a restart starts a new log under the same paths
        const cache = durable ? 'public, max-age=31536000, immutable' : 'no-cache';
        if (notModified(ctx, `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`, cache)) return undefined;
        ctx.set('Content-Type', 'application/octet-stream');
        return bytes;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/receipt/proof',
      uses: ['ledger', 'signer'],
      summary: 'An offline proof that receipt `index` is in the log: C2SP tlog-proof (index, audit path, the signed checkpoint verbatim)',
      description:
        'text/plain: `c2sp.org/tlog-proof@v1`, `extra <base64 node digest>` (the logged entry, which the receipt export recomputes from prev and pae_sha256), `index <i>`, one base64 hash of the RFC 6962 audit path per line, a blank line, then the checkpoint note with its Ed25519 and ECDSA signatures. ' +
        'The proof is against the newest checkpoint; a receipt newer than it waits for the next one, which the log signs within ledger.checkpointIntervalMs (503 with Retry-After if none comes within 10 s).',
      tag: 'ledger',
      query: objectOf({ index: typed<number>(QJoi.qint().min(0).max(Number.MAX_SAFE_INTEGER).required()).description('the ledger index of the receipt') }),
      produces: 'text/plain',
      response: text('A C2SP tlog-proof'),
      errors: [404, 503],
      async handler({ query, ctx }) {
        const { index } = query;
        if (index >= ledger.size) throw Errors.itemNotFound('receipt', String(index));
        const cp = await checkpoints.covering(index + 1, PROOF_WAIT_MS);
        const path = ledger.inclusionProof(index, cp.size).map((h) => `${h.toString('base64')}\n`);
        ctx.type = 'text/plain; charset=utf-8';
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Content-Disposition', `inline; filename="khipu-${index}.tlog-proof"`);
        return `c2sp.org/tlog-proof@v1\nextra ${ledger.tlog.entry(index).toString('base64')}\nindex ${index}\n${path.join('')}\n${cp.note}`;
      },
    }),
  ];
}
