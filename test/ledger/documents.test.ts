// The ledger's documents without HTTP: limits, durabilityState, readinessDocument (each reason in
// its order of precedence, ready / production_ready and their basis, startup state, replay and
// recovery with trimmed bytes), keyUrlFor / publicKeyUrl, verifyOfflineSteps and exportDocument
// (EMPTY_LEDGER, SIGNED_VERIFIED with an inclusion proof checked here by RFC 9162, SIGNATURE_INVALID).
// Stores other than memory are tiny fakes implementing only what documents.ts reads.
import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Context } from 'koa';
import { durabilityState, exportDocument, keyUrlFor, limits, publicKeyUrl, readinessDocument, verifyOfflineSteps, type LedgerState } from '../../src/ledger/documents.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { loadSigningKey, type SigningKey } from '../../src/ledger/keys.js';
import { Ledger, type LedgerNode } from '../../src/ledger/ledger.js';
import { MemoryStore } from '../../src/ledger/store/memory-store.js';
import type { AdapterState, AdapterStatus, LedgerStore, ReplayReport } from '../../src/ledger/store/store.js';

const TYPE = 'application/vnd.svc.receipt+json';
const KEY_URL = 'https://ledger.example/api/svc/v1/edge/pubkey.pem';
const EMPTY_ROOT = createHash('sha256').digest('hex');

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const keyidOf = (k: KeyObject): string => createHash('sha256').update(k.export({ type: 'spki', format: 'der' })).digest('hex');
const paeOf = (type: string, body: Buffer): Buffer => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `, 'utf8'), body]);
const sha256 = (...parts: Uint8Array[]): Buffer => parts.reduce((h, p) => h.update(p), createHash('sha256')).digest();

const EPHEMERAL: SigningKey = loadSigningKey(null);
const PERSISTED: SigningKey = { ...loadSigningKey(null), ephemeral: false };

/** A file or postgres store reduced to mode, scope and status(). */
function fakeStore(mode: 'file' | 'postgres', state: AdapterState = 'READY', extra: Partial<AdapterStatus> = {}): LedgerStore {
  const status: AdapterStatus = { configured: true, state, reason: `${mode} reason ${state}`, recovery: { attempts: 0, retry_after_s: 0, last_error: null }, ...extra };
  return { mode, scope: mode === 'file' ? 'LOCAL_FILE' : 'POSTGRES', status: () => status } as unknown as LedgerStore;
}

const REPLAY: ReplayReport = { nodes: 3, trimmed: null, corruptAt: null, ms: 12.5 };

function payloadOf(k: number): Buffer {
  return Buffer.from(JSON.stringify({ schema: 'svc.receipt/v1', kind: 'counter_uas_decision', ts_utc: `2025-01-01T00:00:0${k}.000Z`, payload: { decision: 'DENY', lambda: k } }), 'utf8');
}

/** Appends a node signed over its PAE by `signer`, labelled with `keyid`. */
function appendSigned(ledger: Ledger, k: number, signer: KeyObject, keyid: string, signedPayload = payloadOf(k)): LedgerNode {
  const payload = payloadOf(k);
  return ledger.append({ kind: 'counter_uas_decision', tsUtc: `2025-01-01T00:00:0${k}.000Z`, payload, paeSha256: sha256(paeOf(TYPE, payload)), sig: sign('sha256', paeOf(TYPE, signedPayload), signer), keyid });
}

function fill(ledger: Ledger, n: number): Ledger {
  for (let k = 0; k < n; k++) appendSigned(ledger, k, PERSISTED.privateKey, PERSISTED.keyid);
  return ledger;
}

function stateOf(over: Partial<LedgerState> = {}): LedgerState {
  const key = over.key ?? PERSISTED;
  return { ledger: new Ledger(10), key, keyring: new Keyring(key), store: new MemoryStore(), replay: REPLAY, selfTest: { ok: true, reason: 'signed and verified' }, ...over };
}

/** RFC 9162 §2.1.3.2: the root an inclusion proof leads to, computed here independently of the ledger. */
function rootFromProof(leaf: Buffer, index: number, size: number, path: Buffer[]): Buffer | null {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = sha256(Buffer.from([0]), leaf);
  for (const p of path) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.from([1]), p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
      }
    } else {
      r = sha256(Buffer.from([1]), r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 ? r : null;
}

describe('ledger documents (readiness, export, key URL, offline steps)', () => {
  describe('limits and durabilityState', () => {
    it('limits: an in-memory ledger and an ephemeral key are each reported, nothing otherwise', () => {
      const mem = { code: 'EPHEMERAL_LEDGER', detail: 'The ledger lives in process memory and resets on restart.' };
      const eph = { code: 'EPHEMERAL_SIGNING_KEY', detail: 'The signing key was generated at start-up; receipts from before a restart cannot be checked against the new key.' };
      expect(limits(EPHEMERAL, new MemoryStore())).to.deep.equal([mem, eph]);
      expect(limits(PERSISTED, new MemoryStore())).to.deep.equal([mem]);
      expect(limits(EPHEMERAL, fakeStore('file'))).to.deep.equal([eph]);
      expect(limits(PERSISTED, fakeStore('postgres'))).to.deep.equal([]);
    });

    it('durabilityState: memory is EPHEMERAL whatever; a store READY is DURABLE, CORRUPT is CORRUPT, anything else DEGRADED', () => {
      expect(durabilityState(new MemoryStore())).to.equal('EPHEMERAL');
      // a memory-mode store is not asked for its state
      expect(durabilityState({ mode: 'memory', scope: 'PROCESS_MEMORY', status: () => ({ state: 'READY' }) } as unknown as LedgerStore)).to.equal('EPHEMERAL');
      const cases: [AdapterState, string][] = [['READY', 'DURABLE'], ['CORRUPT', 'CORRUPT'], ['UNAVAILABLE', 'DEGRADED'], ['LOCKED', 'DEGRADED'], ['REPLAYING', 'DEGRADED'], ['NOT_APPLICABLE', 'DEGRADED']];
      for (const [st, want] of cases) {
        expect(durabilityState(fakeStore('file', st)), st).to.equal(want);
        expect(durabilityState(fakeStore('postgres', st)), st).to.equal(want);
      }
    });
  });

  describe('readinessDocument', () => {
    it('memory mode, empty ledger: ready, not production-ready (NOT_APPLICABLE), replay not applicable whatever the report', () => {
      const doc = readinessDocument(stateOf({ key: EPHEMERAL, replay: { nodes: 7, trimmed: { bytes: 5, reason: 'torn' }, corruptAt: null, ms: 3 } }));
      expect(doc).to.deep.equal({
        schema: 'svc.ledger-readiness/v1',
        durability_state: 'EPHEMERAL',
        requested_mode: 'EPHEMERAL',
        ready: true,
        production_ready: false,
        production_readiness_basis: 'NOT_APPLICABLE',
        readiness_probe: 'READ_ONLY',
        persistence_scope: 'PROCESS_MEMORY',
        startup_state: 'READY',
        adapter_configured: false,
        adapter_state: 'NOT_APPLICABLE',
        integrity: { state: 'VERIFIED', verified: true, nodes: 0, root: EMPTY_ROOT },
        replay: { state: 'NOT_APPLICABLE', nodes: 0 },
        recovery: { attempts: 0, retry_after_s: 0, trimmed_bytes: 5, trimmed_reason: 'torn' },
        reason: 'in-memory ledger; resets on restart',
      });
      // a persisted key does not make memory mode production-ready either
      expect(readinessDocument(stateOf({ key: PERSISTED, replay: REPLAY }))).to.deep.include({ ready: true, production_ready: false, production_readiness_basis: 'NOT_APPLICABLE', recovery: { attempts: 0, retry_after_s: 0 } });
    });

    it('file store READY with a persisted key: production-ready, replay COMPLETE, reason from the adapter', () => {
      const ledger = fill(new Ledger(10), 3);
      const doc = readinessDocument(stateOf({ ledger, store: fakeStore('file') }));
      expect(doc).to.deep.equal({
        schema: 'svc.ledger-readiness/v1',
        durability_state: 'DURABLE',
        requested_mode: 'FILE',
        ready: true,
        production_ready: true,
        production_readiness_basis: 'DURABLE_STORE_AND_PERSISTED_KEY',
        readiness_probe: 'READ_ONLY',
        persistence_scope: 'LOCAL_FILE',
        startup_state: 'READY',
        adapter_configured: true,
        adapter_state: 'READY',
        integrity: { state: 'VERIFIED', verified: true, nodes: 3, root: ledger.root().toString('hex') },
        replay: { state: 'COMPLETE', nodes: 3, ms: 13, first_bad_index: null, from_checkpoint: 0 },
        recovery: { attempts: 0, retry_after_s: 0 },
        reason: 'file ledger: file reason READY',
      });
      // ms is rounded to the nearest millisecond
      expect(readinessDocument(stateOf({ store: fakeStore('file'), replay: { ...REPLAY, ms: 12.4 } })).replay).to.deep.include({ ms: 12 });
    });

    it('durable store with an ephemeral key: ready but not production-ready (EPHEMERAL_SIGNING_KEY)', () => {
      const doc = readinessDocument(stateOf({ key: EPHEMERAL, store: fakeStore('postgres') }));
      expect(doc).to.deep.include({ durability_state: 'DURABLE', requested_mode: 'POSTGRES', persistence_scope: 'POSTGRES', ready: true, production_ready: false, production_readiness_basis: 'EPHEMERAL_SIGNING_KEY', reason: 'postgres ledger: postgres reason READY' });
      // not ready and ephemeral: the key is still named as the basis
      expect(readinessDocument(stateOf({ key: EPHEMERAL, store: fakeStore('postgres', 'UNAVAILABLE') }))).to.deep.include({ ready: false, production_readiness_basis: 'EPHEMERAL_SIGNING_KEY' });
    });

    it('store UNAVAILABLE: not ready, basis NOT_READY, recovery attempts and retry reported (not last_error)', () => {
      const store = fakeStore('postgres', 'UNAVAILABLE', { reason: 'connection refused', recovery: { attempts: 4, retry_after_s: 7, last_error: 'ECONNREFUSED' } });
      const doc = readinessDocument(stateOf({ store }));
      expect(doc).to.deep.include({ durability_state: 'DEGRADED', ready: false, production_ready: false, production_readiness_basis: 'NOT_READY', adapter_state: 'UNAVAILABLE', startup_state: 'READY', reason: 'STORE_UNAVAILABLE: connection refused' });
      expect(doc.recovery).to.deep.equal({ attempts: 4, retry_after_s: 7 });
      expect(doc.replay).to.deep.equal({ state: 'COMPLETE', nodes: 3, ms: 13, first_bad_index: null, from_checkpoint: 0 });
      for (const st of ['LOCKED', 'REPLAYING'] as const) {
        expect(readinessDocument(stateOf({ store: fakeStore('file', st) })), st).to.deep.include({ ready: false, adapter_state: st, reason: `STORE_${st}: file reason ${st}` });
      }
      // only READY and NOT_APPLICABLE adapters are fine: a file store claiming NOT_APPLICABLE is ready
      expect(readinessDocument(stateOf({ store: fakeStore('file', 'NOT_APPLICABLE') }))).to.deep.include({ ready: true, production_ready: true });
    });

    it('replay stopped at damage with a trimmed torn line: startup DEGRADED, first bad index, trimmed bytes', () => {
      const replay: ReplayReport = { nodes: 3, trimmed: { bytes: 17, reason: 'torn last line' }, corruptAt: { index: 3, reason: 'node 3: digest does not recompute' }, ms: 40.2 };
      const doc = readinessDocument(stateOf({ store: fakeStore('file', 'CORRUPT', { reason: 'damaged at node 3' }), replay }));
      expect(doc).to.deep.include({ durability_state: 'CORRUPT', startup_state: 'DEGRADED', ready: false, production_readiness_basis: 'NOT_READY', reason: 'STORE_CORRUPT: damaged at node 3' });
      expect(doc.replay).to.deep.equal({ state: 'STOPPED_AT_DAMAGE', nodes: 3, ms: 40, first_bad_index: 3, from_checkpoint: 0 });
      expect(doc.recovery).to.deep.equal({ attempts: 0, retry_after_s: 0, trimmed_bytes: 17, trimmed_reason: 'torn last line' });
      // damage at index 0 is reported as 0
      const zero = readinessDocument(stateOf({ store: fakeStore('file'), replay: { ...replay, corruptAt: { index: 0, reason: 'r' } } }));
      expect(zero.replay).to.deep.include({ state: 'STOPPED_AT_DAMAGE', first_bad_index: 0 });
      expect(zero).to.deep.include({ startup_state: 'DEGRADED', ready: true });
      // a trimmed line alone: replay complete, trimmed bytes still reported
      const trimmedOnly = readinessDocument(stateOf({ store: fakeStore('file'), replay: { ...REPLAY, trimmed: { bytes: 1, reason: 'x' } } }));
      expect(trimmedOnly).to.deep.include({ startup_state: 'READY' });
      expect(trimmedOnly.replay).to.deep.include({ state: 'COMPLETE' });
      expect(trimmedOnly.recovery).to.deep.equal({ attempts: 0, retry_after_s: 0, trimmed_bytes: 1, trimmed_reason: 'x' });
    });

    it('integrity failure: not ready, integrity FAILED with the probe reason', () => {
      const ledger = fill(new Ledger(10), 3);
      // node 1's stored PAE digest changed in place (the node table hands out views)
      ledger.get(1)!.paeSha256[0]! ^= 1;
      const doc = readinessDocument(stateOf({ ledger, store: fakeStore('file') }));
      expect(doc).to.deep.include({ ready: false, production_ready: false, production_readiness_basis: 'NOT_READY', startup_state: 'READY', reason: 'INTEGRITY_FAILED: node 1: digest does not recompute' });
      expect(doc.integrity).to.deep.equal({ state: 'FAILED', verified: false, nodes: 3, root: ledger.root().toString('hex') });
    });

    it('full at size = maxNodes (not before): not ready, LEDGER_FULL', () => {
      const full = readinessDocument(stateOf({ ledger: fill(new Ledger(3), 3), store: fakeStore('file') }));
      expect(full).to.deep.include({ ready: false, production_ready: false, production_readiness_basis: 'NOT_READY', reason: 'LEDGER_FULL: 3 of 3 nodes; appends are refused and nothing is evicted' });
      expect(full.integrity).to.deep.include({ verified: true, nodes: 3 });
      const oneLeft = readinessDocument(stateOf({ ledger: fill(new Ledger(4), 3), store: fakeStore('file') }));
      expect(oneLeft).to.deep.include({ ready: true, production_ready: true, reason: 'file ledger: file reason READY' });
      // in memory mode too
      expect(readinessDocument(stateOf({ ledger: fill(new Ledger(2), 2) }))).to.deep.include({ ready: false, reason: 'LEDGER_FULL: 2 of 2 nodes; appends are refused and nothing is evicted' });
    });

    it('signing self-test failure: startup FAILED (even with damage), not ready', () => {
      const selfTest = { ok: false, reason: 'pool down' };
      const doc = readinessDocument(stateOf({ selfTest, store: fakeStore('file'), replay: { ...REPLAY, corruptAt: { index: 1, reason: 'r' } } }));
      expect(doc).to.deep.include({ startup_state: 'FAILED', ready: false, production_ready: false, production_readiness_basis: 'NOT_READY', reason: 'SIGNING_SELF_TEST_FAILED: pool down' });
      expect(readinessDocument(stateOf({ selfTest }))).to.deep.include({ startup_state: 'FAILED', ready: false, reason: 'SIGNING_SELF_TEST_FAILED: pool down' });
    });

    it('reasons in order of precedence: self-test, integrity, store, full', () => {
      const broken = (): Ledger => {
        const l = fill(new Ledger(2), 2);
        l.get(0)!.paeSha256[5]! ^= 0x80;
        return l;
      };
      const down = fakeStore('postgres', 'UNAVAILABLE', { reason: 'down' });
      expect(readinessDocument(stateOf({ selfTest: { ok: false, reason: 's' }, ledger: broken(), store: down })).reason).to.equal('SIGNING_SELF_TEST_FAILED: s');
      expect(readinessDocument(stateOf({ ledger: broken(), store: down })).reason).to.equal('INTEGRITY_FAILED: node 0: digest does not recompute');
      expect(readinessDocument(stateOf({ ledger: fill(new Ledger(2), 2), store: down })).reason).to.equal('STORE_UNAVAILABLE: down');
      expect(readinessDocument(stateOf({ ledger: fill(new Ledger(2), 2), store: fakeStore('postgres') })).reason).to.equal('LEDGER_FULL: 2 of 2 nodes; appends are refused and nothing is evicted');
    });
  });

  describe('key URL and offline steps', () => {
    it('keyUrlFor drops one trailing slash of the base', () => {
      expect(keyUrlFor('https://pub.example')).to.equal('https://pub.example/api/svc/v1/edge/pubkey.pem');
      expect(keyUrlFor('https://pub.example/')).to.equal('https://pub.example/api/svc/v1/edge/pubkey.pem');
      expect(keyUrlFor('https://pub.example/base/')).to.equal('https://pub.example/base/api/svc/v1/edge/pubkey.pem');
    });

    it('publicKeyUrl: the configured base wins, else the request origin', () => {
      const ctx = { protocol: 'http', host: '127.0.0.1:8080' } as unknown as Context;
      expect(publicKeyUrl(ctx, null)).to.equal('http://127.0.0.1:8080/api/svc/v1/edge/pubkey.pem');
      expect(publicKeyUrl(ctx, 'https://pub.example/')).to.equal('https://pub.example/api/svc/v1/edge/pubkey.pem');
    });

    it('verifyOfflineSteps: six shell steps naming the key URL and the PAE prefix of the receipt type', () => {
      expect(verifyOfflineSteps(KEY_URL)).to.deep.equal([
        `curl -fsS '${KEY_URL}' -o svc-ledger.pub.pem`,
        'jq -r .payload_b64 receipt.json | base64 -d > payload.bin   # the signed body',
        `{ printf 'DSSEv1 32 application/vnd.svc.receipt+json %d ' "$(wc -c < payload.bin)"; cat payload.bin; } > pae.bin   # DSSE signs PAE(type, body), not the body`,
        "jq -r '.dsse.signatures[0].sig' receipt.json | base64 -d > sig.der   # ASN.1 DER ECDSA",
        'openssl dgst -sha256 -verify svc-ledger.pub.pem -signature sig.der pae.bin   # expect: Verified OK',
        'sha256sum pae.bin   # must equal verification.pae_sha256',
      ]);
    });
  });

  describe('exportDocument', () => {
    /** generated_at checked (a fresh ISO timestamp) and dropped. */
    function exported(state: LedgerState, node: LedgerNode | undefined): Record<string, any> {
      const before = Date.now();
      const doc = exportDocument(state, node, KEY_URL) as Record<string, any>;
      const at = Date.parse(doc.generated_at);
      expect(new Date(at).toISOString()).to.equal(doc.generated_at);
      expect(at).to.be.within(before, Date.now());
      const { generated_at: _g, ...rest } = doc;
      return rest;
    }

    it('an empty ledger: EMPTY_LEDGER, no receipt made up, no inclusion proof', () => {
      const state = stateOf({ key: EPHEMERAL });
      const doc = exported(state, undefined);
      expect(doc).to.deep.equal({
        schema: 'svc.receipt-export/v1',
        doctrine: 'v11',
        public_key_url: KEY_URL,
        ledger: readinessDocument(state),
        ledger_durability: 'EPHEMERAL',
        ledger_size: 0,
        keyid: EPHEMERAL.keyid,
        verify_offline: verifyOfflineSteps(KEY_URL),
        limits: limits(EPHEMERAL, state.store),
        honesty: 'Real ECDSA P-256 SHA-256 signature over the DSSE v1 PAE, re-verified with the key its receipt names when this document was generated; the ledger is in process memory and resets on restart.',
        ok: true,
        export_state: 'EMPTY_LEDGER',
        receipt_available: false,
        node_index: -1,
        node_digest: null,
        khipu_root: EMPTY_ROOT,
        dsse: null,
        payload_b64: '',
        signed: false,
        verification: { state: 'NO_RECEIPT', verified: false, reason: 'the ledger has no receipt yet', pae_sha256: null },
      });
      expect(doc.limits).to.have.length(2);
      expect(doc.ledger).to.deep.include({ ready: true, durability_state: 'EPHEMERAL' });
      // a non-empty ledger exported without a node still says EMPTY_LEDGER for that node, with the live size and root
      const filled = stateOf({ ledger: fill(new Ledger(5), 2), store: fakeStore('postgres') });
      const none = exported(filled, undefined);
      expect(none).to.deep.include({ export_state: 'EMPTY_LEDGER', ledger_size: 2, khipu_root: filled.ledger.root().toString('hex'), keyid: PERSISTED.keyid, ledger_durability: 'DURABLE', limits: [] });
      expect(none.honesty).to.match(/; the ledger is one hash chain in PostgreSQL shared by every replica, committed before every acknowledgement\.$/);
    });

    it('a node signed by a retired key of the keyring: SIGNED_VERIFIED, its keyid, DSSE envelope and an inclusion proof that leads to the root', () => {
      const retired = p256();
      const retiredId = keyidOf(retired.publicKey);
      const keyring = new Keyring(PERSISTED);
      keyring.add(retired.publicKey.export({ type: 'spki', format: 'pem' }).toString());
      const ledger = new Ledger(10);
      appendSigned(ledger, 0, PERSISTED.privateKey, PERSISTED.keyid);
      const old = appendSigned(ledger, 1, retired.privateKey, retiredId);
      for (let k = 2; k < 6; k++) appendSigned(ledger, k, PERSISTED.privateKey, PERSISTED.keyid);
      const state = stateOf({ ledger, keyring, store: fakeStore('file') });
      const doc = exported(state, old);
      const payload = payloadOf(1);
      const paeSha = sha256(paeOf(TYPE, payload)).toString('hex');
      const { inclusion_proof: proof, dsse, ...rest } = doc;
      expect(rest).to.deep.equal({
        schema: 'svc.receipt-export/v1',
        doctrine: 'v11',
        public_key_url: KEY_URL,
        ledger: readinessDocument(state),
        ledger_durability: 'DURABLE',
        ledger_size: 6,
        keyid: retiredId,
        verify_offline: verifyOfflineSteps(KEY_URL),
        limits: [],
        honesty:
          'Real ECDSA P-256 SHA-256 signature over the DSSE v1 PAE, re-verified with the key its receipt names when this document was generated; the ledger is an append-only JSON Lines file, written with O_DSYNC (durable) before every acknowledgement, and survives restarts.',
        ok: true,
        export_state: 'SIGNED_VERIFIED',
        receipt_available: true,
        node_index: 1,
        node_digest: old.nodeDigest.toString('hex'),
        khipu_root: ledger.root().toString('hex'),
        payload_b64: payload.toString('base64'),
        signed: true,
        verification: { state: 'VERIFIED', verified: true, reason: 'signature re-verified over the DSSE PAE with the published key at serve time', pae_sha256: paeSha },
      });
      expect(dsse).to.deep.include({ payloadType: TYPE, payload: payload.toString('base64'), signed: true, keyid: retiredId, _dsse: 'DSSEv1', _pae_sha256: paeSha });
      expect(dsse.signatures).to.deep.equal([{ sig: old.sig.toString('base64'), keyid: retiredId }]);
      expect(proof.leaf_index).to.equal(1);
      expect(proof.tree_size).to.equal(6);
      expect(proof.audit_path).to.have.length(3);
      const path = (proof.audit_path as string[]).map((h) => Buffer.from(h, 'hex'));
      expect(rootFromProof(old.nodeDigest, 1, 6, path)?.toString('hex')).to.equal(ledger.root().toString('hex'));
      // the proof is for this node: another leaf does not lead to the root
      expect(rootFromProof(ledger.get(0)!.nodeDigest, 1, 6, path)?.toString('hex')).to.not.equal(ledger.root().toString('hex'));

      // the newest node, signed by the current key
      const last = ledger.get(5)!;
      const lastDoc = exported(state, last);
      expect(lastDoc).to.deep.include({ ok: true, export_state: 'SIGNED_VERIFIED', keyid: PERSISTED.keyid, node_index: 5 });
      const lastPath = (lastDoc.inclusion_proof.audit_path as string[]).map((h) => Buffer.from(h, 'hex'));
      expect(lastDoc.inclusion_proof).to.deep.include({ leaf_index: 5, tree_size: 6 });
      expect(rootFromProof(last.nodeDigest, 5, 6, lastPath)?.toString('hex')).to.equal(ledger.root().toString('hex'));
    });

    it('a stored signature that does not verify, or a keyid the keyring lacks: SIGNATURE_INVALID, still exported', () => {
      const ledger = new Ledger(10);
      appendSigned(ledger, 0, PERSISTED.privateKey, PERSISTED.keyid);
      // signed by our key, but over another payload
      const wrongBody = appendSigned(ledger, 1, PERSISTED.privateKey, PERSISTED.keyid, payloadOf(9));
      // signed over its own PAE by a key the keyring does not hold
      const stranger = p256();
      const unknown = appendSigned(ledger, 2, stranger.privateKey, keyidOf(stranger.publicKey));
      // signed by our current key but naming a keyid we do not hold: the named key is the one checked
      const mislabelled = appendSigned(ledger, 3, PERSISTED.privateKey, 'ab'.repeat(32));
      const state = stateOf({ ledger, store: fakeStore('postgres') });
      for (const node of [wrongBody, unknown, mislabelled]) {
        const doc = exported(state, node);
        expect(doc, `node ${node.index}`).to.deep.include({
          ok: false,
          export_state: 'SIGNATURE_INVALID',
          receipt_available: true,
          signed: true,
          keyid: node.keyid,
          node_index: node.index,
          node_digest: node.nodeDigest.toString('hex'),
          payload_b64: node.payload.toString('base64'),
          ledger_size: 4,
        });
        expect(doc.verification).to.deep.equal({ state: 'SIGNATURE_INVALID', verified: false, reason: 'the stored signature does not verify over the stored payload', pae_sha256: sha256(paeOf(TYPE, node.payload)).toString('hex') });
        expect(doc.dsse).to.deep.include({ keyid: node.keyid });
        expect(doc.inclusion_proof).to.deep.include({ leaf_index: node.index, tree_size: 4 });
      }
      // the good node next to them still verifies
      expect(exported(state, ledger.get(0)!)).to.deep.include({ ok: true, export_state: 'SIGNED_VERIFIED' });
    });
  });
});
