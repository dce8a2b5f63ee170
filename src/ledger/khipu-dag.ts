/**
 * GET /api/svc/khipu/dag?request=…: the ledger as a DAG (kernels-a 2.8) read from live state on
 * the main thread. Receipts form the primary cord (`prev` edges), each with its payload and
 * envelope pendants; the root commits to the focus through the inclusion proof. Read-only.
 */
import { createHash } from 'node:crypto';
import Joi from 'joi';
import { Errors, type ValidationIssue } from '../http/errors.js';
import { parseRequestParam } from '../http/request-param.js';
import { canonicalJson, sha256Hex } from '../lib/numbers.js';
import { verifyConsistency, verifyInclusion, leafHash } from '../lib/merkle.js';
import { Joi as QJoi, bool, int } from '../lib/params.js';
import type { Ledger, LedgerNode } from './ledger.js';
import { durabilityState, limits } from './documents.js';
import type { LedgerStore } from './store/store.js';
import type { SigningKey } from './keys.js';

export const dagParams = QJoi.object({
  node: Joi.alternatives()
    .try(QJoi.qint().min(0), Joi.string().pattern(/^(head|genesis|\d{1,12}|[0-9a-f]{8,64})$/))
    .default('head')
    .description('the focus node: head, genesis, a ledger index, or a node-digest prefix of 8 to 64 hex (404 when none matches, 422 when ambiguous); a value of digits only is read as an index, so a prefix of digits only needs more characters'),
  depth: int(1, 64, 8).description('receipts walked back along the prev cord from the focus'),
  pendants: bool(true).description('add each receipt’s payload and envelope vertices'),
  proof: bool(true).description('add the RFC 9162 inclusion proof of the focus in the current tree'),
  since: QJoi.qint().min(1).description('add the RFC 9162 consistency proof from the tree of this size to the current one (at most the ledger size, else 422)'),
}).unknown(false);

interface DagParams {
  node: string | number;
  depth: number;
  pendants: boolean;
  proof: boolean;
  since?: number;
}

function fail(issues: ValidationIssue[]): never {
  throw Errors.validation(issues);
}

export function parseDagRequest(request: string): { params: DagParams; label: string | null } {
  const { value, label } = parseRequestParam<DagParams>(request, dagParams);
  return { params: value, label };
}

function focusNode(ledger: Ledger, node: string | number): LedgerNode | null {
  // an empty ledger has neither: no focus
  if (node === 'head') return ledger.newest() ?? null;
  if (node === 'genesis') return ledger.get(0) ?? null;
  if (typeof node === 'number' || /^\d{1,12}$/.test(node)) {
    const found = ledger.get(Number(node));
    if (!found) throw Errors.itemNotFound('ledger node', String(node));
    return found;
  }
  const matches = ledger.findByDigestPrefix(node, 2);
  if (matches.length === 0) throw Errors.itemNotFound('ledger node', node);
  if (matches.length > 1) fail([{ type: 'value_error', loc: ['query', 'request', 'node'], msg: 'Value error, ambiguous digest prefix', input: node, ctx: { error: {} } }]);
  return matches[0]!;
}

export function khipuDag(ledger: Ledger, key: SigningKey, store: LedgerStore, request: string): Record<string, unknown> {
  const { params, label } = parseDagRequest(request);
  const size = ledger.size;
  if (params.since !== undefined && params.since > size) {
    fail([{ type: 'less_than_equal', loc: ['query', 'request', 'since'], msg: `Input should be less than or equal to ${size}`, input: params.since, ctx: { le: size } }]);
  }
  const root = ledger.root(size);
  const focus = focusNode(ledger, params.node);
  const vertices: Record<string, unknown>[] = [];
  const edges: { from: string; to: string; rel: string }[] = [];
  let chainOk = true;
  if (focus) {
    vertices.push({ id: 'root', type: 'root', digest: root.toString('hex'), tree_size: size });
    edges.push({ from: 'root', to: `receipt:${focus.index}`, rel: 'includes' });
    for (let i = focus.index; i > focus.index - params.depth && i >= 0; i--) {
      const n = ledger.get(i)!;
      vertices.push({ id: `receipt:${i}`, type: 'receipt', digest: n.nodeDigest.toString('hex'), index: i, kind: n.kind, ts_utc: n.tsUtc, prev: n.prev.toString('hex'), pae_sha256: n.paeSha256.toString('hex') });
      if (i > 0) edges.push({ from: `receipt:${i}`, to: `receipt:${i - 1}`, rel: 'prev' });
      if (i > 0 && !n.prev.equals(ledger.get(i - 1)!.nodeDigest)) chainOk = false;
      if (params.pendants) {
        vertices.push({ id: `payload:${i}`, type: 'payload', digest: createHash('sha256').update(n.payload).digest('hex') });
        vertices.push({ id: `envelope:${i}`, type: 'envelope', digest: n.paeSha256.toString('hex') });
        edges.push({ from: `receipt:${i}`, to: `payload:${i}`, rel: 'payload' }, { from: `receipt:${i}`, to: `envelope:${i}`, rel: 'envelope' });
      }
    }
  }
  const audit = focus && params.proof ? ledger.inclusionProof(focus.index, size) : null;
  // 1 ≤ since ≤ size (schema and the check above), so the ledger is not empty here
  const consistency = params.since !== undefined ? ledger.consistencyProof(params.since, size) : null;
  const effective = { ...params, node: params.node };
  return {
    schema: 'svc.kernel/v1',
    kernel: 'khipu/dag',
    kernel_version: 1,
    technique: 'hash-chained receipt ledger with an RFC 9162 Merkle tree over node digests',
    references: ['RFC 9162', 'DSSE v1.0.2'],
    seed: null,
    params: effective,
    request_label: label,
    request_sha256: sha256Hex(canonicalJson(effective)),
    data_kind: 'state',
    synthetic_inputs: false,
    result: {
      ledger_size: size,
      khipu_root: root.toString('hex'),
      root_alg: 'rfc9162-sha256',
      node_digest_formula: 'SHA-256("svc.khipu.node.v1\\n" || uint64_be(index) || prev || pae_sha256)',
      durability: durabilityState(store),
      limits: limits(key, store),
      focus: focus ? { index: focus.index, node_digest: focus.nodeDigest.toString('hex') } : null,
      vertices,
      edges,
      inclusion_proof: audit ? { leaf_index: focus!.index, tree_size: size, audit_path: audit.map((h) => h.toString('hex')) } : null,
      consistency_proof: consistency ? { first: params.since, second: size, path: consistency.map((h) => h.toString('hex')) } : null,
      verified: {
        chain: chainOk,
        inclusion: audit ? verifyInclusion(leafHash(focus!.nodeDigest), focus!.index, size, audit, root) : null,
        consistency: consistency ? verifyConsistency(params.since!, size, ledger.root(params.since!), root, consistency) : null,
      },
    },
    honesty: 'Live ledger state, not a simulation; the ledger is in process memory and resets on restart.',
  };
}
