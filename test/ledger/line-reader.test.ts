// LineReader against a plain split of the same bytes: lines across chunk edges (multi-byte UTF-8
// cut by a chunk too), a byte range that starts and ends inside lines, a caller that stops early,
// and a file shorter than the range.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LineReader } from '../../src/ledger/store/line-reader.js';

const LINES = Array.from({ length: 40 }, (_, i) => `${i}:${'é'.repeat(i % 5)}${'x'.repeat((i * 7) % 23)}`);
const TEXT = Buffer.from(`${LINES.join('\n')}\nunfinished é`, 'utf8');

/** What the reader must hand out for bytes [from, to): whole lines, their ends, and the rest. */
function reference(from: number, to: number): { lines: { text: string; end: number }[]; rest: Buffer } {
  const lines: { text: string; end: number }[] = [];
  let start = from;
  for (let nl = TEXT.indexOf(0x0a, start); nl >= 0 && nl < to; nl = TEXT.indexOf(0x0a, start)) {
    lines.push({ text: TEXT.toString('utf8', start, nl), end: nl + 1 });
    start = nl + 1;
  }
  return { lines, rest: TEXT.subarray(start, to) };
}

describe('LineReader', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-lines-'));
    file = join(dir, 'log');
    writeFileSync(file, TEXT);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function readAll(from: number, to: number, chunk: number, stopAfter = Infinity) {
    const fh = await open(file, 'r');
    try {
      const reader = new LineReader(fh, from, to, chunk);
      const got: { text: string; end: number }[] = [];
      for await (const l of reader.lines()) {
        got.push(l);
        if (got.length >= stopAfter) break;
      }
      return { got, rest: reader.rest, position: reader.position };
    } finally {
      await fh.close();
    }
  }

  it('every chunk size from 1 byte to more than the file gives the lines and the unfinished rest of a plain split', async () => {
    const want = reference(0, TEXT.length);
    for (const chunk of [1, 2, 3, 7, 16, 64, 1000, 1 << 16]) {
      const r = await readAll(0, TEXT.length, chunk);
      expect(r.got, `chunk ${chunk}`).to.deep.equal(want.lines);
      expect(r.rest.toString('utf8'), `chunk ${chunk}`).to.equal('unfinished é');
      expect(r.position, `chunk ${chunk}`).to.equal(TEXT.length);
    }
  });

  it('a range that starts after a line and ends inside another: ends are file offsets, the cut line is the rest', async () => {
    const from = Buffer.byteLength(LINES.slice(0, 3).join('\n')) + 1;
    const to = TEXT.indexOf(0x0a, 200) - 3;
    const want = reference(from, to);
    for (const chunk of [5, 13, 4096]) {
      const r = await readAll(from, to, chunk);
      expect(r.got, `chunk ${chunk}`).to.deep.equal(want.lines);
      expect(r.rest.equals(want.rest), `chunk ${chunk}`).to.equal(true);
      expect(r.position).to.equal(to);
    }
    expect(want.lines[0]!.text).to.equal(LINES[3]);
  });

  it('a caller that stops after a line leaves exactly the bytes read after it as the rest', async () => {
    for (const chunk of [4, 50, 4096]) {
      const r = await readAll(0, TEXT.length, chunk, 5);
      expect(r.got).to.deep.equal(reference(0, TEXT.length).lines.slice(0, 5));
      const end = r.got.at(-1)!.end;
      expect(r.rest.equals(TEXT.subarray(end, r.position)), `chunk ${chunk}`).to.equal(true);
    }
  });

  it('a file shorter than the range: reading stops at its end, with its unfinished line as the rest', async () => {
    const r = await readAll(0, TEXT.length + 500, 64);
    expect(r.got).to.deep.equal(reference(0, TEXT.length).lines);
    expect([r.rest.toString('utf8'), r.position]).to.deep.equal(['unfinished é', TEXT.length]);
    const empty = await readAll(10, 10, 64);
    expect([empty.got, empty.rest.length, empty.position]).to.deep.equal([[], 0, 10]);
  });
});
