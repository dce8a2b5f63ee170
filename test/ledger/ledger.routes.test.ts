import { expect } from 'chai';
import { createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { withTestApp } from '../helpers/app.js';
import { HEALTH_MAX_AGE_MS } from '../../src/core/core.routes.js';
import { Signer } from '../../src/ledger/signer.js';
import { sh, withTempDir, write } from '../helpers/shell.js';
import { leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '../../src/lib/merkle.js';

const frame = { track_id: 'a1b2c3', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };

describe('ledger routes on an empty ledger', () => {
  const app = withTestApp();

  it('an empty ledger exports honestly: no receipt, empty root, nothing made up', async () => {
    const { body } = await app().http.get('/api/svc/v1/receipt/export');
    expect(body).to.include({ schema: 'svc.receipt-export/v1', receipt_available: false, export_state: 'EMPTY_LEDGER', ledger_size: 0, node_index: -1, signed: false, dsse: null, payload_b64: '' });
    expect(body.khipu_root).to.equal('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(body.verification.state).to.equal('NO_RECEIPT');
    expect(body.limits.map((l: { code: string }) => l.code)).to.deep.equal(['EPHEMERAL_LEDGER', 'EPHEMERAL_SIGNING_KEY']);
  });
});

describe('ledger routes', () => {
  const app = withTestApp();
  const nodes = async (): Promise<number> => (await app().http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes;
  /** Appends verdicts until the ledger holds at least n nodes: a test needs no earlier test's writes. */
  const atLeast = async (n: number): Promise<void> => {
    while ((await nodes()) < n) expect((await app().http.post('/api/svc/v1/verdict').send(frame)).status).to.equal(200);
  };

  it('POST /verdict signs a receipt that openssl verifies over the PAE, and not over the bare payload', async () => {
    const size = await nodes();
    const v = await app().http.post('/api/svc/v1/verdict').send(frame);
    expect(v.status).to.equal(200);
    expect(v.body.ledger.index).to.equal(size);
    const { body: doc } = await app().http.get('/api/svc/v1/receipt/export');
    expect(doc).to.include({ export_state: 'SIGNED_VERIFIED', receipt_available: true, ledger_size: size + 1, node_index: size, signed: true, ok: true, doctrine: 'v11', ledger_durability: 'EPHEMERAL' });
    expect(doc.payload_b64).to.equal(doc.dsse.payload);
    expect(doc.dsse).to.include({ payloadType: 'application/vnd.svc.receipt+json', _dsse: 'DSSEv1', signed: true, keyid: doc.keyid });
    const payload = JSON.parse(Buffer.from(doc.payload_b64, 'base64').toString());
    expect(Object.keys(payload)).to.deep.equal(['doctrine', 'kind', 'payload', 'schema', 'subject', 'ts_utc']);
    expect(Object.keys(payload.payload)).to.deep.equal(['breaches', 'decision', 'geofence_inside', 'lambda', 'lambda_floor']);
    expect(payload).to.include({ schema: 'svc.receipt/v1', kind: 'counter_uas_decision', doctrine: 'v11' });
    const pem = (await app().http.get('/api/svc/v1/edge/pubkey.pem')).text;
    await withTempDir(async (dir) => {
      await write(dir, 'key.pem', pem);
      const body = Buffer.from(doc.payload_b64, 'base64');
      await write(dir, 'payload.bin', body);
      await write(dir, 'pae.bin', Buffer.concat([Buffer.from(`DSSEv1 32 application/vnd.svc.receipt+json ${body.length} `), body]));
      await write(dir, 'sig.der', Buffer.from(doc.dsse.signatures[0].sig, 'base64'));
      expect((await sh(dir, 'openssl dgst -sha256 -verify key.pem -signature sig.der pae.bin')).out).to.equal('Verified OK\n');
      const bare = await sh(dir, 'openssl dgst -sha256 -verify key.pem -signature sig.der payload.bin');
      expect(bare.status).to.not.equal(0);
      expect(bare.out).to.match(/Verification failure/);
      expect((await sh(dir, 'sha256sum pae.bin')).out.split(' ')[0]).to.equal(doc.verification.pae_sha256).and.equal(doc.dsse._pae_sha256);
      expect((await sh(dir, 'openssl pkey -pubin -in key.pem -outform DER | sha256sum')).out.split(' ')[0]).to.equal(doc.keyid);
    });
  });

  it('the verify_offline recipe runs verbatim with stock tools and prints Verified OK', async () => {
    await atLeast(1);
    const res = await app().http.get('/api/svc/v1/receipt/export');
    await withTempDir(async (dir) => {
      await write(dir, 'receipt.json', res.text);
      const out = await sh(dir, (res.body.verify_offline as string[]).join('\n'));
      expect(out.status).to.equal(0);
      expect(out.out).to.include('Verified OK');
      expect(out.out).to.include(`${res.body.verification.pae_sha256}  pae.bin`);
    });
  });

  it('200 concurrent verdicts get contiguous indices and a chain and root that recompute', async () => {
    const before = (await app().http.get('/api/svc/v1/ledger/readiness')).body.integrity.nodes as number;
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => app().http.post('/api/svc/v1/verdict').send({ ...frame, track_id: `c0ffe${(i % 10).toString(16)}` })));
    expect(results.every((r) => r.status === 200)).to.equal(true);
    const indices = results.map((r) => r.body.ledger.index as number).sort((a, b) => a - b);
    expect(indices).to.deep.equal(Array.from({ length: 200 }, (_, i) => before + i));
    // recompute every digest with the published formula, from the exported nodes, and verify every
    // signature over its own PAE (signed in batches: a batch answered out of order fails here)
    const pub = createPublicKey((await app().http.get('/api/svc/v1/edge/pubkey.pem')).text);
    const digests: Buffer[] = [];
    let prev = Buffer.alloc(32);
    const size = before + 200;
    for (let i = 0; i < size; i++) {
      const { body } = await app().http.get(`/api/svc/v1/receipt/export?index=${i}`);
      const payload = Buffer.from(body.dsse.payload, 'base64');
      const paeBytes = Buffer.concat([Buffer.from(`DSSEv1 32 application/vnd.svc.receipt+json ${payload.length} `), payload]);
      expect(verify('sha256', paeBytes, pub, Buffer.from(body.dsse.signatures[0].sig, 'base64')), `signature of node ${i}`).to.equal(true);
      const idx = Buffer.alloc(8);
      idx.writeBigUInt64BE(BigInt(i));
      const d = createHash('sha256').update('svc.khipu.node.v1\n').update(idx).update(prev).update(Buffer.from(body.dsse._pae_sha256, 'hex')).digest();
      expect(d.toString('hex'), `node ${i}`).to.equal(body.node_digest);
      digests.push(d);
      prev = d;
    }
    const { body: last } = await app().http.get('/api/svc/v1/receipt/export');
    expect(last.khipu_root).to.equal(rootFromLeafHashes(digests.map(leafHash)).toString('hex'));
    const proof = last.inclusion_proof.audit_path.map((h: string) => Buffer.from(h, 'hex'));
    expect(verifyInclusion(leafHash(digests.at(-1)!), size - 1, size, proof, Buffer.from(last.khipu_root, 'hex'))).to.equal(true);
  });

  it('the signing lane signs a batch in one round trip, each PAE with its own signature under the published key', async () => {
    const pub = createPublicKey((await app().http.get('/api/svc/v1/edge/pubkey.pem')).text);
    const signer = new Signer(app().services.pool, 64);
    const paes = Array.from({ length: 12 }, (_, k) => Buffer.from(`DSSEv1 1 t 1 ${k}`));
    const sigs = await Promise.all(paes.map((p) => signer.sign(p)));
    expect(signer.batches).to.equal(1);
    sigs.forEach((sig, k) => expect(verify('sha256', paes[k]!, pub, sig), `PAE ${k}`).to.equal(true));
  });

  it('a readiness probe changes nothing and reports the same root as the export', async () => {
    const a = (await app().http.get('/api/svc/v1/receipt/export')).body;
    const r = await app().http.get('/api/svc/v1/ledger/readiness');
    expect(r.status).to.equal(200);
    expect(r.body).to.include({ schema: 'svc.ledger-readiness/v1', durability_state: 'EPHEMERAL', ready: true, production_ready: false, readiness_probe: 'READ_ONLY', persistence_scope: 'PROCESS_MEMORY', startup_state: 'READY' });
    expect(r.body.integrity).to.deep.equal({ state: 'VERIFIED', verified: true, nodes: a.ledger_size, root: a.khipu_root });
    const b = (await app().http.get('/api/svc/v1/receipt/export')).body;
    expect([b.ledger_size, b.khipu_root]).to.deep.equal([a.ledger_size, a.khipu_root]);
  });

  describe('POST /khipu/verify', () => {
    let doc: any;
    before(async () => {
      await atLeast(1);
      doc = (await app().http.get('/api/svc/v1/receipt/export')).body;
    });

    it('verifies an export document and a bare envelope, with ledger membership', async () => {
      const r1 = await app().http.post('/khipu/verify').send(doc);
      expect(r1.body).to.include({ verified: true, state: 'VERIFIED' });
      expect(r1.body.ledger).to.include({ member: true, node_index: doc.node_index, node_digest: doc.node_digest });
      expect(r1.body.payload.schema).to.equal('svc.receipt/v1');
      const { payloadType, payload, signatures } = doc.dsse;
      const r2 = await app().http.post('/khipu/verify').send({ payloadType, payload, signatures });
      expect(r2.body.verified).to.equal(true);
      const urlSafe = { payloadType, payload: Buffer.from(payload, 'base64').toString('base64url'), signatures: [{ sig: Buffer.from(signatures[0].sig, 'base64').toString('base64url') }] };
      expect((await app().http.post('/khipu/verify').send(urlSafe)).body.verified).to.equal(true);
    });

    it('never verifies a flipped payload bit, a swapped payload type or another key’s signature', async () => {
      const body = Buffer.from(doc.dsse.payload, 'base64');
      body[10]! ^= 1;
      const flipped = await app().http.post('/khipu/verify').send({ ...doc.dsse, payload: body.toString('base64') });
      expect(flipped.body).to.include({ verified: false, state: 'SIGNATURE_INVALID' });
      expect(flipped.body.payload).to.equal(null);
      const swapped = await app().http.post('/khipu/verify').send({ ...doc.dsse, payloadType: 'application/json' });
      expect(swapped.body.verified).to.equal(false);
      const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
      const p = Buffer.from(doc.dsse.payload, 'base64');
      const forged = sign('sha256', Buffer.concat([Buffer.from(`DSSEv1 32 application/vnd.svc.receipt+json ${p.length} `), p]), other);
      const res = await app().http.post('/khipu/verify').send({ ...doc.dsse, signatures: [{ sig: forged.toString('base64'), keyid: doc.keyid }] });
      expect(res.body).to.include({ verified: false, state: 'SIGNATURE_INVALID' });
      expect(res.body.signatures[0]).to.include({ keyid_match: true, verified: false });
    });

    it('malformed envelopes are 422: no signatures, stray base64 characters, nothing at all', async () => {
      const none = await app().http.post('/khipu/verify').send({ ...doc.dsse, signatures: [] });
      expect(none.status).to.equal(422);
      expect(none.body.detail[0]).to.include({ type: 'too_short' });
      const stray = await app().http.post('/khipu/verify').send({ ...doc.dsse, payload: `${doc.dsse.payload.slice(0, 8)} *${doc.dsse.payload.slice(8)}` });
      expect(stray.status).to.equal(422);
      expect(stray.body.detail[0]).to.include({ type: 'string_pattern_mismatch' });
      const empty = await app().http.post('/khipu/verify').send({});
      expect(empty.status).to.equal(422);
      expect(empty.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).to.include('body.payloadType');
    });
  });

  it('the DAG view: inclusion verifies, a consistency proof shows append-only, and it is read-only', async () => {
    await atLeast(2); // depth 3 after one more append: three receipt vertices
    const before = (await app().http.get('/api/svc/v1/receipt/export')).body;
    await app().http.post('/api/svc/v1/verdict').send(frame);
    const q = encodeURIComponent(JSON.stringify({ depth: 3, since: before.ledger_size }));
    const dag = (await app().http.get(`/api/svc/khipu/dag?request=${q}`)).body;
    const r = dag.result;
    expect(r.ledger_size).to.equal(before.ledger_size + 1);
    expect(r.verified).to.deep.equal({ chain: true, inclusion: true, consistency: true });
    const path = r.consistency_proof.path.map((h: string) => Buffer.from(h, 'hex'));
    expect(verifyConsistency(before.ledger_size, r.ledger_size, Buffer.from(before.khipu_root, 'hex'), Buffer.from(r.khipu_root, 'hex'), path)).to.equal(true);
    expect(r.vertices.filter((v: { type: string }) => v.type === 'receipt')).to.have.length(3);
    const old = r.vertices.find((v: { id: string }) => v.id === `receipt:${before.node_index}`);
    expect(old.digest).to.equal(before.node_digest);
    const again = (await app().http.get(`/api/svc/khipu/dag?request=${q}`)).body.result;
    expect([again.ledger_size, again.khipu_root]).to.deep.equal([r.ledger_size, r.khipu_root]);
  });

  it('the DAG view answers 422 for a missing or bad request, 404 for an absent node', async () => {
    expect((await app().http.get('/api/svc/khipu/dag')).body).to.deep.equal({ detail: [{ type: 'missing', loc: ['query', 'request'], msg: 'Field required', input: null }] });
    const size = (await app().http.get('/api/svc/v1/receipt/export')).body.ledger_size;
    const tooFar = await app().http.get(`/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify({ since: size + 1 }))}`);
    expect(tooFar.body.detail[0]).to.deep.equal({ type: 'less_than_equal', loc: ['query', 'request', 'since'], msg: `Input should be less than or equal to ${size}`, input: size + 1, ctx: { le: size } });
    const missing = await app().http.get(`/api/svc/khipu/dag?request=${encodeURIComponent(JSON.stringify({ node: 999999 }))}`);
    expect(missing.status).to.equal(404);
    expect(missing.body).to.deep.equal({ detail: "ledger node '999999' not found" });
    const label = await app().http.get('/api/svc/khipu/dag?request=probe');
    expect(label.body.request_label).to.equal('probe');
  });

  it('POST /verdict validates the frame: unknown fields, wrong types and out-of-range values are 422', async () => {
    const res = await app().http.post('/api/svc/v1/verdict').send({ track_id: 'x', lat: 91, source: 'radar', extra: 1 });
    expect(res.status).to.equal(422);
    expect(res.body.detail).to.deep.equal([
      { type: 'literal_error', loc: ['body', 'source'], msg: "Input should be 'OpenDroneID', 'ADS-B' or 'MAVLink'", input: 'radar', ctx: { expected: "'OpenDroneID', 'ADS-B' or 'MAVLink'" } },
      { type: 'less_than_equal', loc: ['body', 'lat'], msg: 'Input should be less than or equal to 90', input: 91, ctx: { le: 90 } },
      { type: 'missing', loc: ['body', 'lon'], msg: 'Field required', input: { track_id: 'x', lat: 91, source: 'radar', extra: 1 } },
      { type: 'extra_forbidden', loc: ['body', 'extra'], msg: 'Extra inputs are not permitted', input: 1 },
    ]);
  });

  it('export: an index not in the ledger is 404 naming it, below -1 is 422; export and readiness are never cached', async () => {
    await atLeast(2);
    const size = await nodes();
    expect((await app().http.get(`/api/svc/v1/receipt/export?index=${size}`)).body).to.deep.equal({ detail: `receipt '${size}' not found` });
    expect((await app().http.get(`/api/svc/v1/receipt/export?index=${size}`)).status).to.equal(404);
    const below = await app().http.get('/api/svc/v1/receipt/export?index=-2');
    expect([below.status, below.body.detail[0].type, below.body.detail[0].loc]).to.deep.equal([422, 'greater_than_equal', ['query', 'index']]);
    const first = await app().http.get('/api/svc/v1/receipt/export?index=0');
    expect([first.status, first.body.node_index, first.headers['cache-control']]).to.deep.equal([200, 0, 'no-store']);
    // the current key signed it: the export names the plain key URL, no ?keyid=
    expect(first.body.public_key_url).to.match(/\/api\/svc\/v1\/edge\/pubkey\.pem$/);
    expect((await app().http.get('/api/svc/v1/ledger/readiness')).headers['cache-control']).to.equal('no-store');
  });

  it('the PEM by keyid: the current key by default and by its own keyid; an unknown keyid is 404 naming it', async () => {
    const current = await app().http.get('/api/svc/v1/edge/pubkey.pem');
    expect([current.status, current.headers['content-type']]).to.deep.equal([200, 'application/x-pem-file']);
    const keyid = createHash('sha256').update(createPublicKey(current.text).export({ type: 'spki', format: 'der' })).digest('hex');
    expect((await app().http.get(`/api/svc/v1/edge/pubkey.pem?keyid=${keyid}`)).text).to.equal(current.text);
    const other = 'f'.repeat(64);
    const missing = await app().http.get(`/api/svc/v1/edge/pubkey.pem?keyid=${other}`);
    expect([missing.status, missing.body]).to.deep.equal([404, { detail: `key '${other}' not found` }]);
  });

  it('/health reports the ledger from live state: node count against the cap, the store, and integrity', async () => {
    await atLeast(1);
    const size = await nodes();
    // one computed answer per health window: wait it out so this one is computed now
    await new Promise((r) => setTimeout(r, HEALTH_MAX_AGE_MS + 10));
    const { checks } = (await app().http.get('/api/svc/v1/health')).body;
    expect(checks['ledger:nodes']).to.include({ componentType: 'datastore', observedValue: size, observedUnit: 'nodes', status: 'pass', output: 'cap 100000' });
    expect(checks['ledger:store']).to.include({ observedValue: 'EPHEMERAL', observedUnit: 'durability', status: 'pass', output: 'memory mode (PROCESS_MEMORY): memory mode: nothing is persisted' });
    expect(checks['ledger:integrity']).to.include({ observedValue: true, observedUnit: 'boolean', status: 'pass', output: `chain and Merkle leaves recomputed for ${size} nodes` });
  });

  it('publishes the key as JSON (JWK matches the PEM) and PEM', async () => {
    const { body } = await app().http.get('/api/svc/v1/edge/pubkey');
    const pem = await app().http.get('/api/svc/v1/edge/pubkey.pem');
    expect(pem.text).to.equal(body.public_key_pem);
    expect(body).to.include({ alg: 'ECDSA-P256-SHA256', sig_encoding: 'DER', ephemeral: true });
    expect(body.jwk).to.include({ kty: 'EC', crv: 'P-256' });
    // the JWK is the PEM's key: x and y (not swapped, not another key) as node's own JWK export gives them
    const fromPem = createPublicKey(pem.text).export({ format: 'jwk' });
    expect({ kty: body.jwk.kty, crv: body.jwk.crv, x: body.jwk.x, y: body.jwk.y }).to.deep.equal(fromPem);
    expect(body.jwk.x).to.not.equal(body.jwk.y);
    expect(body.public_key_url).to.match(/\/api\/svc\/v1\/edge\/pubkey\.pem$/);
  });
});

describe('ledger cap', () => {
  const app = withTestApp({ ledger: { maxNodes: 2 } });

  it('refuses appends at the cap with 503 + Retry-After, evicts nothing, and readiness says why', async () => {
    const all = await Promise.all([0, 1, 2].map(() => app().http.post('/api/svc/v1/verdict').send(frame)));
    expect(all.map((r) => r.status).sort()).to.deep.equal([200, 200, 503]);
    const refused = all.find((r) => r.status === 503)!;
    expect(refused.headers['retry-after']).to.equal('1');
    expect(refused.body.detail).to.match(/Ledger is full \(2 nodes\)/);
    const ready = await app().http.get('/api/svc/v1/ledger/readiness');
    expect(ready.status).to.equal(503);
    expect(ready.body.ready).to.equal(false);
    expect(ready.body.reason).to.match(/^LEDGER_FULL/);
    expect((await app().http.get('/api/svc/v1/receipt/export?index=0')).body.export_state).to.equal('SIGNED_VERIFIED');
  });

  it('at the cap /health warns on the node count (nothing is wrong with the chain)', async () => {
    await new Promise((r) => setTimeout(r, HEALTH_MAX_AGE_MS + 10));
    const health = (await app().http.get('/api/svc/v1/health')).body;
    expect(health.checks['ledger:nodes']).to.include({ observedValue: 2, status: 'warn', output: 'cap 2' });
    expect(health.checks['ledger:integrity'].status).to.equal('pass');
    expect(health.status).to.not.equal('pass');
  });
});
