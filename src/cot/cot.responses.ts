/** Response schemas of the CoT routes: the ingest answer and the status document. */
import Joi from 'joi';
import { bool, int, listOf, mapOf, nullable, num, oneOf, shape, str, text } from '../http/response-schema.js';

const ISSUE = shape({ path: str(), code: str(), message: str(), value: str().optional() });

/** A detail subtree as JSON: `{name, attributes, text?, children?}` (children recursive). */
const NODE = Joi.object({
  name: str().required(),
  attributes: mapOf(str()).required(),
  text: str().optional(),
  children: Joi.array().items(Joi.link('#CotNode')).optional(),
}).id('CotNode');

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
const COUNT = (): Joi.NumberSchema => int().min(0);
const WIRE = (): Joi.AnySchema => oneOf('xml', 'v1');

/** Mesh SA (src/tak/mesh.ts `status()`). */
const MESH_DETAIL = shape({
  target: str().description('group:port the datagrams go to'),
  protocol: WIRE(),
  ttl: COUNT(),
  interface: nullable(str()).description('IPv4 address sent from (null: the OS chooses)'),
  in_flight: COUNT().description('datagrams handed to the OS and not yet reported sent'),
  last_error: nullable(str()),
});
/** TAK Server client (src/tak/server-client.ts `status()`). */
const SERVER_DETAIL = shape({
  host: str(),
  port: int().min(1).max(65535),
  tls: bool(),
  protocol: nullable(WIRE()).description('the negotiated wire format while connected, else null'),
  serverVersions: nullable(listOf(int())).description('TAK Protocol versions the server offered (null before an offer)'),
  buffered: COUNT(),
  bufferSize: COUNT(),
  connects: COUNT(),
  reconnects: COUNT(),
  connectedSinceMs: nullable(int()).description('epoch milliseconds of the current connection'),
  nextRetryAtMs: nullable(int()).description('epoch milliseconds of the next attempt while backing off'),
  received: COUNT(),
  rejectedMessages: COUNT(),
  pingsSent: COUNT(),
  pongsSent: COUNT(),
  lastError: nullable(
    shape({
      kind: oneOf('certificate_files', 'server_certificate_untrusted', 'client_certificate_rejected', 'closed_after_handshake', 'connect', 'timeout', 'protocol', 'closed', 'socket'),
      code: nullable(str()),
      message: str(),
      atMs: int(),
    }),
  ),
});
/** One client of the streaming listener (src/tak/listener-client.ts `snapshot()`). */
const LISTENER_CLIENT = shape({
  id: int(),
  address: str(),
  subject: nullable(str()).description('subject CN of its certificate (null on plain TCP)'),
  protocol: WIRE(),
  queuedBytes: COUNT(),
  eventsSent: COUNT(),
  discarded: COUNT(),
  pictureBacklog: COUNT(),
  connectedMs: COUNT(),
});
/** The streaming listener (src/tak/listener.ts `status()`). */
const LISTENER_DETAIL = shape({
  host: str(),
  port: int().min(0).max(65535),
  transport: oneOf('tls', 'tcp'),
  warning: str().optional().description('present on plain TCP'),
  clientCount: COUNT(),
  maxClients: COUNT(),
  clients: listOf(LISTENER_CLIENT),
  droppedSlowClients: COUNT(),
  refusedOverMax: COUNT(),
  handshakeFailures: COUNT(),
  idleClosed: COUNT(),
  protocolErrors: COUNT(),
  clientErrors: COUNT(),
  lastClientError: nullable(str()),
  eventsIn: COUNT(),
  pictureTracks: COUNT(),
  lastError: nullable(str()),
});

/** A TAK output's entry: its state and counters as its thread last reported them (`off`, zeros and an empty detail when not wired). */
function output(detail: Joi.ObjectSchema): Joi.ObjectSchema {
  return shape({
    wired: bool(),
    note: str(),
    state: str(),
    sent: COUNT(),
    dropped: COUNT(),
    errors: COUNT(),
    detail: Joi.alternatives(detail, shape({})).description('the output\u2019s own details; an empty object while it is off'),
  });
}

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
  roadmap: shape({ udp_multicast_emit: output(MESH_DETAIL).keys({ target_group: str() }), live_tak_server_stream: output(SERVER_DETAIL), tak_listener: output(LISTENER_DETAIL), tls_client_cert_enrolment: ROADMAP }),
  routes: listOf(str()).length(4),
  data_kind: oneOf('computed_from_sample_tracks'),
  honesty: str(),
  sources: listOf(shape({ leader: str(), kind: str(), url: str(), data_kind: oneOf('standard') })),
});

export const EXPORT_XML = text('CoT 2.0 XML: <events> holding one <event> per track');
export const EVENT_XML = text('CoT 2.0 XML: one <event>');
