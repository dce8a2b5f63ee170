// Receipts (src/ledger/receipt.ts): receiptPayload's canonical bytes against a string written by
// hand (sorted keys, no whitespace), its default and custom kind, its refusal of non-finite numbers
// at any depth; and dsseDocument's fields, exactly.
import { expect } from 'chai';
import { RECEIPT_KIND, RECEIPT_SCHEMA, dsseDocument, receiptPayload, type ReceiptBody } from '../../src/ledger/receipt.js';
import { DSSE_HONESTY, PAYLOAD_TYPE } from '../../src/ledger/dsse.js';
import { NodeTable } from '../../src/ledger/node-table.js';
import type { LedgerNode } from '../../src/ledger/ledger.js';

const TS = '2026-01-01T00:00:00.000Z';

const body = (extra: Partial<ReceiptBody> = {}): ReceiptBody => ({
  lambda: 0.5,
  decision: 'engage',
  breaches: [{ zone: 'z1', depth_m: -3 }],
  geofence_inside: null,
  lambda_floor: 0,
  ...extra,
});

const EXPECTED =
  '{"doctrine":"v11","kind":"counter_uas_decision","payload":{"breaches":[{"depth_m":-3,"zone":"z1"}],"decision":"engage","geofence_inside":null,"lambda":0.5,"lambda_floor":0},"schema":"svc.receipt/v1","ts_utc":"2026-01-01T00:00:00.000Z"}';

describe('ledger receipts', () => {
  it('receiptPayload is the canonical JSON (sorted keys, no whitespace) written out by hand', () => {
    expect([RECEIPT_KIND, RECEIPT_SCHEMA]).to.deep.equal(['counter_uas_decision', 'svc.receipt/v1']);
    const bytes = receiptPayload(body(), TS);
    expect(Buffer.isBuffer(bytes)).to.equal(true);
    expect(bytes.toString('utf8')).to.equal(EXPECTED);
    expect(bytes.length).to.equal(EXPECTED.length);
    // an explicit undefined kind takes the default too
    expect(receiptPayload(body(), TS, undefined).toString()).to.equal(EXPECTED);
  });

  it('a custom kind replaces the default; everything else is unchanged', () => {
    const text = receiptPayload(body({ geofence_inside: true, breaches: [] }), '2026-02-03T04:05:06.789Z', 'mesh_relay').toString();
    expect(text).to.equal(
      '{"doctrine":"v11","kind":"mesh_relay","payload":{"breaches":[],"decision":"engage","geofence_inside":true,"lambda":0.5,"lambda_floor":0},"schema":"svc.receipt/v1","ts_utc":"2026-02-03T04:05:06.789Z"}',
    );
  });

  it('non-ASCII text: the buffer holds every UTF-8 byte (byte length, not character count)', () => {
    const bytes = receiptPayload(body({ decision: 'tir — arrêt', breaches: [] }), TS);
    const want =
      '{"doctrine":"v11","kind":"counter_uas_decision","payload":{"breaches":[],"decision":"tir — arrêt","geofence_inside":null,"lambda":0.5,"lambda_floor":0},"schema":"svc.receipt/v1","ts_utc":"2026-01-01T00:00:00.000Z"}';
    expect(bytes.length).to.equal(want.length + 3); // '—' is 3 bytes (2 extra), 'ê' 2 (1 extra)
    expect(bytes.equals(Buffer.from(want, 'utf8'))).to.equal(true);
  });

  it('refuses a non-finite number anywhere in the body: top level, in breaches arrays and objects', () => {
    const refused: [string, ReceiptBody][] = [
      ['lambda NaN', body({ lambda: NaN })],
      ['lambda Infinity', body({ lambda: Infinity })],
      ['lambda_floor -Infinity', body({ lambda_floor: -Infinity })],
      ['breaches [NaN]', body({ breaches: [NaN] })],
      ['breaches [1, Infinity]', body({ breaches: [1, Infinity] })],
      ['breaches [{depth_m: -Infinity}]', body({ breaches: [{ zone: 'z', depth_m: -Infinity }] })],
      ['breaches [{at: {alt: NaN}}]', body({ breaches: [{ at: { lat: 1, alt: NaN } }] })],
      ['breaches [[0, [Infinity]]]', body({ breaches: [[0, [Infinity]]] })],
    ];
    for (const [what, b] of refused) expect(() => receiptPayload(b, TS), what).to.throw(Error, /^receipt holds a non-finite number$/);
  });

  it('accepts finite values: 0, −0, negatives, extremes, nested, with nulls, booleans and strings around', () => {
    const ok = body({
      lambda: -1.25,
      lambda_floor: -0,
      breaches: [0, -7, Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_SAFE_INTEGER, { a: [0, { b: -0.5 }], s: 'NaN', n: null, t: false }, [], {}, ''],
    });
    const text = receiptPayload(ok, TS).toString();
    expect(text).to.equal(
      `{"doctrine":"v11","kind":"counter_uas_decision","payload":{"breaches":[0,-7,1.7976931348623157e+308,5e-324,-9007199254740991,{"a":[0,{"b":-0.5}],"n":null,"s":"NaN","t":false},[],{},""],"decision":"engage","geofence_inside":null,"lambda":-1.25,"lambda_floor":0},"schema":"svc.receipt/v1","ts_utc":"${TS}"}`,
    );
    expect(receiptPayload(body({ geofence_inside: false, lambda: 0 }), TS).toString()).to.contain('"geofence_inside":false,"lambda":0,');
  });

  it('dsseDocument: every field, exactly', () => {
    const payload = receiptPayload(body(), TS);
    const node: LedgerNode = {
      index: 3,
      kind: RECEIPT_KIND,
      tsUtc: TS,
      payload,
      paeSha256: Buffer.alloc(32, 0xab),
      sig: Buffer.from([0xfb, 0xff, 0x00]),
      keyid: 'edge-key-1',
      prev: Buffer.alloc(32),
      nodeDigest: Buffer.alloc(32, 1),
      simulated: false,
    };
    const want = {
      payloadType: 'application/vnd.svc.receipt+json',
      payload: Buffer.from(EXPECTED, 'utf8').toString('base64'),
      signatures: [{ sig: '+/8A', keyid: 'edge-key-1' }],
      signed: true,
      keyid: 'edge-key-1',
      honesty: DSSE_HONESTY,
      _dsse: 'DSSEv1',
      _pae_sha256: 'ab'.repeat(32),
    };
    expect(PAYLOAD_TYPE).to.equal('application/vnd.svc.receipt+json');
    expect(DSSE_HONESTY).to.match(/^ECDSA-P256-SHA256 DSSE v1 envelope/);
    expect(dsseDocument(node)).to.deep.equal(want);
    // from a node read back out of the packed table (views at non-zero offsets): the same document
    const table = new NodeTable();
    table.push({ ...node, payload: Buffer.from('first'), sig: Buffer.from('s'), keyid: 'other', paeSha256: Buffer.alloc(32, 0xcd) });
    table.push(node);
    expect(dsseDocument(table.get(1)!)).to.deep.equal(want);
    expect(dsseDocument(table.get(0)!)).to.deep.equal({
      ...want,
      payload: 'Zmlyc3Q=',
      signatures: [{ sig: 'cw==', keyid: 'other' }],
      keyid: 'other',
      _pae_sha256: 'cd'.repeat(32),
    });
  });
});
