/** Ledger routes: export, readiness, public key, verification and the DAG view. */
import Joi from 'joi';
import { Joi as QJoi, objectOf, optional, typed } from '../lib/params.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { Errors } from '../http/errors.js';
import { requestParamSchema } from '../kernels/kernel-params.js';
import { exportDocument, publicKeyUrl, readinessDocument, type LedgerState } from './documents.js';
import { dagParams, khipuDag } from './khipu-dag.js';
import { verifyBodySchema, verifyEnvelope } from './verify.js';
import { text } from '../http/response-schema.js';
import type { Checkpoints } from './checkpoint.js';
import { tlogRoutes } from './tlog.routes.js';
import { replayWindowRoutes } from './replay-window.routes.js';
import { DAG, EXPORT, PUBKEY, READINESS, VERIFICATION } from './ledger.responses.js';

export function ledgerRoutes(state: LedgerState, publicBaseUrl: string | null, checkpoints: Checkpoints): RouteDef[] {
  const { ledger, key } = state;
  return [
    ...tlogRoutes(ledger, checkpoints, state.store.mode !== 'memory'),
    ...replayWindowRoutes({ ledger, checkpoints }, publicBaseUrl),
    defineRoute({
      method: 'GET',
      path: '/receipt/export',
      uses: ['ledger', 'signer'],
      summary: 'Receipt export document (interface 2.1) for the newest node, or node `index`; the signature is re-verified at serve time',
      tag: 'ledger',
      query: objectOf({ index: typed<number>(QJoi.qint().min(-1).max(Number.MAX_SAFE_INTEGER).default(-1)).description('the ledger index of the node to export; -1 (default) for the newest; an index not in the ledger is 404') }),
      errors: [404],
      response: EXPORT,
      handler({ query, ctx }) {
        const { index } = query;
        const node = index === -1 ? ledger.newest() : ledger.get(index);
        if (index !== -1 && !node) throw Errors.itemNotFound('receipt', String(index));
        ctx.set('Cache-Control', 'no-store');
        const url = publicKeyUrl(ctx, publicBaseUrl);
        // a receipt signed before a rotation points at its own (retired) key
        return exportDocument(state, node, node && node.keyid !== key.keyid ? `${url}?keyid=${node.keyid}` : url);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/ledger/readiness',
      uses: ['ledger', 'signer'],
      summary: 'Ledger readiness object (interface 2.2); a read-only probe: 200 when ready, 503 (same body) when not',
      tag: 'ledger',
      errors: [503],
      response: READINESS,
      responseAlsoOn: [503],
      handler({ ctx }) {
        const doc = readinessDocument(state);
        ctx.status = doc.ready ? 200 : 503;
        ctx.set('Cache-Control', 'no-store');
        return doc;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/edge/pubkey',
      uses: ['signer'],
      summary: 'The published ledger signing key: keyid, algorithm, SPKI PEM, JWK and its URL',
      tag: 'ledger',
      response: PUBKEY,
      handler({ ctx }) {
        return {
          schema: 'svc.edge-pubkey/v1',
          alg: 'ECDSA-P256-SHA256',
          sig_encoding: 'DER',
          keyid: key.keyid,
          keyid_derivation: 'hex SHA-256 of the DER SubjectPublicKeyInfo',
          public_key_pem: key.spkiPem,
          public_key_url: publicKeyUrl(ctx, publicBaseUrl),
          jwk: key.jwk,
          ephemeral: key.ephemeral,
          created_at: key.createdAt,
          // the signed checkpoints' origin and verifier keys (C2SP signed-note vkeys)
          checkpoint: { origin: checkpoints.origin, vkeys: { ed25519: checkpoints.vkeys.ed25519, ecdsa: checkpoints.vkeys.ecdsa } },
          // the keyring: retired keys stay published so every receipt ever issued still verifies
          keys: state.keyring.list().map((k) => ({
            keyid: k.keyid,
            status: k.current ? 'current' : 'retired',
            public_key_pem: k.spkiPem,
            public_key_url: k.current ? publicKeyUrl(ctx, publicBaseUrl) : `${publicKeyUrl(ctx, publicBaseUrl)}?keyid=${k.keyid}`,
            jwk: k.jwk,
          })),
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/ledger/checkpoint',
      uses: ['ledger', 'signer'],
      summary: 'The newest signed checkpoint of the ledger (C2SP tlog-checkpoint as a signed note: origin, size, RFC 6962 root; Ed25519 and ECDSA P-256 signatures)',
      description:
        'Re-signed when the log has grown and ledger.checkpointIntervalMs has passed, so it may lag the newest node by that long. ' +
        'Verify it with the vkeys of GET /edge/pubkey (checkpoint.vkeys): the Ed25519 one with Go\'s golang.org/x/mod/sumdb/note, the ECDSA one with transparency-dev/formats note. ' +
        '503 when the ledger does not extend the checkpoint signed before (restored from an older state): a log never signs two inconsistent checkpoints.',
      tag: 'ledger',
      produces: 'text/plain',
      response: text('A C2SP signed note: "<origin>\\n<size>\\n<base64 root>\\n", a blank line, then one "— <origin> <base64(key id ‖ signature)>" line per signature'),
      errors: [503],
      async handler({ ctx }) {
        const note = await checkpoints.current();
        ctx.type = 'text/plain; charset=utf-8';
        // C2SP tlog-tiles: a checkpoint is not cached beyond a few seconds
        ctx.set('Cache-Control', 'public, max-age=2');
        return note;
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/edge/pubkey.pem',
      uses: ['signer'],
      summary: 'The SubjectPublicKeyInfo PEM that public_key_url names',
      tag: 'ledger',
      produces: 'application/x-pem-file',
      response: text('SubjectPublicKeyInfo, PEM (-----BEGIN PUBLIC KEY-----)'),
      query: objectOf({ keyid: optional(Joi.string().pattern(/^[0-9a-f]{64}$/)).description('a key of the keyring (default: the current key)') }),
      errors: [404],
      handler({ query, ctx }) {
        const wanted = query.keyid;
        const k = wanted === undefined ? state.keyring.get(key.keyid) : state.keyring.get(wanted);
        if (!k) throw Errors.itemNotFound('key', wanted ?? key.keyid);
        ctx.type = 'application/x-pem-file';
        return k.spkiPem;
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/khipu/verify',
      root: true,
      uses: ['ledger', 'signer'],
      summary: 'Verify a DSSE envelope (or an export document) against the published key; 200 with verified true/false',
      tag: 'ledger',
      body: verifyBodySchema,
      bodyLimitBytes: 64 * 1024,
      errors: [413, 415],
      response: VERIFICATION,
      handler({ body, ctx }) {
        return verifyEnvelope(body, state.keyring, ledger, publicKeyUrl(ctx, publicBaseUrl));
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/svc/khipu/dag',
      root: true,
      uses: ['ledger', 'signer'],
      summary: 'The ledger as a DAG: receipts, pendants, root, inclusion and consistency proofs (request = JSON object of node, depth, pendants, proof, since)',
      tag: 'ledger',
      query: requestParamSchema(dagParams, 'The DAG view'),
      errors: [404],
      response: DAG,
      handler({ query }) {
        return khipuDag(ledger, key, state.store, query.request);
      },
    }),
  ];
}
