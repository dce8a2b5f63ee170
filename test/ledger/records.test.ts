// Where the ledger reads whole receipts by index: the packed table in memory, and the lines of a
// records file found through a column of line ends, with the recent nodes kept parsed.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerNode } from '../../src/ledger/ledger.js';
import { FileRecords, MemoryRecords } from '../../src/ledger/records.js';
import { MemoryColumn } from '../../src/ledger/tlog/column.js';

const node = (index: number): LedgerNode => ({
  index,
  kind: 'k',
  tsUtc: `2025-01-01T00:00:${String(index % 60).padStart(2, '0')}.000Z`,
  payload: Buffer.from(`payload ${index}`),
  paeSha256: Buffer.alloc(32, index),
  sig: Buffer.from([index & 0xff]),
  keyid: 'key',
  prev: Buffer.alloc(32, index + 1),
  nodeDigest: Buffer.alloc(32, index + 2),
  simulated: index % 2 === 1,
  detail: null,
});

const HEADER = '{"schema":"test"}\n';
/** Line i holds `rec <i> <payload>` and a newline; the column holds where each line ends. */
function recordsFile(dir: string, n: number, payload = (i: number) => 'x'.repeat(i % 7)): { path: string; ends: MemoryColumn; lines: string[] } {
  const lines = Array.from({ length: n }, (_, i) => `rec ${i} ${payload(i)}\n`);
  const path = join(dir, 'records');
  writeFileSync(path, HEADER + lines.join(''));
  const ends = new MemoryColumn(8);
  let at = Buffer.byteLength(HEADER);
  for (const l of lines) {
    at += Buffer.byteLength(l);
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(at));
    ends.append(b);
  }
  return { path, ends, lines };
}

describe('ledger records (MemoryRecords, FileRecords)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-records-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('MemoryRecords: every remembered node reads back field for field; nothing outside', () => {
    const r = new MemoryRecords();
    for (let i = 0; i < 5; i++) r.remember(node(i));
    const n3 = r.get(3)!;
    expect([n3.index, n3.payload.toString(), n3.simulated, n3.paeSha256.equals(Buffer.alloc(32, 3)), n3.nodeDigest.equals(Buffer.alloc(32, 5))]).to.deep.equal([3, 'payload 3', true, true, true]);
    expect([r.get(5), r.get(-1)]).to.deep.equal([undefined, undefined]);
    r.close();
  });

  it('FileRecords: reads exactly the line of each index (the first after the header), as the parser is handed it', () => {
    const { path, ends, lines } = recordsFile(dir, 40, (i) => 'é'.repeat(i % 5));
    const seen: [string, number][] = [];
    const r = new FileRecords(path, ends, () => Buffer.byteLength(HEADER), (text, index) => {
      seen.push([text, index]);
      return node(index);
    });
    for (const i of [0, 1, 2, 17, 39]) {
      expect(r.get(i)!.index).to.equal(i);
      expect(seen.at(-1)).to.deep.equal([lines[i], i]);
    }
    for (const bad of [40, -1, 1.5, Number.NaN]) expect(r.get(bad), String(bad)).to.equal(undefined);
    expect(seen).to.have.length(5);
    r.close();
    // reopened on the next read
    expect(r.get(3)!.index).to.equal(3);
    expect(seen.at(-1)).to.deep.equal([lines[3], 3]);
    r.close();
    r.close();
  });

  it('a file of one record reads it (only the first line end exists); close() releases the descriptor', () => {
    const { path, ends, lines } = recordsFile(dir, 1);
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    const seen: string[] = [];
    const r = new FileRecords(path, ends, () => Buffer.byteLength(HEADER), (text, index) => (seen.push(text), node(index)));
    expect(r.get(0)!.index).to.equal(0);
    expect([seen, open()]).to.deep.equal([[lines[0]], before + 1]);
    r.close();
    expect(open()).to.equal(before);
  });

  it('a line the parser refuses is damage, named with its index', () => {
    const { path, ends } = recordsFile(dir, 3);
    const r = new FileRecords(path, ends, () => Buffer.byteLength(HEADER), (text, index) => (index === 1 ? 'digest does not recompute' : node(index)));
    expect(r.get(0)!.index).to.equal(0);
    expect(() => r.get(1)).to.throw('ledger record 1 is damaged: digest does not recompute');
    r.close();
  });

  it('a file shorter than the column says: the parser gets what is there', () => {
    const { path, ends, lines } = recordsFile(dir, 3);
    writeFileSync(path, HEADER + lines[0] + lines[1] + lines[2]!.slice(0, 4));
    const seen: string[] = [];
    const r = new FileRecords(path, ends, () => Buffer.byteLength(HEADER), (text) => (seen.push(text), 'torn'));
    expect(() => r.get(2)).to.throw('ledger record 2 is damaged: torn');
    expect(seen).to.deep.equal([lines[2]!.slice(0, 4)]);
    r.close();
  });

  it('the 4,096 nodes remembered last are served parsed, without a read; older ones are read from the file', () => {
    const N = 4097;
    const { path, ends } = recordsFile(dir, N);
    let parsed = 0;
    const r = new FileRecords(path, ends, () => Buffer.byteLength(HEADER), (_text, index) => (parsed++, { ...node(index), kind: 'from file' }));
    for (let i = 0; i < N - 1; i++) r.remember({ ...node(i), kind: 'remembered' });
    // exactly 4,096 remembered: all still held
    expect([r.get(0)!.kind, r.get(4095)!.kind, parsed]).to.deep.equal(['remembered', 'remembered', 0]);
    r.remember({ ...node(N - 1), kind: 'remembered' });
    // one more: the oldest is dropped, the rest stay
    expect([r.get(0)!.kind, r.get(1)!.kind, r.get(N - 1)!.kind, parsed]).to.deep.equal(['from file', 'remembered', 'remembered', 1]);
    r.close();
  });
});
