// The khipu DAG (src/ledger/khipu-dag.ts) called directly, no HTTP: focus selection (head, genesis,
// index, digest prefix, full digest; 404 and the ambiguous-prefix 422), the walk back along `prev`
// (depth bounds, exact vertex and edge order), pendants, inclusion and consistency proofs against
// the RFC 9162 reference, the `since` bound, the chain check, the envelope fields and request hash,
// durability and limits, and the parameter schema's bounds. Every expectation is recomputed from
// the inputs (node digests, SHA-256 of payloads, reference Merkle functions), never read back.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { AppError, type ValidationIssue } from '../../src/http/errors.js';
import { khipuDag, parseDagRequest } from '../../src/ledger/khipu-dag.js';
import { loadSigningKey, type SigningKey } from '../../src/ledger/keys.js';
import { Ledger, type AppendInput, type LedgerNode } from '../../src/ledger/ledger.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import type { AdapterState, LedgerStore } from '../../src/ledger/store/store.js';
import { consistencyProof as refConsistency, inclusionProof as refInclusion, leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '../../src/lib/merkle.js';
import { referenceChain } from '../helpers/ledger-reference.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const sha256hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

const input = (k: number): AppendInput => ({
  kind: `kind-${k % 3}`,
  tsUtc: new Date(Date.UTC(2025, 0, 1, 0, 0, k)).toISOString(),
  payload: Buffer.from(`payload ${k}`),
  paeSha256: createHash('sha256').update(`pae ${k}`).digest(),
  sig: Buffer.from([k, k + 1]),
  keyid: 'key',
});

/** The chain recomputed from the inputs alone (test/helpers/ledger-reference.ts). */
const chainOf = (inputs: AppendInput[]): Buffer[] => referenceChain(inputs);

interface Edge {
  from: string;
  to: string;
  rel: string;
}
interface DagResult {
  ledger_size: number;
  khipu_root: string;
  root_alg: string;
  node_digest_formula: string;
  durability: string;
  limits: { code: string; detail: string }[];
  focus: { index: number; node_digest: string } | null;
  vertices: Record<string, unknown>[];
  edges: Edge[];
  inclusion_proof: { leaf_index: number; tree_size: number; audit_path: string[] } | null;
  consistency_proof: { first: number; second: number; path: string[] } | null;
  verified: { chain: boolean; inclusion: boolean | null; consistency: boolean | null };
}
interface DagBody {
  schema: string;
  kernel: string;
  kernel_version: number;
  technique: string;
  references: string[];
  seed: null;
  params: Record<string, unknown>;
  request_label: string | null;
  request_sha256: string;
  data_kind: string;
  synthetic_inputs: boolean;
  result: DagResult;
  honesty: string;
}

const SIZE = 12;
const INPUTS = Array.from({ length: SIZE }, (_, k) => input(k));
const D = chainOf(INPUTS);
const LEAVES = D.map((d) => leafHash(d));
const ROOT = rootFromLeafHashes(LEAVES);
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

function filled(n = SIZE): Ledger {
  const l = new Ledger(64);
  INPUTS.slice(0, n).forEach((inp) => l.append(inp));
  return l;
}

let key: SigningKey;
const store = new MemoryStore();
const LEDGER = filled();

const run = (request: string, ledger: Ledger = LEDGER, st: LedgerStore = store, k: SigningKey = key): DagBody => khipuDag(ledger, k, st, request) as unknown as DagBody;
const dag = (request: string, ledger: Ledger = LEDGER): DagResult => run(request, ledger).result;
const req = (params: Record<string, unknown>): string => JSON.stringify(params);

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  return expect.fail('expected an AppError');
}

function notFound(fn: () => unknown, id: string): void {
  const e = thrown(fn);
  expect([e.code, e.status, e.detail]).to.deep.equal(['ITEM_NOT_FOUND', 404, `ledger node '${id}' not found`]);
}

function invalid(fn: () => unknown, issues: ValidationIssue[]): void {
  const e = thrown(fn);
  expect([e.code, e.status]).to.deep.equal(['VALIDATION', 422]);
  expect(e.detail).to.deep.equal(issues);
}

/**
 * The graph expected for receipts `indices` (focus first), written out from the recomputed chain:
 * root, then per receipt its vertex and (with pendants) payload and envelope; edges: includes,
 * then per receipt prev (not for index 0), payload, envelope.
 */
function expectedGraph(indices: number[], pendants: boolean, size = SIZE): { vertices: Record<string, unknown>[]; edges: Edge[] } {
  const vertices: Record<string, unknown>[] = [{ id: 'root', type: 'root', digest: hex(rootFromLeafHashes(LEAVES.slice(0, size))), tree_size: size }];
  const edges: Edge[] = [{ from: 'root', to: `receipt:${indices[0]}`, rel: 'includes' }];
  for (const i of indices) {
    const inp = INPUTS[i]!;
    vertices.push({ id: `receipt:${i}`, type: 'receipt', digest: hex(D[i]!), index: i, kind: inp.kind, ts_utc: inp.tsUtc, prev: i === 0 ? '0'.repeat(64) : hex(D[i - 1]!), pae_sha256: sha256hex(`pae ${i}`) });
    if (i !== 0) edges.push({ from: `receipt:${i}`, to: `receipt:${i - 1}`, rel: 'prev' });
    if (pendants) {
      vertices.push({ id: `payload:${i}`, type: 'payload', digest: sha256hex(`payload ${i}`) }, { id: `envelope:${i}`, type: 'envelope', digest: sha256hex(`pae ${i}`) });
      edges.push({ from: `receipt:${i}`, to: `payload:${i}`, rel: 'payload' }, { from: `receipt:${i}`, to: `envelope:${i}`, rel: 'envelope' });
    }
  }
  return { vertices, edges };
}

const range = (from: number, to: number): number[] => Array.from({ length: from - to + 1 }, (_, k) => from - k);

/** A node sequenced by hand, for applyNode(…, replayed = true), which takes the digest as given. */
const crafted = (index: number, prev: Buffer, digestHex: string): LedgerNode => ({ ...input(index), index, prev, nodeDigest: Buffer.from(digestHex, 'hex'), simulated: false });

describe('khipu DAG (khipuDag, parseDagRequest)', () => {
  before(() => {
    key = loadSigningKey(null);
  });

  it('a label request: defaults (head, depth 8, pendants, proof), the envelope, request hash, durability and limits', () => {
    const body = run('probe label');
    const { result, ...envelope } = body;
    expect(envelope).to.deep.equal({
      schema: 'svc.kernel/v1',
      kernel: 'khipu/dag',
      kernel_version: 1,
      technique: 'hash-chained receipt ledger with an RFC 9162 Merkle tree over node digests',
      references: ['RFC 9162', 'DSSE v1.0.2'],
      seed: null,
      params: { node: 'head', depth: 8, pendants: true, proof: true },
      request_label: 'probe label',
      request_sha256: sha256hex('{"depth":8,"node":"head","pendants":true,"proof":true}'),
      data_kind: 'state',
      synthetic_inputs: false,
      honesty: 'Live ledger state, not a simulation; the ledger is in process memory and resets on restart.',
    });
    const { vertices, edges } = expectedGraph(range(11, 4), true);
    expect(result).to.deep.equal({
      ledger_size: SIZE,
      khipu_root: hex(ROOT),
      root_alg: 'rfc9162-sha256',
      node_digest_formula: 'SHA-256("svc.khipu.node.v1\\n" || uint64_be(index) || prev || pae_sha256)',
      durability: 'EPHEMERAL',
      limits: [
        { code: 'EPHEMERAL_LEDGER', detail: 'The ledger lives in process memory and resets on restart.' },
        { code: 'EPHEMERAL_SIGNING_KEY', detail: 'The signing key was generated at start-up; receipts from before a restart cannot be checked against the new key.' },
      ],
      focus: { index: 11, node_digest: hex(D[11]!) },
      vertices,
      edges,
      inclusion_proof: { leaf_index: 11, tree_size: SIZE, audit_path: refInclusion(LEAVES, 11).map(hex) },
      consistency_proof: null,
      verified: { chain: true, inclusion: true, consistency: null },
    });
    // the audit path really proves node 11 under the root (reference verifier, not the code's call)
    expect(verifyInclusion(LEAVES[11]!, 11, SIZE, result.inclusion_proof!.audit_path.map((h) => Buffer.from(h, 'hex')), ROOT)).to.equal(true);
    // a JSON request has no label; `{}` takes the same defaults and hashes the same
    const json = run('{}');
    expect([json.request_label, json.params, json.request_sha256]).to.deep.equal([null, body.params, body.request_sha256]);
    expect(json.result).to.deep.equal(result);
  });

  it('the request hash is SHA-256 of the canonical JSON of the effective params (keys sorted, numbers kept)', () => {
    const body = run(req({ since: 3, proof: false, node: 5, depth: 2, pendants: false }));
    expect(body.params).to.deep.equal({ node: 5, depth: 2, pendants: false, proof: false, since: 3 });
    expect(body.request_sha256).to.equal(sha256hex('{"depth":2,"node":5,"pendants":false,"proof":false,"since":3}'));
    expect(body.request_label).to.equal(null);
    // a digit string is an index: echoed (and hashed) as a number
    const s = run(req({ node: '7' }));
    expect(s.params).to.deep.equal({ node: 7, depth: 8, pendants: true, proof: true });
    expect(s.request_sha256).to.equal(sha256hex('{"depth":8,"node":7,"pendants":true,"proof":true}'));
    expect(s.result.focus).to.deep.equal({ index: 7, node_digest: hex(D[7]!) });
  });

  it('focus: head, genesis, an index, an 8-hex prefix and a full digest each select the recomputed node', () => {
    const prefixAt = D.findIndex((d, i) => i > 0 && i < SIZE - 1 && /[a-f]/.test(hex(d).slice(0, 8)) && D.filter((x) => hex(x).startsWith(hex(d).slice(0, 8))).length === 1);
    expect(prefixAt).to.be.greaterThan(0);
    const cases: [unknown, number][] = [
      ['head', 11],
      ['genesis', 0],
      [0, 0],
      [6, 6],
      [11, 11],
      [hex(D[prefixAt]!).slice(0, 8), prefixAt],
      [hex(D[9]!), 9],
      [hex(D[3]!).slice(0, 20), 3],
    ];
    for (const [node, index] of cases) {
      const body = run(req({ node, depth: 2 }));
      const r = body.result;
      expect(body.params.node, String(node)).to.equal(node);
      expect(r.focus, String(node)).to.deep.equal({ index, node_digest: hex(D[index]!) });
      expect(r.vertices.filter((v) => v.type === 'receipt').map((v) => v.index), String(node)).to.deep.equal(index === 0 ? [0] : [index, index - 1]);
      expect(r.inclusion_proof, String(node)).to.deep.equal({ leaf_index: index, tree_size: SIZE, audit_path: refInclusion(LEAVES, index).map(hex) });
      expect(r.verified, String(node)).to.deep.equal({ chain: true, inclusion: true, consistency: null });
    }
  });

  it('an index past the newest node or a prefix that matches no digest is 404', () => {
    notFound(() => dag(req({ node: SIZE })), String(SIZE));
    notFound(() => dag(req({ node: 999999 })), '999999');
    notFound(() => dag(req({ node: '99' })), '99');
    const miss = ['ffffffff', 'abcdefab', 'fedcba98'].find((p) => !D.some((d) => hex(d).startsWith(p)))!;
    notFound(() => dag(req({ node: miss })), miss);
    // a full digest one nibble off
    const off = hex(D[4]!).slice(0, 63) + (hex(D[4]!).endsWith('0') ? '1' : '0');
    notFound(() => dag(req({ node: off })), off);
  });

  it('a number of 13+ digits is an index (404), never a digest prefix, even when a digest starts with its digits', () => {
    const l = new Ledger(4);
    l.applyNode(crafted(0, Buffer.alloc(32), `1234567890123${'f'.repeat(51)}`), false, true);
    notFound(() => dag(req({ node: 1234567890123 }), l), '1234567890123');
    notFound(() => dag(req({ node: '1234567890123' }), l), '1234567890123');
    // the same digits with a hex letter after them are a prefix and find the node
    expect(dag(req({ node: '1234567890123f' }), l).focus).to.deep.equal({ index: 0, node_digest: `1234567890123${'f'.repeat(51)}` });
  });

  it('a prefix shared by two node digests is 422 at query.request.node; a longer one picks the node', () => {
    // replayed nodes keep the store's digests, so two may share their first 32 bits (as real
    // digests will, by the birthday bound, in a ledger of some 10⁵ nodes)
    const l = new Ledger(8);
    const d0 = `abcdef01${'a'.repeat(56)}`;
    const d1 = `abcdef01${'b'.repeat(56)}`;
    l.applyNode(crafted(0, Buffer.alloc(32), d0), false, true);
    l.applyNode(crafted(1, Buffer.from(d0, 'hex'), d1), false, true);
    l.append(input(2));
    invalid(() => dag(req({ node: 'abcdef01' }), l), [{ type: 'value_error', loc: ['query', 'request', 'node'], msg: 'Value error, ambiguous digest prefix', input: 'abcdef01', ctx: { error: {} } }]);
    expect(dag(req({ node: 'abcdef01b' }), l).focus).to.deep.equal({ index: 1, node_digest: d1 });
    expect(dag(req({ node: 'abcdef01a' }), l).focus).to.deep.equal({ index: 0, node_digest: d0 });
  });

  it('depth walks back min(depth, index + 1) receipts, newest first, with prev edges only above index 0', () => {
    const cases: [number, number, number[]][] = [
      [11, 8, range(11, 4)],
      [11, 64, range(11, 0)],
      [11, 12, range(11, 0)],
      [11, 11, range(11, 1)],
      [5, 3, [5, 4, 3]],
      [4, 4, [4, 3, 2, 1]],
      [3, 4, [3, 2, 1, 0]],
      [2, 8, [2, 1, 0]],
      [6, 1, [6]],
      [1, 1, [1]],
      [0, 1, [0]],
      [0, 8, [0]],
    ];
    for (const [node, depth, indices] of cases) {
      const r = dag(req({ node, depth }));
      const label = `node ${node} depth ${depth}`;
      expect(r.vertices.filter((v) => v.type === 'receipt').map((v) => v.id), label).to.deep.equal(indices.map((i) => `receipt:${i}`));
      expect(r.edges.filter((e) => e.rel === 'prev'), label).to.deep.equal(indices.filter((i) => i > 0).map((i) => ({ from: `receipt:${i}`, to: `receipt:${i - 1}`, rel: 'prev' })));
      expect({ vertices: r.vertices, edges: r.edges }, label).to.deep.equal(expectedGraph(indices, true));
      expect(r.verified.chain, label).to.equal(true);
    }
    // genesis alone: no prev edge at all, the root includes it
    const g = dag(req({ node: 'genesis', pendants: false }));
    expect(g.edges).to.deep.equal([{ from: 'root', to: 'receipt:0', rel: 'includes' }]);
    expect(g.vertices.map((v) => v.id)).to.deep.equal(['root', 'receipt:0']);
    expect(g.vertices[1]).to.include({ prev: '0'.repeat(64), digest: hex(D[0]!) });
  });

  it('pendants: payload = SHA-256 of the payload bytes, envelope = pae_sha256; none when pendants is false', () => {
    const on = dag(req({ node: 5, depth: 2 }));
    expect(on.vertices.map((v) => v.id)).to.deep.equal(['root', 'receipt:5', 'payload:5', 'envelope:5', 'receipt:4', 'payload:4', 'envelope:4']);
    expect(on.vertices.find((v) => v.id === 'payload:5')).to.deep.equal({ id: 'payload:5', type: 'payload', digest: sha256hex(Buffer.from('payload 5')) });
    expect(on.vertices.find((v) => v.id === 'envelope:4')).to.deep.equal({ id: 'envelope:4', type: 'envelope', digest: hex(INPUTS[4]!.paeSha256) });
    expect(on.edges).to.deep.equal([
      { from: 'root', to: 'receipt:5', rel: 'includes' },
      { from: 'receipt:5', to: 'receipt:4', rel: 'prev' },
      { from: 'receipt:5', to: 'payload:5', rel: 'payload' },
      { from: 'receipt:5', to: 'envelope:5', rel: 'envelope' },
      { from: 'receipt:4', to: 'receipt:3', rel: 'prev' },
      { from: 'receipt:4', to: 'payload:4', rel: 'payload' },
      { from: 'receipt:4', to: 'envelope:4', rel: 'envelope' },
    ]);
    const off = dag(req({ node: 5, depth: 2, pendants: false }));
    expect(off.vertices.map((v) => v.id)).to.deep.equal(['root', 'receipt:5', 'receipt:4']);
    expect({ vertices: off.vertices, edges: off.edges }).to.deep.equal(expectedGraph([5, 4], false));
    expect(off.edges.map((e) => e.rel)).to.deep.equal(['includes', 'prev', 'prev']);
  });

  it('proof false: no inclusion proof and verified.inclusion null, the graph unchanged; a one-node tree has an empty path', () => {
    const r = dag(req({ node: 3, depth: 2, proof: false }));
    expect([r.inclusion_proof, r.verified]).to.deep.equal([null, { chain: true, inclusion: null, consistency: null }]);
    expect({ vertices: r.vertices, edges: r.edges }).to.deep.equal(expectedGraph([3, 2], true));
    expect(r.focus).to.deep.equal({ index: 3, node_digest: hex(D[3]!) });
    const one = dag('x', filled(1));
    expect(one.inclusion_proof).to.deep.equal({ leaf_index: 0, tree_size: 1, audit_path: [] });
    expect(one.verified).to.deep.equal({ chain: true, inclusion: true, consistency: null });
    expect(one.khipu_root).to.equal(hex(LEAVES[0]!));
    expect({ vertices: one.vertices, edges: one.edges }).to.deep.equal(expectedGraph([0], true, 1));
  });

  it('every inclusion proof in a smaller ledger equals the reference and verifies', () => {
    const l = filled(7);
    const leaves = LEAVES.slice(0, 7);
    const root = rootFromLeafHashes(leaves);
    for (let i = 0; i < 7; i++) {
      const r = dag(req({ node: i, depth: 1, pendants: false }), l);
      expect([r.ledger_size, r.khipu_root]).to.deep.equal([7, hex(root)]);
      expect(r.inclusion_proof).to.deep.equal({ leaf_index: i, tree_size: 7, audit_path: refInclusion(leaves, i).map(hex) });
      expect(r.verified.inclusion).to.equal(true);
    }
  });

  it('since: the consistency proof from every earlier size equals the reference and verifies; since = size is an empty path', () => {
    for (let m = 1; m <= SIZE; m++) {
      const r = dag(req({ since: m, proof: false, pendants: false, depth: 1 }));
      const path = refConsistency(LEAVES, m).map(hex);
      expect(r.consistency_proof, `since ${m}`).to.deep.equal({ first: m, second: SIZE, path });
      expect(r.verified, `since ${m}`).to.deep.equal({ chain: true, inclusion: null, consistency: true });
      expect(verifyConsistency(m, SIZE, rootFromLeafHashes(LEAVES.slice(0, m)), ROOT, path.map((h) => Buffer.from(h, 'hex')))).to.equal(true);
    }
    expect(dag(req({ since: SIZE })).consistency_proof).to.deep.equal({ first: SIZE, second: SIZE, path: [] });
    // with a focus and an inclusion proof as well, in a ledger of another size
    const l = filled(9);
    const r = dag(req({ since: 4, node: 'genesis' }), l);
    expect(r.consistency_proof).to.deep.equal({ first: 4, second: 9, path: refConsistency(LEAVES.slice(0, 9), 4).map(hex) });
    expect(r.inclusion_proof).to.deep.equal({ leaf_index: 0, tree_size: 9, audit_path: refInclusion(LEAVES.slice(0, 9), 0).map(hex) });
    expect(r.verified).to.deep.equal({ chain: true, inclusion: true, consistency: true });
  });

  it('since past the ledger size is 422 less_than_equal with le = size, before any focus lookup', () => {
    const tooFar = (size: number, since: number): ValidationIssue => ({
      type: 'less_than_equal',
      loc: ['query', 'request', 'since'],
      msg: `Input should be less than or equal to ${size}`,
      input: since,
      ctx: { le: size },
    });
    invalid(() => dag(req({ since: SIZE + 1 })), [tooFar(SIZE, SIZE + 1)]);
    invalid(() => dag(req({ since: 1000 })), [tooFar(SIZE, 1000)]);
    // checked first: an absent node does not turn it into a 404
    invalid(() => dag(req({ since: SIZE + 1, node: 999 })), [tooFar(SIZE, SIZE + 1)]);
    invalid(() => dag(req({ since: 1 }), new Ledger(4)), [tooFar(0, 1)]);
    invalid(() => dag(req({ since: 4 }), filled(3)), [tooFar(3, 4)]);
    expect(dag(req({ since: 3 }), filled(3)).verified.consistency).to.equal(true);
  });

  it('an empty ledger: head and genesis have no focus, no graph, no proofs; root = SHA-256 of nothing; an index or prefix is 404', () => {
    const empty = new Ledger(4);
    for (const request of ['x', req({ node: 'head' }), req({ node: 'genesis', depth: 64 }), req({ node: 'head', proof: true, pendants: true })]) {
      const body = run(request, empty);
      expect(body.result).to.deep.equal({
        ledger_size: 0,
        khipu_root: EMPTY_SHA256,
        root_alg: 'rfc9162-sha256',
        node_digest_formula: 'SHA-256("svc.khipu.node.v1\\n" || uint64_be(index) || prev || pae_sha256)',
        durability: 'EPHEMERAL',
        limits: [
          { code: 'EPHEMERAL_LEDGER', detail: 'The ledger lives in process memory and resets on restart.' },
          { code: 'EPHEMERAL_SIGNING_KEY', detail: 'The signing key was generated at start-up; receipts from before a restart cannot be checked against the new key.' },
        ],
        focus: null,
        vertices: [],
        edges: [],
        inclusion_proof: null,
        consistency_proof: null,
        verified: { chain: true, inclusion: null, consistency: null },
      });
    }
    expect(sha256hex('')).to.equal(EMPTY_SHA256);
    notFound(() => dag(req({ node: 0 }), empty), '0');
    notFound(() => dag(req({ node: 'abcdef01' }), empty), 'abcdef01');
  });

  it('verified.chain is false when a walked receipt does not link to its predecessor (not constructible through a real Ledger)', () => {
    // A Ledger derives each node's prev from the previous digest (node-table.ts) and applyNode
    // refuses a wrong link, so the check can only fail on storage that serves a bad node: simulated.
    const bad = hex(Buffer.alloc(32, 7));
    class Tampered extends Ledger {
      override get(index: number): LedgerNode | undefined {
        const n = super.get(index);
        return n && index === 5 ? { ...n, prev: Buffer.from(bad, 'hex') } : n;
      }
    }
    const l = new Tampered(64);
    INPUTS.forEach((inp) => l.append(inp));
    const r = dag(req({ node: 7, depth: 4 }), l);
    expect(r.verified).to.deep.equal({ chain: false, inclusion: true, consistency: null });
    expect(r.vertices.find((v) => v.id === 'receipt:5')).to.include({ prev: bad, digest: hex(D[5]!) });
    // the link is checked on the receipt walked, against its predecessor: 5 itself must be walked
    expect(dag(req({ node: 5, depth: 1 }), l).verified.chain).to.equal(false);
    expect(dag(req({ node: 4, depth: 8 }), l).verified.chain).to.equal(true);
    expect(dag(req({ node: 6, depth: 1 }), l).verified.chain).to.equal(true);
    // and only the tampered link fails: the same walk on the real ledger is intact
    expect(dag(req({ node: 7, depth: 4 })).verified.chain).to.equal(true);
  });

  it('durability and limits follow the store and the key (documents.ts)', () => {
    const persisted: SigningKey = { ...key, ephemeral: false };
    const fileStore = (state: AdapterState): LedgerStore =>
      ({ mode: 'file', scope: 'LOCAL_FILE', status: () => ({ configured: true, state, reason: 'r', recovery: { attempts: 0, retry_after_s: 0, last_error: null } }) }) as unknown as LedgerStore;
    const cases: [LedgerStore, SigningKey, string, string[]][] = [
      [store, key, 'EPHEMERAL', ['EPHEMERAL_LEDGER', 'EPHEMERAL_SIGNING_KEY']],
      [store, persisted, 'EPHEMERAL', ['EPHEMERAL_LEDGER']],
      [fileStore('READY'), persisted, 'DURABLE', []],
      [fileStore('READY'), key, 'DURABLE', ['EPHEMERAL_SIGNING_KEY']],
      [fileStore('CORRUPT'), persisted, 'CORRUPT', []],
      [fileStore('UNAVAILABLE'), persisted, 'DEGRADED', []],
    ];
    for (const [st, k, durability, codes] of cases) {
      const r = run('x', LEDGER, st, k).result;
      expect([r.durability, r.limits.map((x) => x.code)]).to.deep.equal([durability, codes]);
    }
  });

  describe('parameters', () => {
    const issue = (field: string, type: string, msg: string, input: unknown, ctx?: Record<string, unknown>): ValidationIssue => ({ type, loc: ['query', 'request', field], msg, input, ...(ctx ? { ctx } : {}) });
    const noMatch = (input: string) => issue('node', 'value_error', 'Value error, does not match any of the allowed types', input, { error: {} });

    it('bounds: depth 1..64, since ≥ 1, node index ≥ 0; the edges are accepted', () => {
      invalid(() => parseDagRequest(req({ depth: 0 })), [issue('depth', 'greater_than_equal', 'Input should be greater than or equal to 1', 0, { ge: 1 })]);
      invalid(() => parseDagRequest(req({ depth: 65 })), [issue('depth', 'less_than_equal', 'Input should be less than or equal to 64', 65, { le: 64 })]);
      invalid(() => parseDagRequest(req({ since: 0 })), [issue('since', 'greater_than_equal', 'Input should be greater than or equal to 1', 0, { ge: 1 })]);
      invalid(() => parseDagRequest(req({ node: -1 })), [issue('node', 'greater_than_equal', 'Input should be greater than or equal to 0', -1, { ge: 0 })]);
      expect(parseDagRequest(req({ depth: 1 })).params.depth).to.equal(1);
      expect(parseDagRequest(req({ depth: 64, since: 1 }))).to.deep.equal({ params: { node: 'head', depth: 64, pendants: true, proof: true, since: 1 }, label: null });
      // khipuDag refuses them the same way, before reading the ledger
      invalid(() => dag(req({ depth: 0 })), [issue('depth', 'greater_than_equal', 'Input should be greater than or equal to 1', 0, { ge: 1 })]);
    });

    it('node: head, genesis, 1..12 digits or 8..64 lowercase hex; anything else is refused', () => {
      for (const bad of ['abc', 'abcdef1', 'a'.repeat(65), 'ABCDEF12', 'tail', 'abcdefg1']) invalid(() => parseDagRequest(req({ node: bad })), [noMatch(bad)]);
      invalid(() => dag(req({ node: 'abcdef1' })), [noMatch('abcdef1')]);
      for (const ok of ['head', 'genesis', 'abcdef12', 'f'.repeat(64)]) expect(parseDagRequest(req({ node: ok })).params.node).to.equal(ok);
      expect(parseDagRequest(req({ node: '000000000012' })).params.node).to.equal(12);
    });

    it('unknown keys are refused; a label keeps every default', () => {
      invalid(() => parseDagRequest(req({ zzz: 1 })), [{ type: 'extra_forbidden', loc: ['query', 'request', 'zzz'], msg: 'Extra inputs are not permitted', input: 1 }]);
      invalid(() => dag(req({ depth: 2, extra: true })), [{ type: 'extra_forbidden', loc: ['query', 'request', 'extra'], msg: 'Extra inputs are not permitted', input: true }]);
      expect(parseDagRequest('anything at all')).to.deep.equal({ params: { node: 'head', depth: 8, pendants: true, proof: true }, label: 'anything at all' });
    });
  });
});
