/**
 * The service's internal components and the links between them: one declarative table, so every
 * view that draws them agrees. Routes name the components they reach (`RouteDef.uses`), the elite
 * wiring board, topology health and the attack surface all read this same set.
 */
import { canonicalJson, sha256Hex } from '../lib/numbers.js';

export type Channel = 'function_call' | 'message_port' | 'sse' | 'https' | 'in_memory_ring';

export interface WiringNode {
  id: string;
  display_name: string;
  kind: string;
  thread: 'main' | 'worker';
  owns_state: boolean;
  module: string;
}

export interface Wire {
  id: string;
  from: ComponentId;
  to: ComponentId;
  channel: Channel;
  payload: string;
  sync: boolean;
  mesh_wire: 'B' | 'C' | 'D' | 'E' | 'F' | null;
}

export const NODES = [
  { id: 'gateway', display_name: 'HTTP gateway', kind: 'gateway', thread: 'main', owns_state: false, module: 'src/http' },
  { id: 'validator', display_name: 'Request validator', kind: 'policy', thread: 'main', owns_state: false, module: 'src/http/validation.ts' },
  { id: 'worker-pool', display_name: 'Worker pool', kind: 'compute', thread: 'worker', owns_state: false, module: 'src/platform/pool.ts' },
  { id: 'verdict-engine', display_name: 'Verdict engine', kind: 'service', thread: 'main', owns_state: false, module: 'src/verdicts' },
  { id: 'signer', display_name: 'Receipt signer', kind: 'crypto', thread: 'worker', owns_state: true, module: 'src/ledger/signer.ts' },
  { id: 'ledger', display_name: 'Khipu ledger', kind: 'datastore', thread: 'main', owns_state: true, module: 'src/ledger' },
  { id: 'sse-hub', display_name: 'Verdict stream hub', kind: 'stream', thread: 'main', owns_state: true, module: 'src/stream' },
  { id: 'scene-buffer', display_name: 'Edge scene buffer', kind: 'buffer', thread: 'main', owns_state: true, module: 'src/stream/scene.ts' },
  { id: 'cortex-bus', display_name: 'Cortex event bus', kind: 'bus', thread: 'main', owns_state: true, module: 'src/mesh' },
  { id: 'trace-ring', display_name: 'Trace ring', kind: 'buffer', thread: 'main', owns_state: true, module: 'src/observability/traces.ts' },
  { id: 'metrics-registry', display_name: 'Metrics registry', kind: 'telemetry', thread: 'main', owns_state: true, module: 'src/observability/metrics.ts' },
  { id: 'adsb-cache', display_name: 'ADS-B cache', kind: 'cache', thread: 'main', owns_state: true, module: 'src/adsb' },
  { id: 'adsb-upstreams', display_name: 'ADS-B upstreams', kind: 'external', thread: 'main', owns_state: false, module: 'src/adsb' },
  { id: 'cot', display_name: 'CoT interop', kind: 'service', thread: 'main', owns_state: true, module: 'src/cot' },
  { id: 'fleet-dataset', display_name: 'Fleet dataset', kind: 'dataset', thread: 'main', owns_state: false, module: 'src/fleet' },
] as const satisfies readonly WiringNode[];

/** A component's id: what `RouteDef.uses` and `writes` name. */
export type ComponentId = (typeof NODES)[number]['id'];


export const WIRES: readonly Wire[] = [
  { id: 'gateway-validator', from: 'gateway', to: 'validator', channel: 'function_call', payload: 'query, path and body parts', sync: true, mesh_wire: null },
  { id: 'gateway-pool', from: 'gateway', to: 'worker-pool', channel: 'message_port', payload: 'kernel and probe tasks', sync: false, mesh_wire: null },
  { id: 'gateway-verdict', from: 'gateway', to: 'verdict-engine', channel: 'function_call', payload: 'telemetry frames', sync: false, mesh_wire: null },
  { id: 'verdict-signer', from: 'verdict-engine', to: 'signer', channel: 'function_call', payload: 'DSSE PAE to sign', sync: false, mesh_wire: 'B' },
  { id: 'signer-pool', from: 'signer', to: 'worker-pool', channel: 'message_port', payload: 'batched PAEs, DER signatures back', sync: false, mesh_wire: null },
  { id: 'verdict-ledger', from: 'verdict-engine', to: 'ledger', channel: 'function_call', payload: 'signed receipt append', sync: true, mesh_wire: 'F' },
  { id: 'ledger-stream', from: 'ledger', to: 'sse-hub', channel: 'sse', payload: 'signed verdict events to viewers', sync: false, mesh_wire: 'C' },
  { id: 'gateway-traces', from: 'gateway', to: 'trace-ring', channel: 'in_memory_ring', payload: 'W3C traceparent per request', sync: true, mesh_wire: 'D' },
  { id: 'verdict-cortex', from: 'verdict-engine', to: 'cortex-bus', channel: 'in_memory_ring', payload: 'verdict events', sync: true, mesh_wire: 'E' },
  { id: 'stream-verdict', from: 'sse-hub', to: 'verdict-engine', channel: 'function_call', payload: 'simulated flight frames', sync: false, mesh_wire: null },
  { id: 'verdict-scene', from: 'verdict-engine', to: 'scene-buffer', channel: 'function_call', payload: 'recent verdicts', sync: true, mesh_wire: null },
  { id: 'gateway-metrics', from: 'gateway', to: 'metrics-registry', channel: 'function_call', payload: 'request count and duration', sync: true, mesh_wire: null },
  { id: 'gateway-adsb', from: 'gateway', to: 'adsb-cache', channel: 'function_call', payload: 'bounding-box query', sync: false, mesh_wire: null },
  { id: 'adsb-upstream', from: 'adsb-cache', to: 'adsb-upstreams', channel: 'https', payload: 'GET /v2/mil', sync: false, mesh_wire: null },
  { id: 'gateway-cot', from: 'gateway', to: 'cot', channel: 'function_call', payload: 'CoT XML in and out', sync: true, mesh_wire: null },
  { id: 'gateway-fleet', from: 'gateway', to: 'fleet-dataset', channel: 'function_call', payload: 'collection reads', sync: true, mesh_wire: null },
  { id: 'gateway-ledger', from: 'gateway', to: 'ledger', channel: 'function_call', payload: 'export, readiness, verify reads', sync: true, mesh_wire: null },
];

export const WIRING_SHA256 = sha256Hex(canonicalJson({ nodes: NODES, wires: WIRES }));

