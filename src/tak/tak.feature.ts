/**
 * The TAK feature: when at least one output is on, every verdict the ledger applies (this
 * replica's and, in postgres mode, every other replica's), every military aircraft of each new
 * ADS-B snapshot and (as a setting) every ingested CoT event become live tracks (feed.ts), sent to
 * the outputs in the TAK thread (tak-host.ts) and resent before they go stale. Nothing here runs
 * on the request path beyond queueing: events are built on the next turn of the loop and the
 * outputs live in their own thread.
 */
import type { AdsbFeed, Snapshot } from '../adsb/feed.js';
import type { CotService } from '../cot/service.js';
import type { TakOutputsBoard } from '../cot/status.js';
import type { StoredEvent } from '../cot/store.js';
import type { LedgerNode } from '../ledger/ledger.js';
import type { LedgerCore } from '../ledger/ledger.feature.js';
import { RECEIPT_KIND } from '../ledger/receipt.js';
import { definePlugin, type Built, type PluginServices } from '../platform/plugin.js';
import { aircraftTrack, relayedEvent, verdictTrack } from './events.js';
import { TakFeed } from './feed.js';
import type { OutputState } from './output.js';
import type { OutputPlan } from './outputs.js';
import { enabledOutputs, type TakConfig } from './tak.config.js';
import { TakHost } from './tak-host.js';
import { takMetrics } from './tak.metrics.js';

declare module '../platform/plugin.js' {
  interface Provides {
    /** Null when every output is off (no thread, no subscription). */
    tak: { feed: TakFeed; host: TakHost } | null;
  }
}

type TakServices = PluginServices<'tak' | 'server'>;
type TakDeps = { ledger: LedgerCore; adsb: { feed: AdsbFeed }; cot: { service: CotService; takOutputs: TakOutputsBoard } };

export const takPlugin = definePlugin({ name: 'tak', needs: ['ledger', 'adsb', 'cot'], config: ['tak', 'server'], build: buildTak });

/** The settings each enabled output runs with, as plain values for the thread. */
export function outputPlan(cfg: Readonly<TakConfig>): OutputPlan {
  const plan: OutputPlan = {};
  for (const name of enabledOutputs(cfg)) {
    if (name === 'mesh') plan.mesh = { ...cfg.mesh };
    else if (name === 'server') plan.server = { ...cfg.server };
    else plan.listener = { ...cfg.listener };
  }
  return plan;
}

function buildTak(s: TakServices, deps: TakDeps): Built<'tak'> {
  const cfg = s.config.tak;
  if (enabledOutputs(cfg).length === 0) return { provides: null, routes: [] };
  const publicBaseUrl = s.config.server.publicBaseUrl;
  let latest: Readonly<Record<string, OutputState>> = {};
  const host = new TakHost({
    plan: outputPlan(cfg),
    queueMax: cfg.queueMax,
    statusIntervalMs: cfg.statusIntervalMs,
    log: s.log,
    onStatus(outputs) {
      latest = outputs;
      metrics.observe(outputs);
    },
  });
  const feed = new TakFeed({ staleS: cfg.staleS, resendS: cfg.resendS, maxTracks: cfg.maxTracks, send: (ev) => host.post(ev) });
  const metrics = takMetrics(s.metrics.registry, { queue: () => host.queueState(), liveTracks: () => feed.size });
  deps.cot.takOutputs.attach(() => latest);
  host.start();

  // what listeners hand over is built on the next turn: a verdict's append or a snapshot's publication never waits for XML
  let pending: (() => void)[] = [];
  const build = (): void => {
    const jobs = pending;
    pending = [];
    for (const job of jobs) {
      try {
        job();
      } catch (err) {
        s.log.warn({ err: (err as Error).message }, 'tak: an event could not be built');
      }
    }
  };
  const later = (job: () => void): void => {
    if (pending.length === 0) setImmediate(build);
    pending.push(job);
  };
  // from the node alone, so a verdict decided on another replica goes out as this replica's would
  const onNode = (node: LedgerNode): void => {
    if (node.kind !== RECEIPT_KIND) return;
    later(() => {
      const spec = verdictTrack({ node }, publicBaseUrl);
      if (spec) feed.report('verdict', spec);
    });
  };
  const onSnapshot = (snap: Snapshot): void =>
    later(() => {
      const uids = new Set<string>();
      for (const ac of snap.aircraft) {
        const spec = aircraftTrack(ac, snap);
        uids.add(spec.uid);
        feed.report('aircraft', spec);
      }
      feed.keepAircraft(uids);
    });
  const onStored = (e: StoredEvent): void => later(() => feed.relay(relayedEvent(e, Date.now())));
  const offs = [
    ...(cfg.verdicts ? [deps.ledger.ledger.onAppend(onNode)] : []),
    ...(cfg.aircraft ? [deps.adsb.feed.onSnapshot(onSnapshot)] : []),
    ...(cfg.relayIngested ? [deps.cot.service.onStored(onStored)] : []),
  ];
  const ticker = setInterval(() => feed.tick(), 1000);
  ticker.unref();
  const stop = (): void => {
    clearInterval(ticker);
    for (const off of offs.splice(0)) off();
  };
  return {
    provides: { feed, host },
    routes: [],
    drain: stop,
    async close() {
      stop();
      await host.close();
    },
  };
}
