/**
 * Config of the TAK outputs: what the feed sends (verdicts, military aircraft, relayed ingest),
 * how long an event stays fresh on a TAK screen and how often it is resent, the queue to the TAK
 * thread, and each output's settings. Every output is off by default.
 */
import Joi from 'joi';
import type { FeatureConfig } from '../config/feature-config.js';
import type { ListenerConfig } from './listener.js';
import type { MeshConfig } from './mesh.js';
import type { ServerClientConfig } from './server-client.js';

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
  listener: ListenerConfig;
  server: ServerClientConfig;
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
      protocol: Joi.string()
        .valid('xml', 'v1')
        .default('xml')
        .description('Mesh SA wire format: `xml` (TAK Protocol v0, one XML event per datagram) or `v1` (the mesh header 0xbf 0x01 0xbf and a protobuf TakMessage)'),
      maxInFlight: Joi.number().integer().min(1).max(100_000).default(1000).description('Mesh SA datagrams handed to the OS and not yet reported sent at most; beyond it events are dropped and counted'),
    }).default(),
    listener: Joi.object({
      enabled: Joi.boolean().default(false).description('streaming listener: TAK clients (ATAK \u201cadd server\u201d, streaming) connect here and receive every event'),
      host: Joi.string().hostname().default('127.0.0.1').description('address the listener binds (0.0.0.0 serves the LAN: a decision the operator writes down)'),
      port: Joi.number().integer().min(0).max(65535).default(8089).description('port the listener binds (8089: where TAK clients expect TLS streaming)'),
      transport: Joi.string().valid('tls', 'tcp').default('tls').description('`tls`: client certificates issued by `tak.listener.caPath` required; `tcp`: plain, no encryption and no client authentication (a lab)'),
      certPath: Joi.string().allow(null).default(null).description('PEM server certificate (chain) file of the listener; required for `tls`'),
      keyPath: Joi.string().allow(null).default(null).description('PEM private key file of the listener\u2019s certificate; required for `tls`'),
      caPath: Joi.string().allow(null).default(null).description('PEM CA file that issues client certificates; a client whose certificate it did not sign is refused; required for `tls`'),
      maxClients: Joi.number().integer().min(1).max(10_000).default(16).description('connected clients at most; one more is closed once authenticated'),
      clientBufferBytes: Joi.number().integer().min(1024).max(1 << 30).default(1_048_576).description('unsent bytes one client may hold; past it that client is dropped and counted'),
      pingIntervalMs: Joi.number().integer().min(0).max(3_600_000).default(30_000).description('keep-alive pings this often; a client silent for three intervals is closed (0: neither)'),
      maxMessageBytes: Joi.number().integer().min(1024).max(8 << 20).default(65_536).description('largest message a client may send; past it the client is closed'),
      pictureMax: Joi.number().integer().min(0).max(100_000).default(2000).description('live tracks kept to give a newly connected client the current picture'),
    })
      .custom((l: ListenerConfig, helpers) => (l.enabled && l.transport === 'tls' && !(l.certPath && l.keyPath && l.caPath) ? helpers.message({ custom: 'tak.listener with transport tls needs certPath, keyPath and caPath' }) : l))
      .default(),
    server: Joi.object({
      enabled: Joi.boolean().default(false).description('TAK Server client: stream every event to the TAK Server at `tak.server.host`'),
      host: Joi.string().hostname().allow('').default('').description('TAK Server host name or address; required when the client is enabled'),
      port: Joi.number().integer().min(1).max(65535).default(8089).description('TAK Server port: 8089 for TLS (`stdssl`), 8087 for plain TCP (`stdtcp`, anonymous)'),
      tls: Joi.boolean().default(true).description('TLS with a client certificate; false: plain TCP, only where the server keeps an anonymous input'),
      p12Path: Joi.string().allow(null).default(null).description('the client certificate and key as PKCS#12 (`.p12`, as TAK Server enrolment and data packages give it)'),
      p12Password: Joi.string().allow(null, '').default(null).description('password of `tak.server.p12Path`'),
      certPath: Joi.string().allow(null).default(null).description('the client certificate as PEM (with `tak.server.keyPath`), instead of a `.p12`'),
      keyPath: Joi.string().allow(null).default(null).description('the client certificate\u2019s PEM private key'),
      caPath: Joi.string().allow(null).default(null).description('PEM CA(s) that issued the TAK Server\u2019s certificate (null: Node\u2019s bundled public CAs); the server is always verified'),
      servername: Joi.string().allow(null).default(null).description('name the server certificate is verified against, when it differs from `tak.server.host`'),
      protocol: Joi.string().valid('auto', 'xml').default('auto').description('`auto`: TAK Protocol v1 when the server offers it, else XML; `xml`: never negotiate'),
      bufferSize: Joi.number().integer().min(1).max(1_000_000).default(1000).description('events held while disconnected; beyond it the oldest is dropped and counted'),
      backoffBaseMs: Joi.number().integer().min(10).max(600_000).default(1000).description('reconnect delay base: uniform in [0, min(max, base \u00b7 2^attempt)] (full jitter)'),
      backoffMaxMs: Joi.number().integer().min(10).max(3_600_000).default(60_000).description('reconnect delay at most'),
      pingIntervalMs: Joi.number().integer().min(0).max(3_600_000).default(15_000).description('keep-alive pings (`t-x-c-t`) while connected (0: none)'),
      negotiationWaitMs: Joi.number().integer().min(0).max(60_000).default(1000).description('after connecting, how long events wait for the server\u2019s v1 offer and, over TLS, for a refusal of the client certificate'),
      responseTimeoutMs: Joi.number().integer().min(100).max(60_000).default(5000).description('how long to wait for `t-x-takp-r` after asking for v1; then the connection is dropped and later ones stay XML'),
      connectTimeoutMs: Joi.number().integer().min(100).max(120_000).default(10_000).description('TCP connect plus TLS handshake, at most'),
      maxMessageBytes: Joi.number().integer().min(1024).max(8 << 20).default(1_048_576).description('one message from the server at most (a server sending more is cut off)'),
      uid: Joi.string().min(1).max(128).default('drone-intel-svc').description('uid of this client\u2019s pings'),
    })
      .custom((c: ServerClientConfig, helpers) => (c.enabled && !c.host ? helpers.message({ custom: 'tak.server.enabled needs tak.server.host (SVC_TAK_SERVER_HOST)' }) : c))
      .default(),
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
    SVC_TAK_LISTENER_ENABLED: 'listener.enabled',
    SVC_TAK_LISTENER_HOST: 'listener.host',
    SVC_TAK_LISTENER_PORT: 'listener.port',
    SVC_TAK_LISTENER_TRANSPORT: 'listener.transport',
    SVC_TAK_LISTENER_CERT: 'listener.certPath',
    SVC_TAK_LISTENER_KEY: 'listener.keyPath',
    SVC_TAK_LISTENER_CA: 'listener.caPath',
    SVC_TAK_LISTENER_MAX_CLIENTS: 'listener.maxClients',
    SVC_TAK_LISTENER_CLIENT_BUFFER_BYTES: 'listener.clientBufferBytes',
    SVC_TAK_LISTENER_PING_INTERVAL_MS: 'listener.pingIntervalMs',
    SVC_TAK_LISTENER_MAX_MESSAGE_BYTES: 'listener.maxMessageBytes',
    SVC_TAK_LISTENER_PICTURE_MAX: 'listener.pictureMax',
    SVC_TAK_SERVER_ENABLED: 'server.enabled',
    SVC_TAK_SERVER_HOST: 'server.host',
    SVC_TAK_SERVER_PORT: 'server.port',
    SVC_TAK_SERVER_TLS: 'server.tls',
    SVC_TAK_SERVER_P12: 'server.p12Path',
    SVC_TAK_SERVER_P12_PASSWORD: 'server.p12Password',
    SVC_TAK_SERVER_CERT: 'server.certPath',
    SVC_TAK_SERVER_KEY: 'server.keyPath',
    SVC_TAK_SERVER_CA: 'server.caPath',
    SVC_TAK_SERVER_SERVERNAME: 'server.servername',
    SVC_TAK_SERVER_PROTOCOL: 'server.protocol',
    SVC_TAK_SERVER_BUFFER: 'server.bufferSize',
    SVC_TAK_SERVER_BACKOFF_BASE_MS: 'server.backoffBaseMs',
    SVC_TAK_SERVER_BACKOFF_MAX_MS: 'server.backoffMaxMs',
    SVC_TAK_SERVER_PING_INTERVAL_MS: 'server.pingIntervalMs',
    SVC_TAK_SERVER_NEGOTIATION_WAIT_MS: 'server.negotiationWaitMs',
    SVC_TAK_SERVER_RESPONSE_TIMEOUT_MS: 'server.responseTimeoutMs',
    SVC_TAK_SERVER_CONNECT_TIMEOUT_MS: 'server.connectTimeoutMs',
    SVC_TAK_SERVER_MAX_MESSAGE_BYTES: 'server.maxMessageBytes',
    SVC_TAK_SERVER_UID: 'server.uid',
  },
};

/** The outputs the config turns on, by name. */
export function enabledOutputs(cfg: Readonly<TakConfig>): ('mesh' | 'server' | 'listener')[] {
  const on: ('mesh' | 'server' | 'listener')[] = [];
  if (cfg.mesh.enabled) on.push('mesh');
  if (cfg.server.enabled) on.push('server');
  if (cfg.listener.enabled) on.push('listener');
  return on;
}
