// Append-only columns against a plain Buffer holding the same items: chunk and flush boundaries,
// truncation on either side of what is on disk, a torn last item, and a disk that fills up mid-write.
import { expect } from 'chai';
import fs, { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileColumn, MemoryColumn, type Column } from '../../../src/ledger/tlog/column.js';

/** Item i of width w: bytes (i·w + b) mod 251, so any misplaced byte shows. */
function items(from: number, n: number, w: number): Buffer {
  const b = Buffer.allocUnsafe(n * w);
  for (let k = 0, v = (from * w) % 251; k < b.length; k++, v = v === 250 ? 0 : v + 1) b[k] = v;
  return b;
}

/** Appends `n` items in uneven batches, then checks reads of many ranges against the reference. */
function fillAndCheck(col: Column, n: number, w: number): void {
  for (let i = 0, b = 1; i < n; b = (b * 37) % 9973) {
    const take = Math.min(n - i, b);
    col.append(items(i, take, w));
    i += take;
  }
  expect(col.length).to.equal(n);
  for (const [from, len] of [
    [0, n],
    [0, 1],
    [n - 1, 1],
    [1, n - 2],
    [n, 0],
    [Math.floor(n / 3), Math.floor(n / 2)],
  ] as const) {
    expect(col.read(from, len).equals(items(from, len, w)), `[${from}, +${len})`).to.equal(true);
  }
}

/** fs.writeSync replaced while `fn` runs: the first `bytes` bytes are written, then the disk is full. */
async function withFullDisk<T>(bytes: number, fn: () => T | Promise<T>): Promise<T> {
  const real = fs.writeSync;
  let left = bytes;
  fs.writeSync = ((fd: number, buf: Uint8Array, off: number, len: number, pos: number) => {
    if (left <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const n = real(fd, buf, off, Math.min(len, left), pos);
    left -= n;
    return n;
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    fs.writeSync = real;
    syncBuiltinESMExports();
  }
}

describe('ledger columns (MemoryColumn, FileColumn)', function () {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'svc-column-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  describe('MemoryColumn', () => {
    it('items of a width that does not divide the 1 MiB chunk read back across chunk boundaries', () => {
      // 43,690 items of 24 bytes per chunk: 100,000 items span three chunks
      const col = new MemoryColumn(24);
      fillAndCheck(col, 100_000, 24);
      expect(col.read(43_689, 2).equals(items(43_689, 2, 24))).to.equal(true);
      expect(col.read(43_690 * 2 - 1, 3).equals(items(43_690 * 2 - 1, 3, 24))).to.equal(true);
    });

    it('refuses ranges outside it', () => {
      const col = new MemoryColumn(8);
      col.append(items(0, 5, 8));
      for (const [from, n] of [
        [-1, 1],
        [0, -1],
        [4, 2],
        [6, 0],
      ] as const) {
        expect(() => col.read(from, n), `${from}, ${n}`).to.throw(RangeError, `items ${from}..${from + n} outside a column of 5`);
      }
      expect(col.read(5, 0).length).to.equal(0);
    });

    it('truncate keeps the first n (never more than exist), and appends continue from there, also across a chunk', () => {
      const col = new MemoryColumn(32);
      col.append(items(0, 40_000, 32));
      col.truncate(50_000);
      expect(col.length).to.equal(40_000);
      col.truncate(32_768);
      expect(col.length).to.equal(32_768);
      col.append(Buffer.alloc(32, 0xee));
      expect([col.length, col.read(32_768, 1).equals(Buffer.alloc(32, 0xee)), col.read(32_767, 1).equals(items(32_767, 1, 32))]).to.deep.equal([32_769, true, true]);
      col.truncate(10);
      col.append(items(10, 40_000, 32));
      expect(col.read(0, 40_010).equals(items(0, 40_010, 32))).to.equal(true);
      col.truncate(0);
      expect(col.length).to.equal(0);
      col.append(items(0, 3, 32));
      expect(col.read(0, 3).equals(items(0, 3, 32))).to.equal(true);
      return col.sync();
    });
  });

  describe('FileColumn', () => {
    it('no file until the first write; small appends wait for sync(), large ones are written at 256 KiB', async () => {
      const path = join(dir, 'sub', 'col');
      const col = new FileColumn(path, 16);
      await col.sync();
      expect(existsSync(path)).to.equal(false);
      col.append(items(0, 100, 16));
      expect([existsSync(path), col.length]).to.deep.equal([false, 100]);
      expect(col.read(90, 10).equals(items(90, 10, 16))).to.equal(true);
      await col.sync();
      expect(statSync(path).size).to.equal(1600);
      // 16,383 items of 16 bytes stay pending; the 16,384th makes 256 KiB, written without a sync
      col.append(items(100, 16_383, 16));
      expect(statSync(path).size).to.equal(1600);
      col.append(items(16_483, 1, 16));
      expect(statSync(path).size).to.equal(16_484 * 16);
      col.append(items(16_484, 5, 16));
      expect(statSync(path).size).to.equal(16_484 * 16);
      // a read across what is in the file and what is pending
      expect(col.read(16_480, 9).equals(items(16_480, 9, 16))).to.equal(true);
      col.close();
      expect(readFileSync(path).equals(items(0, 16_489, 16))).to.equal(true);
      // closed twice, synced after close: nothing more happens
      col.close();
      await col.sync();
    });

    it('pending appends larger than the buffer keep what was pending before them', async () => {
      const col = new FileColumn(join(dir, 'col'), 1000);
      col.append(items(0, 10, 1000));
      // 600 items of 1,000 bytes: past the 512 KiB buffer, and past 256 KiB, so written at once
      col.append(items(10, 600, 1000));
      col.append(items(610, 3, 1000));
      expect(col.read(0, 613).equals(items(0, 613, 1000))).to.equal(true);
      await col.sync();
      expect(readFileSync(join(dir, 'col')).equals(items(0, 613, 1000))).to.equal(true);
      col.close();
    });

    it('reopens at the items in the file, cutting a torn last item', () => {
      const path = join(dir, 'col');
      writeFileSync(path, Buffer.concat([items(0, 3, 10), Buffer.from([1, 2, 3, 4])]));
      const col = new FileColumn(path, 10);
      expect([col.length, statSync(path).size]).to.deep.equal([3, 30]);
      expect(col.read(0, 3).equals(items(0, 3, 10))).to.equal(true);
      col.append(items(3, 1, 10));
      col.close();
      expect(readFileSync(path).equals(items(0, 4, 10))).to.equal(true);
      // a whole file is kept whole
      const again = new FileColumn(path, 10);
      expect([again.length, statSync(path).size]).to.deep.equal([4, 40]);
      again.close();
    });

    it('refuses ranges outside it, and a path that is no file', () => {
      const col = new FileColumn(join(dir, 'col'), 4);
      col.append(items(0, 2, 4));
      expect(() => col.read(1, 2)).to.throw(RangeError, `items 1..3 outside ${join(dir, 'col')} (2 items)`);
      expect(() => col.read(-1, 1)).to.throw(RangeError, `items -1..0 outside ${join(dir, 'col')} (2 items)`);
      expect(() => col.read(0, -1)).to.throw(RangeError, `items 0..-1 outside ${join(dir, 'col')} (2 items)`);
      expect([col.read(2, 0).length, col.read(0, 0).length]).to.deep.equal([0, 0]);
      col.close();
      mkdirSync(join(dir, 'adir'));
      expect(() => new FileColumn(join(dir, 'adir'), 4)).to.throw(/EISDIR/);
    });

    it('truncate: past the end nothing; inside what is pending, the pending part; inside the file, the file', async () => {
      const path = join(dir, 'col');
      const col = new FileColumn(path, 8);
      col.append(items(0, 10, 8));
      await col.sync();
      col.append(items(10, 5, 8));
      col.truncate(20);
      expect(col.length).to.equal(15);
      col.truncate(12);
      expect([col.length, statSync(path).size]).to.deep.equal([12, 80]);
      col.append(Buffer.alloc(8, 0xaa));
      await col.sync();
      expect(readFileSync(path).equals(Buffer.concat([items(0, 12, 8), Buffer.alloc(8, 0xaa)]))).to.equal(true);
      col.append(items(13, 2, 8));
      col.truncate(4);
      expect([col.length, statSync(path).size]).to.deep.equal([4, 32]);
      col.append(items(4, 1, 8));
      expect(col.read(0, 5).equals(items(0, 5, 8))).to.equal(true);
      await col.sync();
      expect(readFileSync(path).equals(items(0, 5, 8))).to.equal(true);
      // truncate exactly at the file's end drops only what is pending
      col.append(items(5, 3, 8));
      col.truncate(5);
      await col.sync();
      expect([col.length, statSync(path).size]).to.deep.equal([5, 40]);
      col.close();
    });

    it('a file cut behind its back: a read of the missing items fails instead of returning garbage', async () => {
      const path = join(dir, 'col');
      const col = new FileColumn(path, 8);
      col.append(items(0, 4, 8));
      await col.sync();
      fs.truncateSync(path, 16);
      expect(() => col.read(1, 3)).to.throw(`${path}: short read at item 1`);
      col.close();
    });

    it('a full disk: whole items written stay, the part of an item is cut, the rest waits; a later sync writes it all', async () => {
      const path = join(dir, 'col');
      const col = new FileColumn(path, 10);
      col.append(items(0, 3, 10));
      await col.sync();
      col.append(items(3, 5, 10));
      // 25 bytes make it: 2 whole items and half of a third
      const err = await withFullDisk(25, async () => {
        try {
          await col.sync();
        } catch (e) {
          return e as NodeJS.ErrnoException;
        }
        return null;
      });
      expect(err?.code).to.equal('ENOSPC');
      expect([col.length, statSync(path).size]).to.deep.equal([8, 50]);
      expect(col.read(0, 8).equals(items(0, 8, 10))).to.equal(true);
      // appends past 256 KiB on a full disk are kept, not lost
      await withFullDisk(0, () => col.append(items(8, 30_000, 10)));
      expect([col.length, statSync(path).size]).to.deep.equal([30_008, 50]);
      await col.sync();
      expect(readFileSync(path).equals(items(0, 30_008, 10))).to.equal(true);
      // close on a full disk keeps what it could not write out of the file, without throwing
      col.append(items(30_008, 2, 10));
      await withFullDisk(0, () => col.close());
      expect(statSync(path).size).to.equal(300_080);
    });

    it('short writes are continued where they stopped, at the right offset, and nothing past the items is written', async () => {
      const path = join(dir, 'col');
      const col = new FileColumn(path, 10);
      col.append(items(0, 4, 10));
      await col.sync();
      col.append(items(4, 20, 10));
      const real = fs.writeSync;
      fs.writeSync = ((fd: number, buf: Uint8Array, off: number, len: number, pos: number) => real(fd, buf, off, Math.min(len, 7), pos)) as typeof fs.writeSync;
      syncBuiltinESMExports();
      try {
        await col.sync();
      } finally {
        fs.writeSync = real;
        syncBuiltinESMExports();
      }
      expect(readFileSync(path).equals(items(0, 24, 10))).to.equal(true);
      col.close();
    });

    it('one descriptor per column, opened at the first write and closed by close(); closing a column never written is fine', async () => {
      const open = () => fs.readdirSync('/proc/self/fd').length;
      const before = open();
      const col = new FileColumn(join(dir, 'col'), 8);
      for (let i = 0; i < 20; i++) {
        col.append(items(i, 1, 8));
        await col.sync();
      }
      expect(open()).to.equal(before + 1);
      col.close();
      expect(open()).to.equal(before);
      const unused = new FileColumn(join(dir, 'unused'), 8);
      unused.close();
      expect([open(), existsSync(join(dir, 'unused'))]).to.deep.equal([before, false]);
      // reopened over the file: one descriptor again, closed again
      const again = new FileColumn(join(dir, 'col'), 8);
      expect([again.length, open()]).to.deep.equal([20, before + 1]);
      again.close();
      expect(open()).to.equal(before);
    });

    it('truncating to nothing before the file exists; a directory that cannot be made is the write error itself', async () => {
      const col = new FileColumn(join(dir, 'col'), 8);
      col.append(items(0, 3, 8));
      col.truncate(0);
      expect(col.length).to.equal(0);
      await col.sync();
      expect(existsSync(join(dir, 'col'))).to.equal(false);
      col.close();
      const blocked = new FileColumn(join(dir, 'plain', 'sub', 'col'), 8);
      // the directory's place is taken by a file after the column was opened
      writeFileSync(join(dir, 'plain'), 'x');
      blocked.append(items(0, 1, 8));
      const err = await blocked.sync().then(
        () => null,
        (e: NodeJS.ErrnoException) => e,
      );
      expect(err?.code).to.equal('ENOTDIR');
      expect(blocked.length).to.equal(1);
      blocked.close();
    });

    it('a full disk at the very first write leaves an empty file and everything pending', async () => {
      const path = join(dir, 'col');
      const col = new FileColumn(path, 10);
      col.append(items(0, 2, 10));
      const failed = await withFullDisk(5, () => col.sync().then(() => false, () => true));
      expect([failed, col.length, statSync(path).size]).to.deep.equal([true, 2, 0]);
      await col.sync();
      expect(readFileSync(path).equals(items(0, 2, 10))).to.equal(true);
      col.close();
    });
  });
});
