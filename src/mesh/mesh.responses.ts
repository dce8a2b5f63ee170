/** The mesh wire board, every status and counter read from the running service. */
import { hex64, int, isoTime, listOf, nullable, num, oneOf, shape, str } from '../http/response-schema.js';
import { DECISION } from '../verdicts/verdicts.responses.js';

const WIRE = (counters: Parameters<typeof shape>[0]) =>
  shape({ edge: str(), status: oneOf('LIVE', 'LIVE_IN_PROCESS', 'IDLE'), detail: str(), counters: shape(counters) });

const lastAt = () => nullable(isoTime());

export const MESH_STATE = shape({
  doctrine: str(),
  wires: shape({
    B: WIRE({ events: int().min(0), batches: int().min(0) }).description('immune-verdict link: verdict engine → receipt signer'),
    C: WIRE({ events: int().min(0), subscribers: int().min(0), dropped: int().min(0), last_at: lastAt() }).description('receipt stream → SSE viewers (IDLE without viewers)'),
    D: WIRE({ events: int().min(0) }).description('W3C traceparent propagation, in process'),
    E: WIRE({ events: int().min(0), last_at: lastAt() }).description('cortex sync over the in-memory event bus'),
    F: WIRE({ events: int().min(0), nodes: int().min(0), last_at: lastAt() }).description('receipt ingest into the ledger'),
  }),
  recent_traces: listOf(shape({ traceparent: str(), at: isoTime(), method: str(), route: str(), status: int(), ms: num().min(0) })).max(32),
  cortex_events: listOf(shape({ type: oneOf('verdict'), at: isoTime(), index: int().min(0), decision: DECISION, simulated: oneOf(true, false) })).max(32),
  khipu_root: nullable(hex64()),
  khipu_nodes: listOf(shape({ index: int().min(0), digest: hex64(), kind: str(), ts: isoTime() })).max(16),
  coexists_with: str(),
  honesty: str(),
});
