/**
 * One node of the file-mode log as one JSON line (khipu.jsonl), written and checked the same way
 * by the store, fsck and the audit recipe: the node's fields in a fixed order, payload and
 * signature in base64, digests in hex.
 */
import { pae, PAYLOAD_TYPE, sha256 } from '../dsse.js';
import { nodeDigest, ZERO_DIGEST, type LedgerNode } from '../ledger.js';

export const FILE_SCHEMA = 'svc.khipu-file/v1';
export const LEDGER_FILE = 'khipu.jsonl';
const HEX32 = /^[0-9a-f]{64}$/;

/** One line of the log, the node's fields in a fixed order. */
interface NodeLine {
  i: number;
  kind: string;
  ts_utc: string;
  simulated: boolean;
  keyid: string;
  payload_type: string;
  payload: string;
  sig: string;
  pae_sha256: string;
  prev: string;
  digest: string;
  /** The unsigned evaluation detail, a JSON object, after the fields the digest covers. */
  detail?: unknown;
}

export function nodeLine(n: LedgerNode): string {
  const line: NodeLine = {
    i: n.index,
    kind: n.kind,
    ts_utc: n.tsUtc,
    simulated: n.simulated,
    keyid: n.keyid,
    payload_type: PAYLOAD_TYPE,
    payload: n.payload.toString('base64'),
    sig: n.sig.toString('base64'),
    pae_sha256: n.paeSha256.toString('hex'),
    prev: n.prev.toString('hex'),
    digest: n.nodeDigest.toString('hex'),
  };
  if (!n.detail) return `${JSON.stringify(line)}\n`;
  // the detail is JSON text already: spliced in, not parsed and serialised again
  return `${JSON.stringify(line).slice(0, -1)},"detail":${n.detail.toString('utf8')}}\n`;
}

/** Parses and checks one line against the chain so far; a string says what is wrong. */
export function parseNodeLine(text: string, index: number, head: Buffer): LedgerNode | string {
  let l: NodeLine;
  try {
    l = JSON.parse(text) as NodeLine;
  } catch {
    return 'line is not JSON';
  }
  if (typeof l !== 'object' || l === null) return 'line is not a JSON object';
  if (l.i !== index) return `index ${String(l.i)} where ${index} was expected`;
  for (const f of ['pae_sha256', 'prev', 'digest'] as const) if (typeof l[f] !== 'string' || !HEX32.test(l[f])) return `${f} is not a hex SHA-256`;
  if (typeof l.payload !== 'string' || typeof l.sig !== 'string' || typeof l.keyid !== 'string' || typeof l.kind !== 'string' || typeof l.ts_utc !== 'string') return 'a field is missing';
  if (l.payload_type !== PAYLOAD_TYPE) return `payload_type is not ${PAYLOAD_TYPE}`;
  const payload = Buffer.from(l.payload, 'base64');
  const paeSha256 = sha256(pae(PAYLOAD_TYPE, payload));
  if (paeSha256.toString('hex') !== l.pae_sha256) return 'pae_sha256 does not recompute from the payload';
  const prev = Buffer.from(l.prev, 'hex');
  if (!prev.equals(index === 0 ? ZERO_DIGEST : head)) return `prev does not match node ${index - 1}`;
  const digest = nodeDigest(index, prev, paeSha256);
  if (digest.toString('hex') !== l.digest) return 'node digest does not recompute';
  const node: LedgerNode = { index, kind: l.kind, tsUtc: l.ts_utc, simulated: l.simulated === true, keyid: l.keyid, payload, paeSha256, sig: Buffer.from(l.sig, 'base64'), prev, nodeDigest: digest };
  if (typeof l.detail === 'object' && l.detail !== null) node.detail = Buffer.from(JSON.stringify(l.detail), 'utf8');
  return node;
}
