// Lookups by PAE digest and by node-digest prefix across sorted runs and the open chunk, in memory
// and on disk, checked against a linear scan.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyIndex, OPEN_RUNS, RUN_SPAN } from '../../../src/ledger/tlog/key-index.js';

const N = RUN_SPAN * 2 + 1234;
// every 1,000th key repeats an earlier one: lookups must find the newest
const keyOf = (i: number): Buffer => createHash('sha256').update(`key ${i % 1000 === 999 ? i - 500 : i}`).digest();
const keys = Buffer.concat(Array.from({ length: N }, (_, i) => keyOf(i)));
const keyAt = (i: number): Buffer => keys.subarray(i * 32, i * 32 + 32);
const keysAt = (from: number, n: number): Buffer => keys.subarray(from * 32, (from + n) * 32);

function scanNewest(key: Buffer, size: number): number | undefined {
  for (let i = size - 1; i >= 0; i--) if (keyAt(i).equals(key)) return i;
  return undefined;
}
function scanPrefix(prefix: string, size: number, limit: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < size && out.length < limit; i++) if (keyAt(i).toString('hex').startsWith(prefix)) out.push(i);
  return out;
}

for (const where of ['memory', 'files'] as const) {
  describe(`KeyIndex (${where})`, function () {
    let dir: string | null = null;
    let index: KeyIndex;
    before(() => {
      dir = where === 'files' ? mkdtempSync(join(tmpdir(), 'svc-keyindex-')) : null;
      index = new KeyIndex('pae', dir, keyAt, keysAt);
      for (let i = 0; i < N; i++) index.add(keyAt(i), i);
    });
    after(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('finds the newest node of a key in either run and in the open chunk, and nothing for an absent key', () => {
      for (const i of [0, 1, 4242, RUN_SPAN - 1, RUN_SPAN, RUN_SPAN + 999, 2 * RUN_SPAN, N - 1, 1999, 2 * RUN_SPAN + 999]) {
        expect(index.newest(keyAt(i)), `key of ${i}`).to.equal(scanNewest(keyAt(i), N));
      }
      expect(index.newest(createHash('sha256').update('absent').digest())).to.equal(undefined);
    });

    it('lists nodes by hex prefix, oldest first, up to the limit, as a scan does', () => {
      for (const i of [3, RUN_SPAN + 7, N - 2]) {
        const h = keyAt(i).toString('hex');
        for (const len of [1, 3, 7, 12, 13, 64]) expect(index.withPrefix(h.slice(0, len), 5), `${len} digits of ${i}`).to.deep.equal(scanPrefix(h.slice(0, len), N, 5));
      }
      expect(index.withPrefix('', 3)).to.deep.equal([0, 1, 2]);
    });

    it('resumes at a smaller size from its runs and the key column', () => {
      const again = new KeyIndex('pae', dir, keyAt, keysAt);
      const size = RUN_SPAN + 10;
      again.resume(size);
      expect(again.length).to.equal(size);
      expect(again.newest(keyAt(RUN_SPAN + 5))).to.equal(RUN_SPAN + 5);
      expect(again.newest(keyAt(2 * RUN_SPAN))).to.equal(scanNewest(keyAt(2 * RUN_SPAN), size));
      if (dir) {
        // one sorted run of 8-byte items per full chunk; a run past the size goes (the log re-derives its nodes)
        const runs = readdirSync(dir).filter((f) => f.endsWith('.run'));
        expect(runs).to.deep.equal(['pae-000000.run']);
        expect(statSync(join(dir, runs[0]!)).size).to.equal(RUN_SPAN * 8);
      }
    });

    if (where === 'files') {
      it('opens run files on demand and keeps no more open than its bound, whatever the number of runs', () => {
        const runFds = () => readdirSync('/proc/self/fd').filter((fd) => {
          try {
            return readlinkSync(join('/proc/self/fd', fd)).startsWith(join(dir!, 'pae-'));
          } catch {
            return false; // the descriptor readdir itself used, closed since
          }
        }).length;
        const held = runFds(); // the index built in before() (bound OPEN_RUNS)
        const bounded = new KeyIndex('pae', dir, keyAt, keysAt, { openRuns: 1 });
        bounded.resume(N);
        // two runs: each lookup reads both, through one descriptor at a time
        for (const i of [5, RUN_SPAN + 5, 2 * RUN_SPAN + 5, 1999, RUN_SPAN + 999]) expect(bounded.newest(keyAt(i)), `key of ${i}`).to.equal(scanNewest(keyAt(i), N));
        expect(bounded.withPrefix(keyAt(RUN_SPAN + 7).toString('hex').slice(0, 5), 5)).to.deep.equal(scanPrefix(keyAt(RUN_SPAN + 7).toString('hex').slice(0, 5), N, 5));
        expect(bounded.openRunFiles).to.equal(1);
        expect(runFds() - held).to.equal(1);
        bounded.close();
        expect(runFds() - held).to.equal(0);
        expect(index.openRunFiles).to.be.at.most(OPEN_RUNS);
      });
    }
  });
}
