// The public verdict shape (verdicts.routes.ts): verdictBody from a live verdict and nodeVerdictBody
// from a stored node alone, each field read back from the frame, the evaluation or the node, and
// the proof recomputed from the ledger's own digests with the reference Merkle functions.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Ledger, type LedgerNode } from '../../src/ledger/ledger.js';
import { pae, PAYLOAD_TYPE, sha256 } from '../../src/ledger/dsse.js';
import { RECEIPT_KIND, receiptPayload, receiptSubject } from '../../src/ledger/receipt.js';
import { detailBytes } from '../../src/verdicts/detail.js';
import { inclusionProof, leafHash, rootFromLeafHashes, verifyInclusion } from '../../src/lib/merkle.js';
import { evaluate } from '../../src/verdicts/evaluate.js';
import { nodeVerdictBody, verdictBody, verdictRoutes, DECIDES_VERDICTS, type VerdictLedger } from '../../src/verdicts/verdicts.routes.js';
import type { Checkpoints } from '../../src/ledger/checkpoint.js';
import type { Verdict, VerdictService } from '../../src/verdicts/verdict-service.js';
import type { TelemetryFrame } from '../../src/verdicts/telemetry.js';
import type { NoFlyZone } from '../../src/ledger/ledger.config.js';

const zone: NoFlyZone = { id: 'nf-test', name: 'test', polygon: [[36.0, -115.2], [36.0, -115.0], [36.2, -115.0], [36.2, -115.2]] };
const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);

function frameAt(k: number, extra: Partial<TelemetryFrame> = {}): TelemetryFrame {
  return { track_id: `t${k}`, source: 'ADS-B', lat: 36.1 + k * 0.05, lon: -115.1, alt_m: 90, n_observations: 100 + k * 300, id_authenticated: k % 2 === 0, ...extra };
}

/** Evaluates, builds the receipt and appends it the way the verdict service does (signature bytes stand in). */
function verdictOf(ledger: Ledger, frame: TelemetryFrame, simulated: boolean, opts: { bound?: boolean; detail?: Buffer } = {}): Verdict {
  const evaluation = evaluate(frame, [zone], undefined, NOW);
  const tsUtc = new Date(NOW).toISOString();
  const body = { breaches: evaluation.breaches, decision: evaluation.decision, geofence_inside: evaluation.geofence.inside, lambda: evaluation.lambda, lambda_floor: evaluation.lambdaFloor };
  const payload = opts.bound ? receiptPayload(body, tsUtc, RECEIPT_KIND, receiptSubject(frame)) : receiptPayload(body, tsUtc);
  const detail = opts.detail ?? (opts.bound ? detailBytes(frame, evaluation) : null);
  const node = ledger.append({ kind: 'counter_uas_decision', tsUtc, payload, paeSha256: sha256(pae(PAYLOAD_TYPE, payload)), sig: Buffer.from(`sig-${frame.track_id}`), keyid: 'ab'.repeat(32), simulated, detail });
  return { frame, evaluation, node, simulated };
}

/** The ledger with a checkpoint source that has signed nothing yet (its coverage is tested with Checkpoints). */
const core = (ledger: Ledger): VerdictLedger => ({ ledger, checkpoints: { coverage: (index: number) => ({ origin: 'o', newest_size: null, covers: false, covered_within_ms: 1000, proof_url: `/api/svc/v1/receipt/proof?index=${index}` }) } as unknown as Checkpoints });

const digests = (ledger: Ledger): Buffer[] => Array.from({ length: ledger.size }, (_, i) => ledger.get(i)!.nodeDigest);

/** The ledger part: against the tree now (a verdict answer), or as of the node itself (a stored verdict). */
function expectLedgerPart(body: Record<string, unknown>, node: LedgerNode, ledger: Ledger, asOfNode = false): void {
  const size = asOfNode ? node.index + 1 : ledger.size;
  const leaves = digests(ledger).slice(0, size).map((d) => leafHash(d));
  const root = rootFromLeafHashes(leaves);
  const path = inclusionProof(leaves, node.index);
  const proofUrl = `/api/svc/v1/receipt/proof?index=${node.index}`;
  expect(body.ledger).to.deep.equal({
    index: node.index,
    node_digest: node.nodeDigest.toString('hex'),
    prev: (node.index === 0 ? Buffer.alloc(32) : ledger.get(node.index - 1)!.nodeDigest).toString('hex'),
    ledger_size: size,
    khipu_root: root.toString('hex'),
    inclusion_proof: { leaf_index: node.index, tree_size: size, audit_path: path.map((h) => h.toString('hex')) },
    checkpoint: asOfNode ? { origin: 'o', proof_url: proofUrl } : { origin: 'o', newest_size: null, covers: false, covered_within_ms: 1000, proof_url: proofUrl },
  });
  expect(verifyInclusion(leafHash(node.nodeDigest), node.index, size, path, root)).to.equal(true);
}

function expectReceiptPart(body: Record<string, unknown>, node: LedgerNode, keyUrl: string | null): void {
  const receipt = body.receipt as Record<string, unknown>;
  expect(receipt.payload_b64).to.equal(node.payload.toString('base64'));
  expect(receipt.keyid).to.equal(node.keyid);
  const dsse = receipt.dsse as { payload: string; signatures: { sig: string; keyid: string }[]; _pae_sha256: string };
  expect(Buffer.from(dsse.payload, 'base64').equals(node.payload)).to.equal(true);
  expect(dsse.signatures).to.deep.equal([{ sig: node.sig.toString('base64'), keyid: node.keyid }]);
  expect(dsse._pae_sha256).to.equal(createHash('sha256').update(pae(PAYLOAD_TYPE, node.payload)).digest('hex'));
  if (keyUrl === null) expect(receipt).to.not.have.property('public_key_url');
  else expect(receipt.public_key_url).to.equal(keyUrl);
}

describe('verdict body', () => {
  it('verdictBody carries the frame, every part of the evaluation, the receipt and a proof against the current tree', () => {
    const ledger = new Ledger(100);
    const verdicts = [0, 1, 2, 3, 4].map((k) => verdictOf(ledger, frameAt(k), k === 3));
    // read after more appends than the verdict's own: size, root and proof are of the tree now
    for (const v of [verdicts[0]!, verdicts[3]!, verdicts[4]!]) {
      const body = verdictBody(v, core(ledger), 'https://svc.example/api/svc/v1/edge/pubkey.pem');
      const e = v.evaluation;
      expect(body).to.include({ schema: 'svc.verdict/v1', track_id: v.frame.track_id, source: 'ADS-B', decision: e.decision, lambda: e.lambda, lambda_empirical: e.lambdaEmpirical, lambda_floor: e.lambdaFloor, simulated: v.simulated, ts_utc: new Date(NOW).toISOString() });
      expect([body.pac_bayes, body.axes, body.geofence, body.breaches]).to.deep.equal([e.pacBayes, e.axes, e.geofence, e.breaches]);
      expectReceiptPart(body, v.node, 'https://svc.example/api/svc/v1/edge/pubkey.pem');
      expectLedgerPart(body, v.node, ledger);
    }
    expect(verdictBody(verdicts[3]!, core(ledger), null).simulated).to.equal(true);
    expect(verdictBody(verdicts[2]!, core(ledger), null).simulated).to.equal(false);
  });

  it('verdictBody: a frame without a source answers source null; no key URL leaves public_key_url out', () => {
    const ledger = new Ledger(10);
    const { source: _omit, ...noSource } = frameAt(1);
    const v = verdictOf(ledger, noSource, false);
    const body = verdictBody(v, core(ledger), null);
    expect(body.source).to.equal(null);
    expectReceiptPart(body, v.node, null);
  });

  it('nodeVerdictBody reads the decision, λ, floor, breaches and geofence flag from the signed payload and marks the rest null', () => {
    const ledger = new Ledger(100);
    // one frame inside the zone (breach, DENY side) and one outside, so the signed fields differ
    const inside = verdictOf(ledger, frameAt(0, { lat: 36.1, lon: -115.1 }), false);
    const outside = verdictOf(ledger, frameAt(9, { lat: 37.5, lon: -115.1, n_observations: 5000, id_authenticated: true }), true);
    verdictOf(ledger, frameAt(2), false);
    expect(inside.evaluation.geofence.inside).to.equal(true);
    expect(outside.evaluation.geofence.inside).to.equal(false);
    for (const v of [inside, outside]) {
      const node = ledger.get(v.node.index)!;
      const body = nodeVerdictBody(node, core(ledger), 'https://k.example/pub.pem');
      const e = v.evaluation;
      expect(body).to.include({ schema: 'svc.verdict/v1', track_id: null, source: null, decision: e.decision, lambda: e.lambda, lambda_empirical: null, lambda_floor: e.lambdaFloor, pac_bayes: null, axes: null, frame: null, simulated: v.simulated, ts_utc: node.tsUtc, evaluation: 'FROM_SIGNED_RECEIPT' });
      expect(body.geofence).to.deep.equal({ inside: e.geofence.inside });
      expect(body.breaches).to.deep.equal(JSON.parse(JSON.stringify(e.breaches)));
      expectReceiptPart(body, node, 'https://k.example/pub.pem');
      expectLedgerPart(body, node, ledger, true);
    }
    expect(inside.evaluation.breaches.length).to.be.greaterThan(0);
    expectReceiptPart(nodeVerdictBody(ledger.get(1)!, core(ledger), null), ledger.get(1)!, null);
  });

  it('nodeVerdictBody of a node stored with its detail equals the verdict answer but for the ledger part, whenever it is read', () => {
    const ledger = new Ledger(100);
    const verdicts = [0, 1, 2].map((k) => verdictOf(ledger, frameAt(k), k === 1, { bound: true }));
    const stored = verdicts.map((v) => JSON.stringify(nodeVerdictBody(ledger.get(v.node.index)!, core(ledger), null)));
    for (const v of verdicts) {
      const { ledger: answerLedger, ...answer } = verdictBody(v, core(ledger), null);
      const { ledger: storedLedger, ...fromNode } = nodeVerdictBody(ledger.get(v.node.index)!, core(ledger), null);
      expect(JSON.parse(JSON.stringify(fromNode))).to.deep.equal(JSON.parse(JSON.stringify(answer)));
      expect((answerLedger as { ledger_size: number }).ledger_size).to.equal(ledger.size);
      expectLedgerPart({ ledger: storedLedger }, v.node, ledger, true);
    }
    // the frame shown is the one the receipt signed: its RFC 8785 SHA-256 is the subject's frame_sha256
    for (const v of verdicts) {
      const body = nodeVerdictBody(ledger.get(v.node.index)!, core(ledger), null) as { frame: TelemetryFrame; receipt: { payload_b64: string } };
      expect(body.frame).to.deep.equal(v.frame);
      const signed = JSON.parse(Buffer.from(body.receipt.payload_b64, 'base64').toString('utf8')) as { subject: { frame_sha256: string } };
      // a flat frame's RFC 8785 form is its members sorted by key with no whitespace
      const jcs = JSON.stringify(Object.fromEntries(Object.entries(body.frame).sort(([a], [b]) => (a < b ? -1 : 1))));
      expect(createHash('sha256').update(jcs).digest('hex')).to.equal(signed.subject.frame_sha256);
    }
    // the ledger grows: the stored verdicts' bodies do not change by a byte
    verdictOf(ledger, frameAt(7), false, { bound: true });
    expect(verdicts.map((v) => JSON.stringify(nodeVerdictBody(ledger.get(v.node.index)!, core(ledger), null)))).to.deep.equal(stored);
  });

  it('nodeVerdictBody refuses a detail whose frame is not the one the receipt signed (moved from another node)', () => {
    const ledger = new Ledger(10);
    const other = frameAt(5);
    const v = verdictOf(ledger, frameAt(1), false, { bound: true, detail: detailBytes(other, evaluate(other, [zone], undefined, NOW)) });
    const body = nodeVerdictBody(ledger.get(v.node.index)!, core(ledger), null);
    expect(body).to.include({ track_id: 't1', source: null, lambda_empirical: null, pac_bayes: null, axes: null, evaluation: 'FROM_SIGNED_RECEIPT' });
  });

  it('a verdict route reaches the engine, the signer, the pool, the ledger and the scene, and mutates the ledger and the scene', () => {
    expect(DECIDES_VERDICTS).to.deep.equal({ uses: ['verdict-engine', 'signer', 'worker-pool', 'ledger', 'scene-buffer'], mutates: ['ledger', 'scene-buffer'] });
  });

  it('POST /verdict decides the posted frame and answers its body with the key URL of the configured base, else the request origin', async () => {
    const ledger = new Ledger(10);
    const decided: TelemetryFrame[] = [];
    const service = { decide: (f: TelemetryFrame) => (decided.push(f), Promise.resolve(verdictOf(ledger, f, false))) } as unknown as VerdictService;
    const ctx = { protocol: 'http', host: '127.0.0.1:9' };
    for (const [base, url] of [[null, 'http://127.0.0.1:9/api/svc/v1/edge/pubkey.pem'], ['https://pub.example/', 'https://pub.example/api/svc/v1/edge/pubkey.pem']] as const) {
      const [route] = verdictRoutes(service, core(ledger), base);
      expect([route!.method, route!.path, route!.write]).to.deep.equal(['POST', '/verdict', true]);
      const frame = frameAt(decided.length);
      const body = (await route!.handler({ body: frame, ctx } as never)) as Record<string, unknown>;
      expect(decided.at(-1)).to.equal(frame);
      expect(body.track_id).to.equal(frame.track_id);
      expect((body.receipt as { public_key_url: string }).public_key_url).to.equal(url);
      expectLedgerPart(body, ledger.get(decided.length - 1)!, ledger);
    }
  });
});
