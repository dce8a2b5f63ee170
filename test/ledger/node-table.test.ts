// NodeTable (src/ledger/node-table.ts): nodes packed into columns and rebuilt by get, field for
// field (prev is the zero digest at 0 and the previous node's digest after); the index guard;
// tsUtc kept as text exactly when it does not round-trip through Date; the kind/keyid/simulated
// bit packing with many distinct strings.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { NodeTable } from '../../src/ledger/node-table.js';
import type { LedgerNode } from '../../src/ledger/ledger.js';

const sha = (s: string): Buffer => createHash('sha256').update(s).digest();

/** A node as the ledger would hand it over; `prev` is whatever the caller says (the table derives its own). */
function node(i: number, extra: Partial<LedgerNode> = {}): LedgerNode {
  return {
    index: i,
    kind: 'decision',
    tsUtc: new Date(Date.UTC(2026, 0, 1, 0, 0, i, i * 7)).toISOString(),
    payload: Buffer.from(`{"n":${i},"pad":"${'p'.repeat(i)}"}`),
    paeSha256: sha(`pae ${i}`),
    sig: Buffer.from([0x30, i, 0xff - i, i * 3]),
    keyid: 'key-0',
    prev: Buffer.alloc(32, 0x99),
    nodeDigest: sha(`digest ${i}`),
    simulated: false,
    ...extra,
  };
}

/** Buffers as hex, so deep.equal compares contents. */
function plain(n: LedgerNode | undefined): Record<string, unknown> | undefined {
  if (!n) return n;
  return Object.fromEntries(Object.entries(n).map(([k, v]) => [k, Buffer.isBuffer(v) ? `${v.length}:${v.toString('hex')}` : v]));
}

/** What get(i) must return for a pushed node: the table's own index and chained prev. */
function expected(nodes: LedgerNode[], i: number): Record<string, unknown> | undefined {
  return plain({ ...nodes[i]!, index: i, prev: i === 0 ? Buffer.alloc(32) : nodes[i - 1]!.nodeDigest });
}

/** A white-box view of the text path (not otherwise observable). */
const internals = (t: NodeTable): { tsText: Map<number, string> } => t as unknown as { tsText: Map<number, string> };

describe('ledger node table (NodeTable)', () => {
  it('get rebuilds every field of every node; prev is zero at 0 and the previous digest after', () => {
    const kinds = ['decision', 'heartbeat', 'rotation'];
    const table = new NodeTable();
    expect(table.length).to.equal(0);
    expect(table.get(0)).to.equal(undefined);
    // every other node carries an evaluation detail (one of them empty of bytes but for braces)
    const nodes = Array.from({ length: 9 }, (_, i) =>
      node(i, { kind: kinds[(i * 2) % 3]!, keyid: `key-${(i * 3) % 5}`, simulated: i % 3 === 1, sig: i === 4 ? Buffer.alloc(0) : node(i).sig, ...(i % 2 ? { detail: Buffer.from(i === 3 ? '{}' : `{"axes":[${i}]}`) } : {}) }),
    );
    nodes.forEach((n, i) => {
      table.push(n);
      expect(table.length).to.equal(i + 1);
      expect(plain(table.get(i)), `node ${i} right after its push`).to.deep.equal(expected(nodes, i));
    });
    for (let i = 0; i < nodes.length; i++) expect(plain(table.get(i)), `node ${i}`).to.deep.equal(expected(nodes, i));
    const first = table.get(0)!;
    expect(first.prev.length).to.equal(32);
    expect(first.prev.equals(Buffer.alloc(32))).to.equal(true);
    expect(table.get(1)!.prev.equals(nodes[0]!.nodeDigest)).to.equal(true);
    expect(table.get(8)!.prev.equals(nodes[7]!.nodeDigest)).to.equal(true);
    // the empty signature comes back empty, and the next node's payload is not shifted by it
    expect(table.get(4)!.sig.length).to.equal(0);
    expect(table.get(5)!.payload.toString()).to.equal(nodes[5]!.payload.toString());
    // both flag values appear, with kinds and keyids in several combinations
    expect(new Set(nodes.map((n) => n.simulated))).to.deep.equal(new Set([true, false]));
    expect(new Set(nodes.map((n) => `${n.kind}/${n.keyid}`)).size).to.equal(9);
    // digest(i) is node i's own digest, as a view shared with get
    for (let i = 0; i < nodes.length; i++) expect(table.digest(i).toString('hex')).to.equal(nodes[i]!.nodeDigest.toString('hex'));
    expect(table.digest(3).buffer).to.equal(table.get(3)!.nodeDigest.buffer);
    expect(table.digest(3).byteOffset).to.equal(table.get(3)!.nodeDigest.byteOffset);
    // the node's buffers were copied in: changing the caller's buffers changes nothing stored
    nodes[2]!.payload.fill(0);
    nodes[2]!.nodeDigest.fill(0);
    expect(table.get(2)!.payload.toString()).to.equal(node(2).payload.toString());
    expect(table.get(2)!.nodeDigest.equals(sha('digest 2'))).to.equal(true);
  });

  it('payloads and signatures spread over several 1 MiB arena slabs come back byte for byte', () => {
    const table = new NodeTable();
    // 400 KB payloads: the third node no longer fits the first slab, the sixth not the second
    const nodes = Array.from({ length: 7 }, (_, i) => node(i, { payload: Buffer.alloc(400_000, 0x41 + i), sig: Buffer.from([0x30, 0x44, i]) }));
    for (const n of nodes) table.push(n);
    for (let i = 0; i < nodes.length; i++) expect(plain(table.get(i))).to.deep.equal(expected(nodes, i));
  });

  it('get outside the table, or at a non-integer index, is undefined', () => {
    const table = new NodeTable();
    for (let i = 0; i < 3; i++) table.push(node(i));
    for (const i of [-1, -0.5, 3, 4, 1.5, 0.1, 2.999, NaN, Infinity, -Infinity]) expect(table.get(i), `get(${i})`).to.equal(undefined);
    expect(table.get(0)!.index).to.equal(0);
    expect(table.get(2)!.index).to.equal(2);
  });

  it('tsUtc that does not round-trip through Date comes back exactly as given; canonical ISO goes the number path', () => {
    const stamps = [
      '2026-01-01T00:00:00.000Z', // canonical
      '2026-01-01T00:00:00Z', // no millis
      '2026-01-01T00:00:00.000+00:00', // offset instead of Z
      'not a date',
      '2025-06-30T12:34:56.789Z', // canonical
      '',
      '2026-01-01', // date only: parses, but prints back with a time
      '1970-01-01T00:00:00.000Z', // canonical, epoch 0
      '2026-01-01T01:00:00.000+01:00',
    ];
    const table = new NodeTable();
    stamps.forEach((ts, i) => table.push(node(i, { tsUtc: ts })));
    stamps.forEach((ts, i) => expect(table.get(i)!.tsUtc, `stamp ${i}`).to.equal(ts));
    // text is kept only for those that do not round-trip
    expect([...internals(table).tsText.keys()].sort((a, b) => a - b)).to.deep.equal([1, 2, 3, 5, 6, 8]);
    expect(internals(table).tsText.get(3)).to.equal('not a date');
  });

  it('packs many distinct kinds and keyids (ids past 255) with the simulated bit', () => {
    const table = new NodeTable();
    const kinds = ['decision', 'heartbeat', 'rotation'];
    const nodes: LedgerNode[] = [];
    for (let i = 0; i < 300; i++) nodes.push(node(i % 20, { kind: kinds[i % 3]!, keyid: `key-${i}`, simulated: i % 2 === 0 }));
    // a kind first seen after 300 keyids: its interned id is past 300 too
    nodes.push(node(3, { kind: 'late-kind', keyid: 'key-5', simulated: true }));
    nodes.push(node(4, { kind: 'decision', keyid: 'late-key', simulated: false }));
    nodes.forEach((n) => table.push(n));
    const got = nodes.map((_, i) => table.get(i)!);
    const wrong = got.flatMap((g, i) => (g.kind !== nodes[i]!.kind || g.keyid !== nodes[i]!.keyid || g.simulated !== nodes[i]!.simulated ? [i] : []));
    expect(wrong).to.deep.equal([]);
    expect([got[300]!.kind, got[300]!.keyid, got[300]!.simulated]).to.deep.equal(['late-kind', 'key-5', true]);
    expect([got[301]!.kind, got[301]!.keyid, got[301]!.simulated]).to.deep.equal(['decision', 'late-key', false]);
  });
});
