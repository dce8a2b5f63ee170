/** What a feature module gives the app: its routes, and optionally cleanup on close. */
import type { RouteDef } from './http/route.js';

export interface Feature {
  routes: RouteDef[];
  close?(): Promise<void> | void;
  /** Called once the app is built: building blocks the loop on purpose, which is not service delay. */
  ready?(): void;
  /** First step of a graceful shutdown, before connections are closed: stop producing, end streams. */
  drain?(): void;
}
