/** The readiness object and the receipt export document, built from live state, never a stored copy. */
import type { Context } from 'koa';
import type { Ledger, LedgerNode } from './ledger.js';
import type { SigningKey } from './keys.js';
import type { Keyring } from './keyring.js';
import type { LedgerStore, ReplayReport } from './store/store.js';
import type { FsckStatus } from './background-fsck.js';
import { RECEIPT_DOCTRINE } from '../core/doctrine.js';
import { dsseDocument } from './receipt.js';
import { pae, PAYLOAD_TYPE, verifySignature } from './dsse.js';

export interface LedgerState {
  ledger: Ledger;
  key: SigningKey;
  keyring: Keyring;
  store: LedgerStore;
  replay: ReplayReport;
  /** Start-up self-test outcome: the key signed (in the pool) and verified. */
  selfTest: { ok: boolean; reason: string };
  /** The whole-log check running in the background since start (file mode), if any. */
  fsck?: () => FsckStatus;
}

const REQUESTED_MODE = { memory: 'EPHEMERAL', file: 'FILE', postgres: 'POSTGRES' } as const;

export function limits(key: SigningKey, store: LedgerStore): { code: string; detail: string }[] {
  const out: { code: string; detail: string }[] = [];
  if (store.mode === 'memory') out.push({ code: 'EPHEMERAL_LEDGER', detail: 'The ledger lives in process memory and resets on restart.' });
  if (key.ephemeral) {
    out.push({ code: 'EPHEMERAL_SIGNING_KEY', detail: 'The signing key was generated at start-up; receipts from before a restart cannot be checked against the new key.' });
  }
  return out;
}

/** Every state durabilityState() can report (the metrics' state set lists them all). */
export const DURABILITY_STATES = ['EPHEMERAL', 'DURABLE', 'DEGRADED', 'CORRUPT'] as const;
export type DurabilityState = (typeof DURABILITY_STATES)[number];

/** How durable the ledger is right now: what readiness, exports and health report. */
export function durabilityState(store: LedgerStore): DurabilityState {
  if (store.mode === 'memory') return 'EPHEMERAL';
  const st = store.status().state;
  return st === 'READY' ? 'DURABLE' : st === 'CORRUPT' ? 'CORRUPT' : 'DEGRADED';
}

export function readinessDocument({ ledger, key, store, replay, selfTest, fsck }: LedgerState): Record<string, unknown> {
  const integrity = ledger.verifyIntegrity();
  const full = ledger.size >= ledger.maxNodes;
  const adapter = store.status();
  const adapterOk = adapter.state === 'READY' || adapter.state === 'NOT_APPLICABLE';
  const ready = selfTest.ok && integrity.verified && !full && adapterOk;
  const durable = store.mode !== 'memory';
  const productionReady = ready && durable && !key.ephemeral;
  const reason = !selfTest.ok
    ? `SIGNING_SELF_TEST_FAILED: ${selfTest.reason}`
    : !integrity.verified
      ? `INTEGRITY_FAILED: ${integrity.reason}`
      : !adapterOk
        ? `STORE_${adapter.state}: ${adapter.reason}`
        : full
          ? `LEDGER_FULL: ${ledger.size} of ${ledger.maxNodes} nodes; appends are refused and nothing is evicted`
          : durable
            ? `${store.mode} ledger: ${adapter.reason}`
            : 'in-memory ledger; resets on restart';
  return {
    schema: 'svc.ledger-readiness/v1',
    durability_state: durabilityState(store),
    requested_mode: REQUESTED_MODE[store.mode],
    ready,
    production_ready: productionReady,
    production_readiness_basis: !durable ? 'NOT_APPLICABLE' : productionReady ? 'DURABLE_STORE_AND_PERSISTED_KEY' : key.ephemeral ? 'EPHEMERAL_SIGNING_KEY' : 'NOT_READY',
    readiness_probe: 'READ_ONLY',
    persistence_scope: store.scope,
    startup_state: !selfTest.ok ? 'FAILED' : replay.corruptAt ? 'DEGRADED' : 'READY',
    adapter_configured: adapter.configured,
    adapter_state: adapter.state,
    integrity: { state: integrity.verified ? 'VERIFIED' : 'FAILED', verified: integrity.verified, nodes: integrity.nodes, root: integrity.root },
    replay: durable
      ? { state: replay.corruptAt ? 'STOPPED_AT_DAMAGE' : 'COMPLETE', nodes: replay.nodes, ms: Math.round(replay.ms), first_bad_index: replay.corruptAt?.index ?? null, from_checkpoint: replay.fromCheckpoint ?? 0 }
      : { state: 'NOT_APPLICABLE', nodes: 0 },
    ...(fsck ? { fsck: fsckPart(fsck()) } : {}),
    recovery: { attempts: adapter.recovery.attempts, retry_after_s: adapter.recovery.retry_after_s, ...(replay.trimmed ? { trimmed_bytes: replay.trimmed.bytes, trimmed_reason: replay.trimmed.reason } : {}) },
    reason,
  };
}

/** The background whole-log check as readiness shows it. */
function fsckPart(f: FsckStatus): Record<string, unknown> {
  return { state: f.state.toUpperCase(), checked: f.checked, total: f.total, first_bad_index: f.first_bad?.index ?? null, first_bad_reason: f.first_bad?.reason ?? null, entries_per_second: f.entries_per_second, error: f.error };
}

export function keyUrlFor(base: string): string {
  return `${base.replace(/\/$/, '')}/api/svc/v1/edge/pubkey.pem`;
}

/** Absolute URL of the published key: the configured public base, else the request's own origin. */
export function publicKeyUrl(ctx: Context, publicBaseUrl: string | null): string {
  return keyUrlFor(publicBaseUrl ?? `${ctx.protocol}://${ctx.host}`);
}

export function verifyOfflineSteps(keyUrl: string): string[] {
  return [
    `curl -fsS '${keyUrl}' -o svc-ledger.pub.pem`,
    `jq -r .payload_b64 receipt.json | base64 -d > payload.bin   # the signed body`,
    `{ printf 'DSSEv1 ${PAYLOAD_TYPE.length} ${PAYLOAD_TYPE} %d ' "$(wc -c < payload.bin)"; cat payload.bin; } > pae.bin   # DSSE signs PAE(type, body), not the body`,
    `jq -r '.dsse.signatures[0].sig' receipt.json | base64 -d > sig.der   # ASN.1 DER ECDSA`,
    `openssl dgst -sha256 -verify svc-ledger.pub.pem -signature sig.der pae.bin   # expect: Verified OK`,
    `sha256sum pae.bin   # must equal verification.pae_sha256`,
  ];
}

const HONESTY_SIGNATURE = 'Real ECDSA P-256 SHA-256 signature over the DSSE v1 PAE, re-verified with the key its receipt names when this document was generated';
const HONESTY_STORE = {
  memory: 'the ledger is in process memory and resets on restart.',
  file: 'the ledger is an append-only JSON Lines file, written with O_DSYNC (durable) before every acknowledgement, and survives restarts.',
  postgres: 'the ledger is one hash chain in PostgreSQL shared by every replica, committed before every acknowledgement.',
} as const;

export function exportDocument(state: LedgerState, node: LedgerNode | undefined, keyUrl: string): Record<string, unknown> {
  const { ledger, key, keyring, store } = state;
  const readiness = readinessDocument(state);
  const base = {
    schema: 'svc.receipt-export/v1',
    doctrine: RECEIPT_DOCTRINE,
    generated_at: new Date().toISOString(),
    public_key_url: keyUrl,
    ledger: readiness,
    ledger_durability: durabilityState(store),
    ledger_size: ledger.size,
    keyid: node?.keyid ?? key.keyid,
    verify_offline: verifyOfflineSteps(keyUrl),
    limits: limits(key, store),
    honesty: `${HONESTY_SIGNATURE}; ${HONESTY_STORE[store.mode]}`,
  };
  if (!node) {
    // an empty ledger is reported as such: no receipt is made up
    return {
      ...base,
      ok: true,
      export_state: 'EMPTY_LEDGER',
      receipt_available: false,
      node_index: -1,
      node_digest: null,
      khipu_root: ledger.root().toString('hex'),
      dsse: null,
      payload_b64: '',
      signed: false,
      verification: { state: 'NO_RECEIPT', verified: false, reason: 'the ledger has no receipt yet', pae_sha256: null },
    };
  }
  const paeBytes = pae(PAYLOAD_TYPE, node.payload);
  const signer = keyring.get(node.keyid);
  const check = signer ? verifySignature(paeBytes, node.sig, signer.publicKey) : { verified: false };
  return {
    ...base,
    ok: check.verified,
    export_state: check.verified ? 'SIGNED_VERIFIED' : 'SIGNATURE_INVALID',
    receipt_available: true,
    node_index: node.index,
    node_digest: node.nodeDigest.toString('hex'),
    khipu_root: ledger.root().toString('hex'),
    dsse: dsseDocument(node),
    payload_b64: node.payload.toString('base64'),
    signed: true,
    verification: {
      state: check.verified ? 'VERIFIED' : 'SIGNATURE_INVALID',
      verified: check.verified,
      reason: check.verified ? 'signature re-verified over the DSSE PAE with the published key at serve time' : 'the stored signature does not verify over the stored payload',
      pae_sha256: node.paeSha256.toString('hex'),
    },
    inclusion_proof: { leaf_index: node.index, tree_size: ledger.size, audit_path: ledger.inclusionProof(node.index).map((h) => h.toString('hex')) },
  };
}
