/**
 * The costly half of a CoT ingest, as a pure function of the body: parse (sax, within the limits),
 * validate, and serialise the exported form once around a stamp marker. It runs in a kernel thread
 * (an event at every limit cost the main thread 7 ms, most of it here); what is left on the main
 * thread is the store's checks and the answer.
 */
import { serialiseFragment, stampedEvent } from './serialise.js';
import { validateCot, type CotValidation } from './validate.js';
import { parseXml, XmlRejection, type CotLimits, type RejectionKind, type XmlElement } from './xml.js';

export interface CotPrepareInput {
  body: string;
  limits: CotLimits;
  nowMs: number;
  /** Stands where the export time goes in the serialised form. */
  marker: string;
}

export interface ExportedForm {
  head: string;
  tail: string;
  valid: boolean;
}

export type PreparedCot =
  | { ok: true; root: XmlElement; validation: CotValidation; exported: ExportedForm | null }
  | { ok: false; kind: RejectionKind; message: string; ctx: Record<string, unknown> };

export function prepareCot({ body, limits, nowMs, marker }: CotPrepareInput): PreparedCot {
  let root: XmlElement;
  try {
    root = parseXml(body, limits);
  } catch (err) {
    if (!(err instanceof XmlRejection)) throw err;
    return { ok: false, kind: err.kind, message: err.message, ctx: err.ctx };
  }
  const validation = validateCot(root, nowMs);
  return { ok: true, root, validation, exported: validation.valid ? exportedForm(root, nowMs, marker) : null };
}

/**
 * Serialised once, split around the export stamp, and checked once: the tree xmlbuilder2
 * serialises is validated as it stands rather than parsed back, since a second parse doubled the
 * cost of an event at the limits.
 */
function exportedForm(root: XmlElement, nowMs: number, marker: string): ExportedForm {
  const stamped = stampedEvent(root, marker);
  const fragment = serialiseFragment(stamped);
  const at = fragment.indexOf(marker);
  return { head: fragment.slice(0, at), tail: fragment.slice(at + marker.length), valid: validateCot(stamped, nowMs).valid };
}
