/**
 * A verdict as its ledger node tells it, on any replica at any time: the signed receipt (decision,
 * λ, floor, breaches, geofence flag, track and frame digest) plus the unsigned detail stored with
 * the node (the frame, λ empirical, PAC-Bayes, the 13 axes, the geofence). The detail's frame must
 * hash to the receipt's frame_sha256, so a detail moved to another node is refused, not shown.
 */
import { hash } from 'node:crypto';
import type { LedgerNode } from '../ledger/ledger.js';
import type { ReceiptBody, ReceiptSubject } from '../ledger/receipt.js';
import { canonicalJson } from '../lib/numbers.js';
import type { Evaluation } from './evaluate.js';
import type { TelemetryFrame } from './telemetry.js';

/** What the receipt does not sign, kept with the node. */
export interface VerdictDetail {
  frame: TelemetryFrame;
  lambda_empirical: number;
  pac_bayes: Evaluation['pacBayes'];
  axes: Evaluation['axes'];
  geofence: Evaluation['geofence'];
}

export function detailBytes(frame: TelemetryFrame, e: Evaluation): Buffer {
  const detail: VerdictDetail = { frame, lambda_empirical: e.lambdaEmpirical, pac_bayes: e.pacBayes, axes: e.axes, geofence: e.geofence };
  return Buffer.from(JSON.stringify(detail), 'utf8');
}

export interface NodeVerdict {
  receipt: ReceiptBody;
  subject: ReceiptSubject | null;
  /** Null for a node written without detail (or whose detail does not match its receipt). */
  detail: VerdictDetail | null;
}

/**
 * The verdict a receipt node carries (its signed payload parsed, its detail checked against it;
 * `ownDetail`: the detail was written by this process with the node, so the check is skipped).
 */
export function nodeVerdict(node: LedgerNode, ownDetail = false): NodeVerdict {
  const signed = JSON.parse(node.payload.toString('utf8')) as { payload: ReceiptBody; subject?: ReceiptSubject };
  const subject = signed.subject ?? null;
  let detail: VerdictDetail | null = null;
  if (node.detail && subject) {
    try {
      const d = JSON.parse(node.detail.toString('utf8')) as VerdictDetail;
      if (ownDetail || hash('sha256', canonicalJson(d.frame), 'hex') === subject.frame_sha256) detail = d;
    } catch {
      // unreadable detail: the verdict is told from its signed receipt alone
    }
  }
  return { receipt: signed.payload, subject, detail };
}
