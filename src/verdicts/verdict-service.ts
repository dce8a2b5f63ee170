/**
 * The one path from telemetry to a ledger node, shared by POST /verdict, POST /edge/3d and the
 * simulated flight: evaluate, then serialise, hash and sign the receipt in the signing lane
 * (batched), then append in one durable batch. A batch is all-or-nothing: slots are reserved
 * first, every receipt is awaited, and only then are the nodes appended together.
 */
import type { NoFlyZone } from '../ledger/ledger.config.js';
import type { Ledger, LedgerNode } from '../ledger/ledger.js';
import type { LedgerWriter } from '../ledger/writer.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import type { SignedReceipt, Signer } from '../ledger/signer.js';
import { fromServiceError } from '../http/errors.js';
import { ServiceError } from '../lib/service-error.js';
import type { PreviousFix } from './axes.js';
import { detailBytes } from './detail.js';
import { evaluate, type Evaluation } from './evaluate.js';
import { rfc3339Ms, type TelemetryFrame } from './telemetry.js';

export interface Verdict {
  frame: TelemetryFrame;
  evaluation: Evaluation;
  node: LedgerNode;
  simulated: boolean;
}

export type VerdictListener = (v: Verdict) => void;

/** Last fix per track, bounded: oldest tracks are forgotten first. */
class TrackMemory {
  private readonly fixes = new Map<string, PreviousFix>();
  constructor(private readonly capacity: number) {}

  get(id: string): PreviousFix | undefined {
    return this.fixes.get(id);
  }

  set(id: string, fix: PreviousFix): void {
    this.fixes.delete(id);
    this.fixes.set(id, fix);
    if (this.fixes.size > this.capacity) this.fixes.delete(this.fixes.keys().next().value!);
  }
}

export class VerdictService {
  private readonly tracks = new TrackMemory(10_000);
  private readonly listeners = new Set<VerdictListener>();
  /** Appends by origin, for the mesh wire board (wire F). */
  appended = 0;

  constructor(
    private readonly ledger: Ledger,
    private readonly writer: LedgerWriter,
    private readonly signer: Signer,
    private readonly keyid: string,
    private readonly zones: readonly NoFlyZone[],
    private readonly retryAfterS: number,
  ) {}

  onVerdict(l: VerdictListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  async decide(frame: TelemetryFrame, opts: { simulated?: boolean; nowMs?: number } = {}): Promise<Verdict> {
    return (await this.decideAll([frame], opts))[0]!;
  }

  async decideAll(frames: readonly TelemetryFrame[], opts: { simulated?: boolean; nowMs?: number } = {}): Promise<Verdict[]> {
    try {
      this.ledger.reserve(frames.length);
    } catch (err) {
      if (err instanceof ServiceError) throw fromServiceError(err, this.retryAfterS);
      throw err;
    }
    const nowMs = opts.nowMs ?? Date.now();
    const simulated = opts.simulated ?? false;
    let prepared;
    // fixes of this batch, committed to the track memory only once the batch is appended: a
    // verdict that fails (signing, capacity) must not become the "previous fix" of the next one
    const batchFixes = new Map<string, PreviousFix>();
    try {
      prepared = frames.map((frame) => {
        const previous = batchFixes.get(frame.track_id) ?? this.tracks.get(frame.track_id);
        const evaluation = evaluate(frame, this.zones, previous, nowMs);
        batchFixes.set(frame.track_id, { lat: frame.lat, lon: frame.lon, atMs: frame.ts_utc ? rfc3339Ms(frame.ts_utc) : nowMs });
        return { frame, evaluation };
      });
    } catch (err) {
      this.ledger.release(frames.length);
      throw err;
    }
    const tsUtc = new Date(nowMs).toISOString();
    let receipts: SignedReceipt[];
    try {
      receipts = await Promise.all(
        // the frame goes with the receipt: the lane binds it by digest, so no two frames share a payload
        prepared.map(({ frame, evaluation: e }) =>
          this.signer.signReceipt({ breaches: e.breaches, decision: e.decision, geofence_inside: e.geofence.inside, lambda: e.lambda, lambda_floor: e.lambdaFloor }, tsUtc, frame),
        ),
      );
    } catch (err) {
      this.ledger.release(frames.length);
      throw err;
    }
    // one durable batch: contiguous indices, answered only once the store has it
    let nodes: LedgerNode[];
    try {
      nodes = await this.writer.append(
        receipts.map((r, i) => ({ kind: RECEIPT_KIND, tsUtc, payload: r.payload, paeSha256: r.paeSha256, sig: r.sig, keyid: this.keyid, simulated, detail: detailBytes(prepared[i]!.frame, prepared[i]!.evaluation) })),
      );
    } catch (err) {
      this.ledger.release(frames.length);
      if (err instanceof ServiceError) throw fromServiceError(err, this.retryAfterS);
      throw err;
    }
    const verdicts = prepared.map((p, i): Verdict => ({ frame: p.frame, evaluation: p.evaluation, node: nodes[i]!, simulated }));
    // only now, with the nodes durable, does the track history move on
    for (const [id, fix] of batchFixes) this.tracks.set(id, fix);
    this.appended += verdicts.length;
    for (const v of verdicts) for (const l of this.listeners) l(v);
    return verdicts;
  }
}
