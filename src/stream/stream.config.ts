/** Config of the SSE verdict stream, the simulated flight and the edge scene. */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';
import { listOrJson } from '../config/json-env.js';

/** A sensor position an operator configures: the globe marks it with range rings. */
export interface SensorSite {
  name: string;
  lat: number;
  lon: number;
  alt_m: number | null;
}

const sensorList = Joi.array()
  .items(
    Joi.object({
      name: Joi.string().min(1).max(128).required(),
      lat: Joi.number().min(-90).max(90).required(),
      lon: Joi.number().min(-180).max(180).required(),
      alt_m: Joi.number().min(-500).max(20_000).allow(null).default(null),
    }),
  )
  .max(100)
  .unique('name');

export interface StreamConfig {
  maxViewers: number;
  heartbeatMs: number;
  /** Events kept for Last-Event-ID resume. */
  ringSize: number;
  /** Simulated flight step (one verdict per drone per tick). */
  tickMs: number;
  /** A viewer whose unacknowledged bytes (in the process, plus its kernel send queue on Linux) exceed this is dropped (it can resume). */
  sendBufferBytes: number;
  /** How often viewers' kernel send queues are read (Linux, /proc/net/tcp). */
  lagCheckMs: number;
  /** Replayed bytes one connection gets at most on a resume (never more than sendBufferBytes); it then ends with `event: catchup`. */
  replayMaxBytes: number;
  /** Replayed bytes per second one client address gets over all its connections; 0 = no limit. */
  replayBytesPerAddressPerS: number;
  /** Recent verdicts the 3-D edge scene is built from. */
  sceneSize: number;
  /** Frames accepted in one POST /edge/3d. */
  maxFramesPerRequest: number;
  /**
   * The simulated flight: `on-demand` while somebody watches the stream (with write tokens set,
   * somebody bearing one), `off` (the stream carries real verdicts only), or `always`.
   */
  flight: 'on-demand' | 'off' | 'always';
  /** Sensor sites listed by /edge/3d for the globe. */
  sensors: SensorSite[];
}

export const streamConfig: FeatureConfig = {
  key: 'stream',
  schema: Joi.object({
    maxViewers: Joi.number().integer().min(1).max(100_000).default(5000),
    heartbeatMs: Joi.number().integer().min(100).max(120_000).default(15_000),
    ringSize: Joi.number().integer().min(1).max(100_000).default(1024),
    tickMs: Joi.number().integer().min(10).max(60_000).default(1000),
    sendBufferBytes: Joi.number().integer().min(1024).max(64 * 1024 * 1024).default(256 * 1024),
    lagCheckMs: Joi.number().integer().min(50).max(60_000).default(1000),
    replayMaxBytes: Joi.number().integer().min(1024).max(64 * 1024 * 1024).default(128 * 1024),
    replayBytesPerAddressPerS: Joi.number().integer().min(0).max(1024 * 1024 * 1024).default(1024 * 1024),
    sceneSize: Joi.number().integer().min(1).max(10_000).default(256),
    maxFramesPerRequest: Joi.number().integer().min(1).max(1000).default(64),
    flight: Joi.string().valid('on-demand', 'off', 'always').default('on-demand'),
    // SVC_SENSOR_SITES='[{"name":"mast 1","lat":36.2,"lon":-115.2,"alt_m":10}]'
    sensors: listOrJson(sensorList, 'sensor sites')
      .default([])
      .description('sensor positions the globe marks with range rings: a JSON list of `{name, lat, lon, alt_m}` (at most 100, names unique)'),
  }).default(),
  env: {
    SVC_STREAM_MAX_VIEWERS: 'maxViewers',
    SVC_STREAM_TICK_MS: 'tickMs',
    SVC_STREAM_SEND_BUFFER_BYTES: 'sendBufferBytes',
    SVC_STREAM_LAG_CHECK_MS: 'lagCheckMs',
    SVC_STREAM_REPLAY_MAX_BYTES: 'replayMaxBytes',
    SVC_STREAM_REPLAY_BYTES_PER_ADDRESS_PER_S: 'replayBytesPerAddressPerS',
    SVC_STREAM_FLIGHT: 'flight',
    SVC_SENSOR_SITES: 'sensors',
  },
};
