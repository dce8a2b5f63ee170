// The serving process's side of the background fsck: the status it reports from the thread's
// messages (progress, a clean report, damage, an unverified checkpoint, an error), what it logs and
// hands to the store, and a real thread started on a directory that holds no log.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { BackgroundFsck, type FsckStatus } from '../../src/ledger/background-fsck.js';
import type { FsckMessage } from '../../src/ledger/fsck-thread.js';
import type { BadNode, FsckReport } from '../../src/ledger/fsck.js';
import { until } from '../helpers/until.js';

interface Logged {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

/** A BackgroundFsck whose thread is played by the test: messages go straight to its handler. */
function harness(dataDir = '/srv/data') {
  const logged: Logged[] = [];
  const damage: BadNode[] = [];
  const fsck = new BackgroundFsck({
    dataDir,
    recordsEnd: () => 1234,
    onDamage: (bad) => void damage.push(bad),
    log: {
      info: (obj, msg) => void logged.push({ level: 'info', obj, msg }),
      warn: (obj, msg) => void logged.push({ level: 'warn', obj, msg }),
      error: (obj, msg) => void logged.push({ level: 'error', obj, msg }),
    },
  });
  let terminated = 0;
  const inner = fsck as unknown as { worker: { terminate(): void } | null; onMessage(m: FsckMessage): void };
  inner.worker = {
    terminate: () => {
      terminated++;
    },
  };
  return { fsck, logged, damage, send: (m: FsckMessage) => inner.onMessage(m), terminated: () => terminated };
}

const report = (over: Partial<FsckReport> = {}): FsckReport => ({
  ok: true,
  nodes: 300,
  firstBad: null,
  tiles: { levels: 2, hashes: 301, interiors: 1 },
  checkpoint: { size: 300, verified: true, reason: null },
  signatures: 300,
  ms: 1234.6,
  entriesPerSecond: 243,
  ...over,
});

describe('BackgroundFsck (status, logs and damage from the thread)', function () {

  it('is off until started; progress moves checked and total, and leaves the thread running', () => {
    const h = harness();
    expect(h.fsck.status()).to.deep.equal({ state: 'off', checked: 0, total: 0, first_bad: null, entries_per_second: null, error: null });
    h.send({ type: 'progress', done: 10, total: 300 });
    h.send({ type: 'progress', done: 120, total: 301 });
    expect(h.fsck.status()).to.deep.equal({ state: 'off', checked: 120, total: 301, first_bad: null, entries_per_second: null, error: null });
    expect([h.terminated(), h.logged]).to.deep.equal([0, []]);
  });

  it('a clean report: passed, every node checked, the rate, one info line; the thread is ended', () => {
    const h = harness();
    h.send({ type: 'progress', done: 10, total: 300 });
    h.send({ type: 'done', report: report() });
    expect(h.fsck.status()).to.deep.equal({ state: 'passed', checked: 300, total: 300, first_bad: null, entries_per_second: 243, error: null } satisfies FsckStatus);
    expect(h.logged).to.deep.equal([{ level: 'info', obj: { nodes: 300, ms: 1235, entries_per_second: 243 }, msg: 'background fsck: every record, tile and signature verified' }]);
    expect([h.damage, h.terminated()]).to.deep.equal([[], 1]);
    // a log without a checkpoint is clean too
    const bare = harness();
    bare.send({ type: 'done', report: report({ checkpoint: null }) });
    expect(bare.fsck.status().state).to.equal('passed');
  });

  it('damage: the first bad node, an error line, and the store told to refuse appends', () => {
    const h = harness();
    const bad = { index: 17, reason: 'node digest does not recompute' };
    h.send({ type: 'done', report: report({ ok: false, firstBad: bad, checkpoint: { size: 300, verified: false, reason: 'root differs' } }) });
    expect(h.fsck.status()).to.deep.equal({ state: 'damaged', checked: 300, total: 300, first_bad: bad, entries_per_second: 243, error: null });
    expect(h.logged).to.deep.equal([{ level: 'error', obj: bad, msg: 'background fsck: the ledger is damaged; appends refused' }]);
    expect([h.damage, h.terminated()]).to.deep.equal([[bad], 1]);
  });

  it('records intact but the checkpoint not verified: damage at the checkpoint size (0 when it has none)', () => {
    for (const [size, index] of [
      [300, 300],
      [null, 0],
    ] as const) {
      const h = harness();
      h.send({ type: 'done', report: report({ ok: false, checkpoint: { size, verified: false, reason: 'its signature does not verify' } }) });
      const bad = { index, reason: 'the checkpoint: its signature does not verify' };
      expect(h.fsck.status().first_bad).to.deep.equal(bad);
      expect(h.fsck.status().state).to.equal('damaged');
      expect(h.damage).to.deep.equal([bad]);
    }
  });

  it('an error: state error with the data directory kept out of the message, a warning with the full one', () => {
    const h = harness('/srv/data');
    h.send({ type: 'progress', done: 5, total: 300 });
    h.send({ type: 'error', message: "ENOENT: no such file or directory, open '/srv/data/tlog/0' (under /srv/data)" });
    expect(h.fsck.status()).to.deep.equal({ state: 'error', checked: 5, total: 300, first_bad: null, entries_per_second: null, error: "ENOENT: no such file or directory, open '<data dir>/tlog/0' (under <data dir>)" });
    expect(h.logged).to.deep.equal([{ level: 'warn', obj: { err: "ENOENT: no such file or directory, open '/srv/data/tlog/0' (under /srv/data)" }, msg: 'background fsck could not finish' }]);
    expect([h.damage, h.terminated()]).to.deep.equal([[], 1]);
  });

  it('stopped on request: the thread is ended and nothing changes', () => {
    const h = harness();
    h.send({ type: 'progress', done: 5, total: 300 });
    h.send({ type: 'stopped' });
    expect([h.fsck.status().state, h.fsck.status().checked, h.logged, h.terminated()]).to.deep.equal(['off', 5, [], 1]);
  });

  it('a real thread on a directory with no log: running, then error; start() twice starts one thread; stop() waits for it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bgfsck-'));
    const warned: object[] = [];
    const fsck = new BackgroundFsck({ dataDir: dir, recordsEnd: () => 0, onDamage: () => {}, log: { info: () => {}, warn: (obj) => void warned.push(obj), error: () => {} } });
    try {
      await fsck.stop();
      fsck.start();
      const first = (fsck as unknown as { worker: unknown }).worker;
      expect(fsck.status().state).to.equal('running');
      fsck.start();
      expect((fsck as unknown as { worker: unknown }).worker).to.equal(first);
      await until('the thread to report', () => fsck.status().state !== 'running' && fsck.status());
      expect(fsck.status().state).to.equal('error');
      expect(fsck.status().error).to.include('<data dir>');
      expect(fsck.status().error).to.not.include(dir);
      expect(warned).to.have.length(1);
      await fsck.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stop() returns once the thread has exited; an error event of the thread is an error state', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bgfsck-'));
    const warned: object[] = [];
    const fsck = new BackgroundFsck({ dataDir: dir, recordsEnd: () => 0, onDamage: () => {}, log: { info: () => {}, warn: (obj) => void warned.push(obj), error: () => {} } });
    try {
      fsck.start();
      const worker = (fsck as unknown as { worker: Worker }).worker;
      worker.emit('error', new Error(`thread failed under ${dir}`));
      expect([fsck.status().state, fsck.status().error]).to.deep.equal(['error', 'thread failed under <data dir>']);
      expect(warned).to.deep.equal([{ err: `thread failed under ${dir}` }]);
      await fsck.stop();
      expect(worker.threadId).to.equal(-1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
