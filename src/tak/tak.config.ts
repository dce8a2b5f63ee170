/**
 * Config of the TAK outputs: what the feed sends (verdicts, military aircraft, relayed ingest),
 * how long an event stays fresh on a TAK screen and how often it is resent, the queue to the TAK
 * thread, and each output's settings. Every output is off by default.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';
import type { MeshConfig } from './mesh.js';

export interface TakConfig {
  /** Each verdict this process decides is sent as a track. */
  verdicts: boolean;
  /** Each military aircraft of each new ADS-B snapshot is sent as a track. */
  aircraft: boolean;
  /** Each event stored by POST /cot/ingest is relayed as is. */
  relayIngested: boolean;
  /** `stale` = send time + staleS; a verdict track quiet this long has ended. */
  staleS: number;
  /** A live track is resent every resendS (less than staleS, so TAK clients never grey it). */
  resendS: number;
  /** Live tracks held at most; the least recently updated goes first. */
  maxTracks: number;
  /** Events waiting for the TAK thread at most; beyond it the oldest is dropped and counted. */
  queueMax: number;
  /** How often the TAK thread reports its outputs' state. */
  statusIntervalMs: number;
  mesh: MeshConfig;
}

const ipv4 = Joi.string().ip({ version: ['ipv4'], cidr: 'forbidden' });

export const takConfig: FeatureConfig = {
  key: 'tak',
  schema: Joi.object({
    verdicts: Joi.boolean().default(true).description('send each verdict this process decides as a CoT track (when an output is on)'),
    aircraft: Joi.boolean().default(true).description('send each military aircraft of each new ADS-B snapshot as a CoT track (when an output is on); an aircraft absent from a snapshot is no longer sent'),
    relayIngested: Joi.boolean().default(false).description('relay each event stored by POST /cot/ingest to the TAK outputs, as received, until its own stale time'),
    staleS: Joi.number().integer().min(10).max(3600).default(120).description('seconds a sent event stays fresh on TAK screens (`stale` = send time + this); a verdict track without a new verdict for this long has ended'),
    resendS: Joi.number()
      .integer()
      .min(1)
      .max(3600)
      .less(Joi.ref('staleS'))
      .default(30)
      .description('a live track is resent every this many seconds (less than `tak.staleS`, so it never goes stale while it lives)'),
    maxTracks: Joi.number().integer().min(1).max(100_000).default(2000).description('live tracks held at most; the least recently updated is forgotten first'),
    queueMax: Joi.number().integer().min(1).max(1_000_000).default(10_000).description('events waiting for the TAK thread at most; beyond it the oldest is dropped and counted'),
    statusIntervalMs: Joi.number().integer().min(100).max(60_000).default(1000).description('how often the TAK thread reports its outputs\u2019 state to `/cot/status` and the metrics'),
    mesh: Joi.object({
      enabled: Joi.boolean().default(false).description('Mesh SA: send every event as one UDP datagram to `tak.mesh.group`'),
      group: ipv4.default('239.2.3.1').description('Mesh SA destination address: ATAK\u2019s default SA multicast group (a unicast IPv4 address works too)'),
      port: Joi.number().integer().min(1).max(65535).default(6969).description('Mesh SA destination port'),
      ttl: Joi.number().integer().min(0).max(255).default(1).description('multicast hops of Mesh SA datagrams (1: the local segment only)'),
      interface: ipv4.allow(null).default(null).description('IPv4 address of the interface Mesh SA sends from (null: the OS chooses)'),
      protocol: Joi.string().valid('xml').default('xml').description('Mesh SA wire format: `xml` (TAK Protocol v0, one XML event per datagram)'),
      maxInFlight: Joi.number().integer().min(1).max(100_000).default(1000).description('Mesh SA datagrams handed to the OS and not yet reported sent at most; beyond it events are dropped and counted'),
    }).default(),
  }).default(),
  env: {
    SVC_TAK_VERDICTS: 'verdicts',
    SVC_TAK_AIRCRAFT: 'aircraft',
    SVC_TAK_RELAY_INGESTED: 'relayIngested',
    SVC_TAK_STALE_S: 'staleS',
    SVC_TAK_RESEND_S: 'resendS',
    SVC_TAK_MAX_TRACKS: 'maxTracks',
    SVC_TAK_QUEUE_MAX: 'queueMax',
    SVC_TAK_STATUS_INTERVAL_MS: 'statusIntervalMs',
    SVC_TAK_MESH_ENABLED: 'mesh.enabled',
    SVC_TAK_MESH_GROUP: 'mesh.group',
    SVC_TAK_MESH_PORT: 'mesh.port',
    SVC_TAK_MESH_TTL: 'mesh.ttl',
    SVC_TAK_MESH_INTERFACE: 'mesh.interface',
    SVC_TAK_MESH_PROTOCOL: 'mesh.protocol',
    SVC_TAK_MESH_MAX_IN_FLIGHT: 'mesh.maxInFlight',
  },
};

/** The outputs the config turns on, by name. */
export function enabledOutputs(cfg: Readonly<TakConfig>): ('mesh' | 'server' | 'listener')[] {
  return cfg.mesh.enabled ? ['mesh'] : [];
}
