/** The readiness object (interface 2.2) and the receipt export document (2.1), built from live state. */
import type { Context } from 'koa';
import type { Ledger, LedgerNode } from './ledger.js';
import type { SigningKey } from './keys.js';
import { dsseDocument } from './receipt.js';
import { pae, PAYLOAD_TYPE, verifySignature } from './dsse.js';

export interface LedgerState {
  ledger: Ledger;
  key: SigningKey;
  /** Start-up self-test outcome: the key signed (in the pool) and verified. */
  selfTest: { ok: boolean; reason: string };
}

export function limits(key: SigningKey): { code: string; detail: string }[] {
  const out = [{ code: 'EPHEMERAL_LEDGER', detail: 'The ledger lives in process memory and resets on restart.' }];
  if (key.ephemeral) {
    out.push({ code: 'EPHEMERAL_SIGNING_KEY', detail: 'The signing key was generated at start-up; receipts from before a restart cannot be checked against the new key.' });
  }
  return out;
}

export function readinessDocument({ ledger, selfTest }: LedgerState): Record<string, unknown> {
  const integrity = ledger.verifyIntegrity();
  const full = ledger.size >= ledger.maxNodes;
  const ready = selfTest.ok && integrity.verified && !full;
  const reason = !selfTest.ok
    ? `SIGNING_SELF_TEST_FAILED: ${selfTest.reason}`
    : !integrity.verified
      ? `INTEGRITY_FAILED: ${integrity.reason}`
      : full
        ? `LEDGER_FULL: ${ledger.size} of ${ledger.maxNodes} nodes; appends are refused and nothing is evicted`
        : 'in-memory ledger; resets on restart';
  return {
    schema: 'svc.ledger-readiness/v1',
    durability_state: 'EPHEMERAL',
    requested_mode: 'EPHEMERAL',
    ready,
    production_ready: false,
    production_readiness_basis: 'NOT_APPLICABLE',
    readiness_probe: 'READ_ONLY',
    persistence_scope: 'PROCESS_MEMORY',
    startup_state: selfTest.ok ? 'READY' : 'FAILED',
    adapter_configured: false,
    adapter_state: 'NOT_APPLICABLE',
    integrity: { state: integrity.verified ? 'VERIFIED' : 'FAILED', verified: integrity.verified, nodes: integrity.nodes, root: integrity.root },
    replay: { state: 'NOT_APPLICABLE', nodes: 0 },
    recovery: { attempts: 0, retry_after_s: 0 },
    reason,
  };
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

const HONESTY =
  'Real ECDSA P-256 SHA-256 signature over the DSSE v1 PAE, re-verified when this document was generated; the ledger is in process memory and resets on restart.';

export function exportDocument(state: LedgerState, node: LedgerNode | undefined, keyUrl: string): Record<string, unknown> {
  const { ledger, key } = state;
  const readiness = readinessDocument(state);
  const base = {
    schema: 'svc.receipt-export/v1',
    doctrine: 'v11',
    generated_at: new Date().toISOString(),
    public_key_url: keyUrl,
    ledger: readiness,
    ledger_durability: 'EPHEMERAL',
    ledger_size: ledger.size,
    keyid: key.keyid,
    verify_offline: verifyOfflineSteps(keyUrl),
    limits: limits(key),
    honesty: HONESTY,
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
  const check = verifySignature(paeBytes, node.sig, key.publicKey);
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
