import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { Ledger } from '../../src/ledger/ledger.js';
import type { LedgerStatus } from '../../src/ledger/status.js';
import { dssePae, inclusionVerifies, isDerEcdsa } from '../../src/evidence/probes.js';
import { unlabelledNumbers } from '../../src/evidence/claims.js';
import { HONESTY_RULES } from '../../src/core/doctrine.js';
import { withTestApp } from '../helpers/app.js';
import { adsbTestConfig } from '../helpers/adsb-config.js';
import { startFakeUpstream, type FakeUpstream } from '../helpers/fake-adsb-upstream.js';
import { spin } from '../helpers/faults.js';
import { sh, withTempDir, write } from '../helpers/shell.js';
import { frame } from '../security/fakes.js';

const API = '/api/svc/v1';
const live = (id: string) => `${API}/evidence/research/${id}/live`;

/** A real Ledger wrapped the way the ledger feature publishes it, so a test can corrupt a node. */
function tamperableLedger(keyid: string, nodes: number): { status: LedgerStatus; ledger: Ledger } {
  const ledger = new Ledger(1000);
  for (let i = 0; i < nodes; i++) {
    const payload = Buffer.from(`{"n":${i}}`);
    ledger.append({ kind: 'test', tsUtc: new Date(0).toISOString(), payload, paeSha256: createHash('sha256').update(payload).digest(), sig: Buffer.alloc(70), keyid });
  }
  const status: LedgerStatus = {
    size: () => ledger.size,
    maxNodes: ledger.maxNodes,
    root: () => (ledger.size ? ledger.root().toString('hex') : null),
    verifyIntegrity: () => {
      const r = ledger.verifyIntegrity(true);
      return { ...r, root: ledger.size ? r.root : null };
    },
    mode: 'memory',
    durable: false,
    keyid,
    ephemeralKey: true,
  };
  return { status, ledger };
}

describe('evidence claims on a fresh app', () => {
  const app = withTestApp();

  it('before any refresh: claims unchecked, doctrine enforcement null; every doctrine claim id exists', async () => {
    const { body } = await app().http.get(`${API}/evidence/research`);
    expect(body).to.include({ schema: 'svc.evidence-index/v1', doctrine: 'v11', refresh_count: 0, refreshed_at: null });
    expect(body.claims.every((c: { status: string }) => c.status === 'unchecked')).to.equal(true);
    const doctrine = (await app().http.get(`${API}/doctrine`)).body;
    expect(doctrine.enforcement).to.deep.equal({ from_refresh_at: null, claims: {} });
    const ids = body.claims.map((c: { claim_id: string }) => c.claim_id);
    for (const rule of HONESTY_RULES) for (const id of rule.evidence_claims) expect(ids).to.include(id);
    expect(ids).to.include('ledger-hash-chain-intact');
  });

  it('an empty ledger: receipts-verify-offline is not_applicable, never verified', async () => {
    const { body } = await app().http.get(live('receipts-verify-offline'));
    expect(app().provided.ledger.status.size()).to.equal(0);
    expect(body.status).to.equal('not_applicable');
  });
});

describe('evidence claims', () => {
  // the ADS-B feed (an internal source) reads a fake upstream on 127.0.0.1, never the public web
  let upstream: FakeUpstream;
  before(async () => {
    upstream = await startFakeUpstream({ mode: 'ok' });
  });
  // fault kernels keep the pool busy (refresh test)
  const app = withTestApp(() => ({ adsb: adsbTestConfig([`${upstream.url}/v2/mil`]) }), { faults: true });
  after(() => upstream.close());

  describe('GET /evidence/research (index)', () => {
    it('check 1: every live_url and sources_url resolves with 200', async () => {
      const { body } = await app().http.get(`${API}/evidence/research`);
      expect(body.claims.length).to.be.at.least(7);
      for (const c of body.claims) {
        expect((await app().http.get(c.live_url)).status, c.live_url).to.equal(200);
        expect((await app().http.get(c.sources_url)).status, c.sources_url).to.equal(200);
      }
    });

    it('check 2: after a refresh every index status equals the status its live view returns, and the doctrine carries them', async () => {
      const refresh = (await app().http.get(`${API}/evidence/research/refresh`)).body;
      const index = (await app().http.get(`${API}/evidence/research`)).body;
      for (const c of index.claims) {
        expect(['verified', 'failed', 'not_applicable']).to.include(c.status);
        expect((await app().http.get(c.live_url)).body.status, c.claim_id).to.equal(c.status);
      }
      const doctrine = (await app().http.get(`${API}/doctrine`)).body;
      expect(doctrine.enforcement.from_refresh_at).to.equal(refresh.refreshed_at);
      expect(doctrine.enforcement.claims).to.deep.equal(Object.fromEntries(index.claims.map((c: { claim_id: string; status: string }) => [c.claim_id, c.status])));
    });
  });

  describe('GET /evidence/research/{claim_id}/live', () => {
    it('check 1: after a verdict the chain claim counts one more node with the export’s root, and the PAE digest and signature are the ones openssl verifies', async () => {
      const before = (await app().http.get(live('ledger-hash-chain-intact'))).body;
      expect((await app().http.post(`${API}/verdict`).send(frame)).status).to.equal(200);
      const chain = (await app().http.get(live('ledger-hash-chain-intact'))).body;
      const doc = (await app().http.get(`${API}/receipt/export`)).body;
      expect(chain.status).to.equal('verified');
      expect(chain.observations.nodes).to.equal(before.observations.nodes + 1);
      expect(chain.observations.root).to.equal(doc.khipu_root);
      expect(chain.observations.newest_inclusion_verified).to.equal(true);
      const receipt = (await app().http.get(live('receipts-verify-offline'))).body;
      expect(receipt.status).to.equal('verified');
      expect(receipt.observations).to.include({ node_index: doc.node_index, pae_sha256: doc.verification.pae_sha256, keyid: doc.keyid, verified: true });
      const pem = (await app().http.get(`${API}/edge/pubkey.pem`)).text;
      await withTempDir(async (dir) => {
        await write(dir, 'key.pem', pem);
        const payload = Buffer.from(doc.dsse.payload, 'base64');
        await write(dir, 'pae.bin', dssePae(doc.dsse.payloadType, payload));
        await write(dir, 'sig.der', Buffer.from(doc.dsse.signatures[0].sig, 'base64'));
        expect((await sh(dir, 'openssl dgst -sha256 -verify key.pem -signature sig.der pae.bin')).out).to.equal('Verified OK\n');
        expect((await sh(dir, 'sha256sum pae.bin')).out.split(' ')[0]).to.equal(receipt.observations.pae_sha256);
      });
    });

    it('check 2: a corrupted in-memory node makes the chain claim fail at that node, and the doctrine follows after a refresh', async () => {
      const real = app().provided.ledger.status;
      const { status, ledger } = tamperableLedger(real!.keyid, 5);
      app().provided.ledger.status = status;
      try {
        // an implementation echoing the stored root would still say verified: the root is still there
        expect(status.root()).to.match(/^[0-9a-f]{64}$/);
        ledger.get(2)!.paeSha256.fill(7);
        const { body } = await app().http.get(live('ledger-hash-chain-intact'));
        expect(body.status).to.equal('failed');
        expect(body.observations.first_bad_node).to.equal(2);
        expect(body.observations.verified).to.equal(false);
        await app().http.get(`${API}/evidence/research/refresh`);
        const doctrine = (await app().http.get(`${API}/doctrine`)).body;
        expect(doctrine.enforcement.claims['ledger-hash-chain-intact']).to.equal('failed');
      } finally {
        app().provided.ledger.status = real;
      }
      await app().http.get(`${API}/evidence/research/refresh`);
      expect((await app().http.get(`${API}/doctrine`)).body.enforcement.claims['ledger-hash-chain-intact']).to.equal('verified');
    });

    it('the PAE routine reproduces the DSSE spec vector; the inclusion verifier rejects a wrong root', () => {
      expect(dssePae('http://example.com/HelloWorld', Buffer.from('hello world')).toString()).to.equal('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
      const d = createHash('sha256').update('x').digest();
      const leaf = createHash('sha256').update(Buffer.from([0])).update(d).digest();
      expect(inclusionVerifies(d, 0, 1, [], leaf)).to.equal(true);
      expect(inclusionVerifies(d, 0, 1, [], d)).to.equal(false);
    });

    it('signatures-real-ecdsa signs in the worker, verifies a DER signature with the served key and appends nothing', async () => {
      const size = app().provided.ledger.status.size();
      const { body } = await app().http.get(live('signatures-real-ecdsa'));
      expect(body.status).to.equal('verified');
      expect(body.observations).to.include({ verified: true, der_encoded: true, tampered_verifies: false, curve: 'prime256v1', keyid: app().provided.ledger.status.keyid });
      expect(app().provided.ledger.status.size()).to.equal(size);
      expect(isDerEcdsa(Buffer.alloc(64, 1))).to.equal(false);
    });

    it('adsb-never-synthetic fails aircraft without an upstream success', async () => {
      const saved = app().provided.adsb.status;
      try {
        app().provided.adsb.status = () => ({ live: false, snapshotAgeS: 30, aircraft: 12, providers: [{ name: 'p', url: 'https://api.adsb.lol/v2/mil', breaker: 'closed', consecutiveFailures: 1, lastOkAt: null, lastError: 'x', lastStatus: 500 }] });
        expect((await app().http.get(live('adsb-never-synthetic'))).body.status).to.equal('failed');
        app().provided.adsb.status = () => ({ live: true, snapshotAgeS: 2, aircraft: 12, providers: [{ name: 'p', url: 'https://api.adsb.lol/v2/mil', breaker: 'closed', consecutiveFailures: 0, lastOkAt: new Date().toISOString(), lastError: null, lastStatus: 200 }] });
        expect((await app().http.get(live('adsb-never-synthetic'))).body.status).to.equal('verified');
      } finally {
        app().provided.adsb.status = saved;
      }
    });

    it('kernels-deterministic and ledger-durability re-derive their observations', async () => {
      const k = (await app().http.get(live('kernels-deterministic'))).body;
      expect(k.status).to.equal('verified');
      const direct = await app().http.get(k.observations.route);
      expect(k.observations.sha256[0]).to.equal(createHash('sha256').update(direct.text).digest('hex'));
      const e = (await app().http.get(live('ledger-durability'))).body;
      expect(e.status).to.equal('verified');
      expect(e.observations).to.include({ mode: 'memory', durability_state: 'EPHEMERAL', persistence_scope: 'PROCESS_MEMORY', limit_present: true });
      expect(unlabelledNumbers({ a: { value: 1, basis: 'measured' }, b: 2, c: [{ basis: 'model', v: [3] }] })).to.deep.equal(['$.b']);
    });

    it('malformed ids are 422, unknown ids 404', async () => {
      for (const bad of ['Bad_Id', '-x', 'a'.repeat(65), 'x%20y']) {
        const res = await app().http.get(live(bad));
        expect(res.status, bad).to.equal(422);
        expect(res.body.detail[0]).to.include({ type: 'string_pattern_mismatch' });
        expect(res.body.detail[0].loc).to.deep.equal(['path', 'claim_id']);
        expect((await app().http.get(`${API}/evidence/research/${bad}/sources/live`)).status, bad).to.equal(422);
      }
      const res = await app().http.get(live('no-such-claim'));
      expect(res.status).to.equal(404);
      expect(res.body).to.deep.equal({ detail: "claim 'no-such-claim' not found" });
      expect((await app().http.get(`${API}/evidence/research/no-such-claim/sources/live`)).status).to.equal(404);
    });
  });

  describe('GET /evidence/research/{claim_id}/sources/live', () => {
    it('check 1: an internal source’s body_sha256 equals the digest of a direct GET of the same deterministic route', async () => {
      const { body } = await app().http.get(`${API}/evidence/research/signatures-real-ecdsa/sources/live`);
      const src = body.sources.find((x: { url: string }) => x.url === `${API}/edge/pubkey.pem`);
      expect(src.live).to.include({ checked: true, status_code: 200 });
      const direct = await app().http.get(`${API}/edge/pubkey.pem`).buffer(true);
      expect(src.live.body_sha256).to.equal(createHash('sha256').update(direct.text).digest('hex'));
      const k = (await app().http.get(`${API}/evidence/research/kernels-deterministic/sources/live`)).body.sources[0];
      expect(k.live.body_sha256).to.equal(createHash('sha256').update((await app().http.get(k.url)).text).digest('hex'));
    });

    it('check 2: no external source is ever checked, and no request leaves for the public web', async () => {
      const realFetch = globalThis.fetch;
      const fetched: string[] = [];
      globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
        fetched.push(String(args[0] instanceof Request ? args[0].url : args[0]));
        return realFetch(...args);
      }) as typeof fetch;
      try {
        const index = (await app().http.get(`${API}/evidence/research`)).body;
        for (const c of index.claims) {
          const { body } = await app().http.get(c.sources_url);
          for (const src of body.sources) {
            if (src.kind === 'internal') continue;
            expect(src.live).to.deep.equal({ checked: false, reason: 'external reference; the service does not fetch the public web' });
          }
        }
      } finally {
        globalThis.fetch = realFetch;
      }
      // checking the internal /adsb source may refresh the feed from its configured upstream, nothing else
      expect(fetched.filter((url) => !url.startsWith(upstream.url))).to.deep.equal([]);
    });
  });

  describe('GET /evidence/research/refresh', () => {
    it('check 1: refresh_count rises by 1 and generated_at advances; two concurrent refreshes share one run', async () => {
      const before = (await app().http.get(`${API}/evidence/research`)).body;
      await new Promise((resolve) => setTimeout(resolve, 15)); // past the millisecond clock resolution
      const one = (await app().http.get(`${API}/evidence/research/refresh`)).body;
      expect(one.index.refresh_count).to.equal(before.refresh_count + 1);
      // advances: strictly later than the index it replaces
      expect(Date.parse(one.index.generated_at)).to.be.greaterThan(Date.parse(before.generated_at));
      expect(one.results.verified + one.results.failed + one.results.not_applicable).to.equal(before.claims.length);
      // keep both workers busy for a moment, so the refresh (which signs in the pool) is still running when the second call arrives
      const busy = Array.from({ length: app().services.pool.snapshot().threads }, () => app().services.pool.run(spin(300)));
      const [a, b] = await Promise.all([app().http.get(`${API}/evidence/research/refresh`), app().http.get(`${API}/evidence/research/refresh`)]);
      await Promise.all(busy);
      expect(a.body.refreshed_at).to.equal(b.body.refreshed_at);
      expect(a.body.index.refresh_count).to.equal(one.index.refresh_count + 1);
    });

    it('check 2: the ledger size is identical before and after a refresh', async () => {
      await app().http.post(`${API}/verdict`).send(frame);
      const before = (await app().http.get(`${API}/ledger/readiness`)).body.integrity;
      await app().http.get(`${API}/evidence/research/refresh`);
      const after = (await app().http.get(`${API}/ledger/readiness`)).body.integrity;
      expect(after.nodes).to.equal(before.nodes);
      expect(after.root).to.equal(before.root);
    });
  });
});
