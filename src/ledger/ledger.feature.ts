/**
 * The ledger plugin: ledger, store, writer, batched signer, start-up self-test and routes. It
 * provides the internals the verdicts, stream and mesh plugins build on, and `status` (read by
 * the evidence and security views); the private key stays with the signing lane.
 */
import { verify } from 'node:crypto';
import { definePlugin, type Built, type Plugin, type PluginServices } from '../platform/plugin.js';
import type { LedgerStatus } from './status.js';
import { pae, PAYLOAD_TYPE } from './dsse.js';
import { durabilityState, type LedgerState } from './documents.js';
import { saveSigningKey, type SigningKey } from './keys.js';
import { Ledger } from './ledger.js';
import { fsckMetrics, ledgerMetrics } from './ledger.metrics.js';
import { BackgroundFsck } from './background-fsck.js';
import { ledgerRoutes } from './ledger.routes.js';
import { Signer } from './signer.js';
import { checkpointOrigin, Checkpoints } from './checkpoint.js';
import { Keyring } from './keyring.js';
import { signatureVerifier } from './replay.js';
import { FileStore } from './store/file-store.js';
import type { LedgerStore, ReplayReport } from './store/store.js';
import { LedgerWriter } from './writer.js';
import { mergeInThread } from './tlog/run-merge-host.js';

/** What other plugins read of the signed checkpoints: which one covers a node, and how far they trail. */
export type CheckpointReader = Pick<Checkpoints, 'coverage' | 'newest' | 'newestAgeMs'>;

/** The public half of the signing key; a plugin that needs a signature uses the Signer. */
export type PublicKeyInfo = Pick<SigningKey, 'keyid' | 'publicKey' | 'spkiPem'>;

/** What the ledger gives the plugins that need it: never the private key, which only the signing lane holds. */
export interface LedgerCore {
  ledger: Ledger;
  /** Signed checkpoints of the ledger (C2SP). */
  checkpoints: CheckpointReader;
  writer: LedgerWriter;
  store: LedgerStore;
  /** Signs in the pool's signing lane. */
  signer: Signer;
  key: PublicKeyInfo;
  /** What start-up replayed from the store. */
  replay: ReplayReport;
  status: LedgerStatus;
}

declare module '../platform/plugin.js' {
  interface Provides {
    ledger: LedgerCore;
  }
}

/** Its own slice, the pool's signing threads and Retry-After, and the public base URL (checkpoint origin, key URLs). */
type LedgerSections = 'ledger' | 'pool' | 'server';
type LedgerServices = PluginServices<LedgerSections>;

/** Signs a throwaway message through the pool and verifies it on this thread; nothing is appended. */
async function selfTest(s: LedgerServices, signer: Signer, key: SigningKey): Promise<{ ok: boolean; reason: string }> {
  try {
    // the signing lane's own boot is not its budget (runSign waits for it); the kernel lane is
    // not waited for: with pool.warmup it is still warming up, which readiness (/health) reports
    const probe = pae(PAYLOAD_TYPE, Buffer.from(`{"self_test":"${key.keyid}"}`));
    const sig = await signer.sign(probe);
    const ok = verify('sha256', probe, key.publicKey, sig);
    return { ok, reason: ok ? 'signed in the worker pool and verified with the public key' : 'signature from the pool did not verify' };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}

/** The ledger plugin: the key and the store are opened by buildApp first (the store takes its lock before anything else). */
export function ledgerPlugin(key: SigningKey, store: LedgerStore): Plugin<'ledger', never, LedgerSections> {
  return definePlugin({ name: 'ledger', needs: [], config: ['ledger', 'pool', 'server'], build: (s) => buildLedger(s, key, store) });
}

async function buildLedger(s: LedgerServices, key: SigningKey, store: LedgerStore): Promise<Built<'ledger'>> {
  const cfg = s.config.ledger;
  // where disk is the limit (file mode) there is no cap; in process memory there is one
  // key-index merges in threads of their own: never on the main thread
  const stored = store.storage?.();
  const storage = stored ? { ...stored, indexMerger: mergeInThread } : null;
  const ledger = new Ledger(storage ? Infinity : cfg.maxNodes, storage ?? undefined);
  const observe = ledgerMetrics(s.metrics.registry, ledger, store);
  const signer = new Signer(s.pool, cfg.signBatchMax, { inFlight: s.config.pool.signThreads, onBatch: observe.onBatch });
  // the keyring: every key that ever signed into this ledger stays published
  const keyring = new Keyring(key);
  for (const pem of await store.loadKeys()) {
    try {
      keyring.add(pem);
    } catch (err) {
      // a damaged key file must not stop the start: a node it signed fails the sweep and is reported there
      s.log.warn({ err: (err as Error).message }, 'ledger keyring: a key file in keys/ is not a public key; skipped');
    }
  }
  // a key generated on a full disk is saved by the store before the store takes any append
  const unsaved = key.unsaved;
  if (unsaved && store instanceof FileStore) store.requireWritten('the signing key', () => saveSigningKey(key), unsaved.error);
  // created_at is the time the store recorded the key with it (generated, or first seen), the same on every start
  key.createdAt = await store.recordKey(key.keyid, key.spkiPem, key.createdAt);
  const origin = cfg.checkpointOrigin ?? checkpointOrigin(key.keyid, s.config.server.publicBaseUrl);
  const checkpoints = new Checkpoints(ledger, key, signer, {
    origin,
    intervalMs: cfg.checkpointIntervalMs,
    store: store.checkpointStore?.(origin) ?? null,
    beforePersist: async () => {
      // the tiles first: a replica's copy records, once synced, that it holds them
      await ledger.sync();
      await store.syncDerived?.();
    },
    log: s.log,
  });
  const replay: ReplayReport = await store.replay({
    apply: (n) => ledger.applyNode(n, false, true),
    verifySignatures: signatureVerifier(s.pool, keyring, 'signing'),
    anchor: storage ? await checkpoints.anchor() : null,
    anchorAtMost: (size) => checkpoints.anchor(size),
    resume: (size) => ledger.resume(size),
    head: () => ledger.head,
  });
  if (store.mode !== 'memory') s.log.info({ mode: store.mode, nodes: replay.nodes, from_checkpoint: replay.fromCheckpoint ?? 0, ms: Math.round(replay.ms), trimmed: replay.trimmed, corrupt_at: replay.corruptAt }, 'ledger replayed');
  const writer = new LedgerWriter(ledger, store, {
    groupMax: cfg.groupCommitMax,
    waitMs: cfg.groupCommitWaitMs,
    queueMax: cfg.commitQueueMax,
    retryAfterS: s.config.pool.retryAfterS,
    onCommit: observe.onCommit,
  });
  await checkpoints.load();
  ledger.onAppend(() => checkpoints.grew());
  // a log opened without a checkpoint of its own (new, upgraded, or after a key rotation) gets one now
  if (ledger.size) checkpoints.grew();
  const state: LedgerState = { ledger, key, keyring, store, replay, selfTest: await selfTest(s, signer, key) };
  if (!state.selfTest.ok) s.log.error({ reason: state.selfTest.reason }, 'signing self-test failed: ledger not ready');
  // start-up checked only what the last checkpoint did not cover: the rest is checked again meanwhile
  // (a start that read every record has nothing left to check)
  const target = cfg.fsckAtStart && !replay.corruptAt && (replay.fromCheckpoint ?? 0) > 0 ? (store.fsckTarget?.() ?? null) : null;
  const fsck = target ? new BackgroundFsck({ dataDir: target.dataDir, recordsEnd: target.recordsEnd, onDamage: (bad) => store.damaged?.(bad), log: s.log }) : null;
  if (fsck) {
    state.fsck = fsck.status.bind(fsck);
    fsckMetrics(s.metrics.registry, state.fsck);
    s.health.register('ledger:fsck', () => {
      const f = fsck.status();
      return {
        componentType: 'datastore',
        observedValue: f.state,
        observedUnit: 'state',
        status: f.state === 'damaged' || f.state === 'error' ? 'warn' : 'pass',
        output: f.first_bad ? `node ${f.first_bad.index}: ${f.first_bad.reason}` : `${f.checked} of ${f.total} nodes checked${f.error ? ` (${f.error})` : ''}`,
      };
    });
    fsck.start();
  }

  const status: LedgerStatus = {
    size: () => ledger.size,
    maxNodes: ledger.maxNodes,
    root: () => (ledger.size ? ledger.root().toString('hex') : null),
    verifyIntegrity: () => {
      // incremental: the nodes there at start were checked by the replay and are re-checked by fsck
      const r = ledger.verifyIntegrity();
      return { ...r, root: ledger.size ? r.root : null };
    },
    keyid: key.keyid,
    ephemeralKey: key.ephemeral,
    mode: store.mode,
    durable: store.mode !== 'memory',
  };
  s.health.register('ledger:nodes', () => ({
    componentType: 'datastore',
    observedValue: ledger.size,
    observedUnit: 'nodes',
    status: ledger.size >= ledger.maxNodes ? 'warn' : 'pass',
    output: `cap ${ledger.maxNodes}`,
  }));
  s.health.register('ledger:store', () => {
    const st = store.status();
    return {
      componentType: 'datastore',
      observedValue: durabilityState(store),
      observedUnit: 'durability',
      // a damaged ledger still serves its verified prefix, kernels and views: readiness fails, liveness does not
      status: st.state === 'READY' || st.state === 'NOT_APPLICABLE' ? 'pass' : 'warn',
      output: `${store.mode} mode (${store.scope}): ${st.reason}`,
    };
  });
  s.health.register('ledger:integrity', () => {
    const r = ledger.verifyIntegrity();
    return { componentType: 'datastore', observedValue: r.verified, observedUnit: 'boolean', status: r.verified && state.selfTest.ok ? 'pass' : 'fail', output: r.verified ? r.reason : r.reason };
  });

  return {
    routes: ledgerRoutes(state, s.config.server.publicBaseUrl, checkpoints),
    provides: { ledger, checkpoints, writer, store, signer, key: { keyid: key.keyid, publicKey: key.publicKey, spkiPem: key.spkiPem }, replay, status },
    async close() {
      checkpoints.stop();
      await fsck?.stop();
      await writer.drain();
      await store.close();
      ledger.close();
    },
  };
}
