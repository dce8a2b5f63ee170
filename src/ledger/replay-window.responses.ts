/**
 * Response schema of the replay window: each item is the verdict body the SSE stream carries for a
 * node (nodeVerdictBody), which differs from POST /verdict's answer where a node was stored without
 * its evaluation detail, and in naming only the checkpoint's origin and proof URL.
 */
import Joi from 'joi';
import { int, isoTime, listOf, nullable, num, oneOf, shape, str, bool } from '../http/response-schema.js';
import { AXES_SCHEMA, VERDICT } from '../verdicts/verdicts.responses.js';
import { INCLUSION_PROOF } from './ledger.responses.js';

const PAC_BAYES = shape({ n: int().min(1), kl_posterior_prior: num(), delta: num(), bound: num().min(0), certified_floor: num().min(0).max(1) });

/** One SSE `verdict` event's data: POST /verdict's body, the evaluation-only members null for a node stored without them. */
export const NODE_VERDICT = VERDICT.keys({
  lambda_empirical: nullable(num().min(0).max(1)).description('weighted geometric mean of the axes; null for a node stored without its evaluation detail'),
  pac_bayes: nullable(PAC_BAYES),
  axes: nullable(AXES_SCHEMA),
  geofence: Joi.alternatives(
    shape({ inside: nullable(bool()), zone: nullable(str()), distance_m: nullable(num().min(0)) }),
    shape({ inside: nullable(bool()).description('the signed geofence flag alone, for a node stored without its evaluation detail') }),
  ),
  evaluation: oneOf('FROM_SIGNED_RECEIPT').optional().description('present only for a node stored without its evaluation detail'),
  ledger: shape({
    index: int().min(0),
    node_digest: str().pattern(/^[0-9a-f]{64}$/),
    prev: str().pattern(/^[0-9a-f]{64}$/),
    ledger_size: int().min(1).description('index + 1: the tree as of this node, so the body never depends on when it is read'),
    khipu_root: str().pattern(/^[0-9a-f]{64}$/),
    inclusion_proof: INCLUSION_PROOF,
    checkpoint: shape({ origin: str(), proof_url: str().description('GET: the C2SP tlog-proof of this node against a signed checkpoint') }),
  }),
});

export const REPLAY_WINDOW = shape({
  schema: oneOf('svc.verdict-window/v1'),
  from_ts_utc: isoTime().description('start of the window: the server\u2019s time of the request minus `minutes`'),
  to_ts_utc: isoTime().description('the server\u2019s time of the request'),
  minutes: int().min(1).max(60),
  limit: int().min(1).max(5000),
  count: int().min(0).description('items in this answer'),
  truncated: bool().description('true when verdicts of the window were left out: only the newest `limit` are sent'),
  first_index: nullable(int().min(0)).description('ledger index of the first item; null when there is none'),
  last_index: nullable(int().min(0)).description('ledger index of the last item; null when there is none'),
  ledger_size: int().min(0).description('nodes in the ledger when the window was read; nothing at or past it is included'),
  items: listOf(NODE_VERDICT).description('verdicts in ledger order (oldest first), each exactly the data of the SSE `verdict` event for that node'),
});

