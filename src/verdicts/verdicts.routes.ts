/** POST /verdict: evaluate one telemetry frame, sign the receipt, append it, answer with proof. */
import { defineRoute, type RouteDef } from '../http/route.js';
import { dsseDocument } from '../ledger/receipt.js';
import { publicKeyUrl } from '../ledger/documents.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import type { LedgerNode } from '../ledger/ledger.js';
import { nodeVerdict } from './detail.js';
import { telemetryFrameSchema } from './telemetry.js';
import type { Verdict, VerdictService } from './verdict-service.js';
import { VERDICT } from './verdicts.responses.js';

/** The signed receipt of a verdict answer: the DSSE document, its payload again, and where the key is. */
function receiptPart(node: LedgerNode, keyUrl: string | null): Record<string, unknown> {
  const dsse = dsseDocument(node);
  const part: Record<string, unknown> = { dsse, payload_b64: dsse.payload, keyid: node.keyid };
  if (keyUrl) part.public_key_url = keyUrl;
  return part;
}

/** What of the ledger a verdict answer reads: the tree, and the signed checkpoints over it. */
export type VerdictLedger = Pick<LedgerCore, 'ledger' | 'checkpoints'>;

/**
 * Where a verdict sits in the ledger: its inclusion proof against the tree as it is now, and which
 * signed checkpoint covers it (a new verdict is covered by the next one, signed within the interval;
 * its proof_url answers the offline tlog-proof once it is).
 */
function ledgerPart(node: LedgerNode, { ledger, checkpoints }: VerdictLedger): Record<string, unknown> {
  return { ...treePart(node, ledger.size, ledger), checkpoint: checkpoints.coverage(node.index) };
}

function treePart(node: LedgerNode, size: number, ledger: VerdictLedger['ledger']): Record<string, unknown> {
  return {
    index: node.index,
    node_digest: node.nodeDigest.toString('hex'),
    prev: node.prev.toString('hex'),
    ledger_size: size,
    khipu_root: ledger.root(size).toString('hex'),
    inclusion_proof: { leaf_index: node.index, tree_size: size, audit_path: ledger.inclusionProof(node.index, size).map((h) => h.toString('hex')) },
  };
}

/** The public shape of a verdict, as POST /verdict answers it. */
export function verdictBody(v: Verdict, ledger: VerdictLedger, keyUrl: string | null): Record<string, unknown> {
  const e = v.evaluation;
  return {
    schema: 'svc.verdict/v1',
    track_id: v.frame.track_id,
    source: v.frame.source ?? null,
    decision: e.decision,
    lambda: e.lambda,
    lambda_empirical: e.lambdaEmpirical,
    lambda_floor: e.lambdaFloor,
    pac_bayes: e.pacBayes,
    axes: e.axes,
    geofence: e.geofence,
    breaches: e.breaches,
    frame: v.frame,
    simulated: v.simulated,
    ts_utc: v.node.tsUtc,
    receipt: receiptPart(v.node, keyUrl),
    ledger: ledgerPart(v.node, ledger),
  };
}

/**
 * The same public shape built from a ledger node alone, identical on every replica and at every
 * time: what the SSE stream carries (live, resumed or backfilled). The signed receipt gives the
 * decision, λ, the floor, breaches, the geofence flag and the track; the detail stored with the
 * node gives the frame (which hashes to the signed frame_sha256), its source, λ empirical,
 * PAC-Bayes, the axes and the geofence. A node written without detail has those null and
 * `evaluation: FROM_SIGNED_RECEIPT`. The ledger part is the tree as of this node (ledger_size =
 * index + 1), so it never depends on when it is read; the proof against a signed checkpoint is at
 * `checkpoint.proof_url`.
 */
export function nodeVerdictBody(node: LedgerNode, ledger: VerdictLedger, keyUrl: string | null): Record<string, unknown> {
  const { receipt: b, subject, detail: d } = nodeVerdict(node);
  const { origin, proof_url } = ledger.checkpoints.coverage(node.index);
  const tree = { ...treePart(node, node.index + 1, ledger.ledger), checkpoint: { origin, proof_url } };
  return {
    schema: 'svc.verdict/v1',
    track_id: subject?.track_id ?? null,
    source: d?.frame.source ?? null,
    decision: b.decision,
    lambda: b.lambda,
    lambda_empirical: d?.lambda_empirical ?? null,
    lambda_floor: b.lambda_floor,
    pac_bayes: d?.pac_bayes ?? null,
    axes: d?.axes ?? null,
    geofence: d?.geofence ?? { inside: b.geofence_inside },
    breaches: b.breaches,
    frame: d?.frame ?? null,
    simulated: node.simulated,
    ts_utc: node.tsUtc,
    ...(d ? {} : { evaluation: 'FROM_SIGNED_RECEIPT' }),
    receipt: receiptPart(node, keyUrl),
    ledger: tree,
  };
}

/** A frame that scores well on every axis; the variants below change only what their names say. */
const STRONG_FRAME = { source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 0, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 100000 };

/**
 * One body per decision, hovering (so a repeat of the same track scores the same) and without
 * ts_utc (so freshness does not age the example); each its own track, since the kinematic axes
 * compare a track with its previous fix.
 */
export const VERDICT_EXAMPLES = {
  allow: { summary: 'ALLOW: an authenticated ADS-B track outside every no-fly zone (λ ≈ 0.91)', value: { track_id: 'A1B2C3', ...STRONG_FRAME } },
  review: {
    summary: 'REVIEW: the same track unauthenticated, with a weaker signal (λ ≈ 0.84)',
    value: { track_id: 'A1B2C5', ...STRONG_FRAME, rssi_dbm: -70, id_authenticated: false },
  },
  deny: { summary: 'DENY: inside the demo no-fly zone nfz-demo-1 (λ ≈ 0.14)', value: { track_id: 'A1B2C4', ...STRONG_FRAME, lat: 36.23, lon: -115.16 } },
} as const;

/** What a route that decides verdicts reaches: it evaluates, signs in the pool, appends and updates the scene. */
export const DECIDES_VERDICTS = {
  uses: ['verdict-engine', 'signer', 'worker-pool', 'ledger', 'scene-buffer'],
  mutates: ['ledger', 'scene-buffer'],
} as const satisfies Pick<RouteDef, 'uses' | 'mutates'>;

export function verdictRoutes(verdicts: VerdictService, ledger: VerdictLedger, publicBaseUrl: string | null): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/verdict',
      ...DECIDES_VERDICTS,
      cost: 'kernel',
      write: true,
      summary: 'Evaluate a telemetry frame: 13 axes, PAC-Bayes certified floor, ALLOW/REVIEW/DENY; signed DSSE receipt appended to the ledger',
      tag: 'verdicts',
      body: telemetryFrameSchema,
      examples: VERDICT_EXAMPLES,
      errors: [413, 415, 503],
      response: VERDICT,
      async handler({ body, ctx }) {
        const v = await verdicts.decide(body);
        return verdictBody(v, ledger, publicKeyUrl(ctx, publicBaseUrl));
      },
    }),
  ];
}
