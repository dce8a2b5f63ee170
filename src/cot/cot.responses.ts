/** Response schemas of the CoT routes: the ingest answer and the status document. */
import Joi from 'joi';
import { bool, int, listOf, mapOf, nullable, num, oneOf, shape, str, text } from '../http/response-schema.js';

const ISSUE = shape({ path: str(), code: str(), message: str(), value: str().optional() });

/** A detail subtree as JSON: `{name, attributes, text?, children?}` (children recursive). */
const NODE = Joi.object({
  name: str().required(),
  attributes: mapOf(str()).required(),
  text: str().optional(),
  children: Joi.array().items(Joi.link('#cotNode')).optional(),
}).id('cotNode');

export const INGEST = shape({
  accepted: oneOf(true),
  stored: bool(),
  store_result: oneOf('new', 'replaced_older', 'not_newer_than_stored'),
  evicted_uid: nullable(str()).description('the track evicted to make room (store cap), if any'),
  track_id: str(),
  export_path: str(),
  uid: str(),
  type: str(),
  how: str(),
  time: str(),
  start: str(),
  stale: str(),
  is_stale: bool(),
  point: shape({ lat: num(), lon: num(), hae: num(), ce: num(), le: num() }),
  callsign: nullable(str()),
  detail_children: listOf(str()).description('element names directly under <detail>'),
  event: shape({
    attributes: mapOf(str()).description('the <event> attributes as sent'),
    point: mapOf(str()).description('the <point> attributes as sent'),
    detail: nullable(NODE),
  }),
  validation: shape({ valid: oneOf(true), errors: listOf(ISSUE).max(0), warnings: listOf(ISSUE) }).description('schema-shape validation (an invalid event is 422)'),
});

const ROADMAP = shape({ wired: oneOf(false), note: str() });
/** A TAK output's entry: its state and counters as its thread last reported them (`off` and zeros when not wired). */
const OUTPUT = shape({ wired: bool(), note: str(), state: str(), sent: int().min(0), dropped: int().min(0), errors: int().min(0), detail: mapOf(Joi.any()).description('output-specific details (target, protocol, peers, queue, last error)') });

export const STATUS = shape({
  capability: str(),
  standard: str(),
  live: shape({
    cot_xml_export: bool(),
    schema_shape_validation: bool(),
    cot_xml_ingest: bool(),
    tracks_total: int().min(0),
    tracks_cot_valid: int().min(0),
    all_tracks_emittable: bool(),
  }),
  roadmap: shape({ udp_multicast_emit: OUTPUT.keys({ target_group: str() }), live_tak_server_stream: OUTPUT, tak_listener: OUTPUT, tls_client_cert_enrolment: ROADMAP }),
  routes: listOf(str()).length(4),
  data_kind: oneOf('computed_from_sample_tracks'),
  honesty: str(),
  sources: listOf(shape({ leader: str(), kind: str(), url: str(), data_kind: oneOf('standard') })),
});

export const EXPORT_XML = text('CoT 2.0 XML: <events> holding one <event> per track');
export const EVENT_XML = text('CoT 2.0 XML: one <event>');
