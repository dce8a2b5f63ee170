/**
 * The outputs by name, each built from plain serialisable settings (what crosses into the TAK
 * thread): the table the thread builds its outputs from.
 */
import { ListenerOutput, type ListenerConfig } from './listener.js';
import { MeshOutput, type MeshConfig } from './mesh.js';
import type { TakOutput } from './output.js';
import { meshDatagram } from './protocol.js';
import { ServerClientOutput, type ServerClientConfig } from './server-client.js';

export type OutputName = TakOutput['name'];

/** Settings of the outputs to run, by name; an absent name is off. */
export interface OutputPlan {
  mesh?: MeshConfig;
  server?: ServerClientConfig;
  listener?: ListenerConfig;
}

export const OUTPUT_NAMES: readonly OutputName[] = ['mesh', 'server', 'listener'];

/** The outputs `plan` turns on, constructed (not started). */
export function constructOutputs(plan: OutputPlan): TakOutput[] {
  const out: TakOutput[] = [];
  if (plan.mesh) out.push(new MeshOutput(plan.mesh, plan.mesh.protocol === 'v1' ? meshDatagram : null));
  if (plan.server) out.push(new ServerClientOutput(plan.server));
  if (plan.listener) out.push(new ListenerOutput(plan.listener));
  return out;
}
