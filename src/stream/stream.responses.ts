/** Response schemas of the edge scene (GET and POST /edge/3d) and the SSE stream. */
import { DECISION } from '../verdicts/verdicts.responses.js';
import { bool, hex64, int, isoTime, listOf, nullable, num, oneOf, shape, str, text } from '../http/response-schema.js';

const ENU = shape({ e: num(), n: num(), u: num() }).description('East-North-Up metres from the sensor site (0.1 m)');

export const SCENE = shape({
  schema: oneOf('svc.edge-scene/v1'),
  generated_at: isoTime(),
  frame: shape({ kind: oneOf('ENU'), units: oneOf('m'), origin: shape({ lat: num(), lon: num(), alt_m: num() }) }),
  verdicts_in_buffer: int().min(0),
  decisions: shape({ ALLOW: int().min(0), REVIEW: int().min(0), DENY: int().min(0) }),
  ledger_size: int().min(0),
  tracks: listOf(
    shape({
      track_id: str(),
      source: nullable(str()),
      position: shape({ lat: num(), lon: num(), alt_m: nullable(num()), enu: ENU }),
      heading_deg: nullable(num()),
      speed_mps: nullable(num()),
      lambda: num().min(0).max(1),
      decision: DECISION,
      geofence_inside: nullable(bool()),
      ledger_index: int().min(0),
      node_digest: hex64(),
      ts_utc: isoTime(),
      simulated: bool(),
    }),
  ).description('the latest verdict of each track in the ring buffer'),
  zones: listOf(shape({ id: str(), name: str(), polygon: listOf(listOf(num()).length(2)).description('[lat, lon] vertices as configured'), enu: listOf(ENU) })),
  sensors: listOf(shape({ name: str(), lat: num(), lon: num(), alt_m: nullable(num()), enu: ENU })).description('sensor sites as configured (stream.sensors, SVC_SENSOR_SITES)'),
  honesty: str(),
});

/** POST /edge/3d: the scene plus what this batch appended. */
export const SCENE_AFTER_BATCH = SCENE.keys({
  appended: listOf(shape({ track_id: str(), decision: DECISION, lambda: num().min(0).max(1), ledger_index: int().min(0), node_digest: hex64() })),
});

export const SSE = text('Server-Sent Events: `retry:` once, then `event: verdict` with `id:` = ledger index and `data:` = the verdict body of POST /verdict (a node signed elsewhere: its signed fields, the rest null and `evaluation: FROM_SIGNED_RECEIPT`); `: ping` comments every 15 s; a resume whose replay reaches its byte budget ends with `retry:` and `event: catchup` (`data: {reason, last_id, newest_id}`): reconnect with Last-Event-ID to continue');
