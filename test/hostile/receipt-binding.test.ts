/**
 * Receipts bind their subject. Before, a receipt signed only the decision (breaches, decision,
 * geofence flag, λ, floor) and the time: two verdicts on different frames with the same outcome in
 * the same millisecond (an edge batch is one millisecond) had byte-identical payloads, so either
 * one's signature verified over the other's. The payload now carries `subject: {frame_sha256,
 * track_id}`, the frame's SHA-256 in RFC 8785 canonical JSON: the digest is recomputed here from
 * the posted frame by code of the test's own and by the shell recipe the README gives, and a
 * reader that knows only the old members reads exactly what it read before.
 */
import { expect } from 'chai';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { receiptPayload, type ReceiptBody } from '../../src/ledger/receipt.js';
import { withTestApp } from '../helpers/app.js';
import { sh, withTempDir, write } from '../helpers/shell.js';

const PAYLOAD_TYPE = 'application/vnd.svc.receipt+json';
const pae = (body: Buffer) => Buffer.concat([Buffer.from(`DSSEv1 ${PAYLOAD_TYPE.length} ${PAYLOAD_TYPE} ${body.length} `), body]);

/** RFC 8785 for JSON without arrays of note here: sorted keys (UTF-16 order), no whitespace, ECMAScript numbers. */
function jcs(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${jcs((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : String(v);
  return JSON.stringify(v);
}

/** The README's recipe for the frame digest (bash + node, no service code). */
const RECIPE = `node -e 'const c=(v)=>v===null||typeof v!=="object"?JSON.stringify(v):"{"+Object.keys(v).sort().map((k)=>JSON.stringify(k)+":"+c(v[k])).join(",")+"}";process.stdout.write(c(JSON.parse(require("fs").readFileSync(0,"utf8"))))' < frame.json | sha256sum`;

const frameA = { track_id: 'AB12CD', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };
// another aircraft, every reading the same: the same decision, λ and breaches
const frameB = { ...frameA, track_id: 'EF34AB' };

interface Receipt {
  doctrine: string;
  kind: string;
  payload: ReceiptBody;
  schema: string;
  subject: { frame_sha256: string; track_id: string };
  ts_utc: string;
}

describe('receipts bind their subject (frame digest and track)', () => {
  const app = withTestApp();
  const decode = (b64: string) => Buffer.from(b64, 'base64');

  it('two verdicts of one batch on different frames with the same outcome: different payloads, and neither signature verifies the other', async () => {
    const res = await app().http.post('/api/svc/v1/edge/3d').send({ frames: [frameA, frameB] });
    expect(res.status).to.equal(200);
    const appended = res.body.appended as { track_id: string; ledger_index: number }[];
    expect(appended.map((v) => v.track_id)).to.deep.equal(['AB12CD', 'EF34AB']);
    const exported = await Promise.all(appended.map((v) => app().http.get(`/api/svc/v1/receipt/export?index=${v.ledger_index}`)));
    const [a, b] = exported.map(({ body }) => ({ payload: decode(body.payload_b64 as string), sig: decode(body.dsse.signatures[0].sig as string) }));
    const [ra, rb] = [a!, b!].map((x) => JSON.parse(x.payload.toString('utf8')) as Receipt);
    // the same decision at the same instant: before, these payloads were byte-identical
    expect(ra!.payload).to.deep.equal(rb!.payload);
    expect(ra!.ts_utc).to.equal(rb!.ts_utc);
    expect(a!.payload.equals(b!.payload)).to.equal(false);
    expect(ra!.subject.track_id).to.equal('AB12CD');
    expect(rb!.subject.track_id).to.equal('EF34AB');
    const pub = createPublicKey((await app().http.get('/api/svc/v1/edge/pubkey.pem')).text);
    expect(verify('sha256', pae(a!.payload), pub, a!.sig)).to.equal(true);
    expect(verify('sha256', pae(b!.payload), pub, b!.sig)).to.equal(true);
    expect(verify('sha256', pae(b!.payload), pub, a!.sig)).to.equal(false);
    expect(verify('sha256', pae(a!.payload), pub, b!.sig)).to.equal(false);
  });

  it('frames differing in one reading get different digests; the digest recomputes from the posted frame, in the test and by the README recipe', async () => {
    const posted = JSON.stringify({ ...frameA, rssi_dbm: -45.25, lat: 36.123456789, ts_utc: new Date().toISOString() });
    const res = await app().http.post('/api/svc/v1/verdict').set('content-type', 'application/json').send(posted);
    expect(res.status).to.equal(200);
    const receipt = JSON.parse(decode(res.body.receipt.payload_b64).toString('utf8')) as Receipt;
    const expected = createHash('sha256').update(jcs(JSON.parse(posted)), 'utf8').digest('hex');
    expect(receipt.subject).to.deep.equal({ frame_sha256: expected, track_id: 'AB12CD' });
    await withTempDir(async (dir) => {
      await write(dir, 'frame.json', posted);
      const out = await sh(dir, RECIPE);
      expect(out.status).to.equal(0);
      expect(out.out.split(' ')[0]).to.equal(expected);
    });
    // one reading changed: another digest, another payload
    const other = await app().http.post('/api/svc/v1/verdict').send({ ...JSON.parse(posted), rssi_dbm: -45.5 });
    const r2 = JSON.parse(decode(other.body.receipt.payload_b64).toString('utf8')) as Receipt;
    expect(r2.subject.frame_sha256).to.not.equal(receipt.subject.frame_sha256);
    expect(r2.subject.frame_sha256).to.equal(createHash('sha256').update(jcs({ ...JSON.parse(posted), rssi_dbm: -45.5 })).digest('hex'));
  });

  it('an svc.receipt/v1 reader of the old members reads them unchanged; /khipu/verify and the export still verify', async () => {
    const res = await app().http.post('/api/svc/v1/verdict').send(frameA);
    const bytes = decode(res.body.receipt.payload_b64);
    const receipt = JSON.parse(bytes.toString('utf8')) as Receipt;
    expect(Object.keys(receipt)).to.deep.equal(['doctrine', 'kind', 'payload', 'schema', 'subject', 'ts_utc']);
    expect(Object.keys(receipt.payload)).to.deep.equal(['breaches', 'decision', 'geofence_inside', 'lambda', 'lambda_floor']);
    expect(receipt).to.include({ doctrine: 'v11', kind: 'counter_uas_decision', schema: 'svc.receipt/v1', ts_utc: res.body.ts_utc });
    expect(receipt.payload).to.include({ decision: res.body.decision, lambda: res.body.lambda, lambda_floor: res.body.lambda_floor, geofence_inside: res.body.geofence.inside });
    // without the added member, exactly the bytes an unbound receipt had
    const { subject: _subject, ...old } = receipt;
    expect(jcs(old)).to.equal(receiptPayload(receipt.payload, receipt.ts_utc).toString('utf8'));
    expect(bytes.toString('utf8')).to.equal(jcs(receipt));
    const verified = await app().http.post('/khipu/verify').send(res.body.receipt.dsse);
    expect(verified.body).to.include({ verified: true, state: 'VERIFIED' });
    expect(verified.body.payload.subject).to.deep.equal(receipt.subject);
    const exported = await app().http.get(`/api/svc/v1/receipt/export?index=${res.body.ledger.index}`);
    expect(exported.body).to.include({ export_state: 'SIGNED_VERIFIED', payload_b64: res.body.receipt.payload_b64 });
    await withTempDir(async (dir) => {
      await write(dir, 'receipt.json', exported.text);
      const out = await sh(dir, (exported.body.verify_offline as string[]).join('\n'));
      expect(out.out).to.include('Verified OK');
    });
  });
});
