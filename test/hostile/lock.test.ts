// The file ledger's writer lock between real processes. The lock is an OS lock on data/LOCK that
// the kernel drops with its holder; the JSON in the file only names the holder. So a LOCK that
// names a live process holding no lock (PID 1 of a container restarted after a crash) is taken
// over, a process that really holds it keeps it and is named, and two services started at once on
// one directory leave exactly one running.
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireLock, LockHeldError } from '../../src/ledger/store/file-store.js';
import { runServiceToEnd, startService, type ServiceProcess } from '../helpers/service-process.js';

const fileEnv = (dir: string): Record<string, string> => ({ SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir });
const frame = { track_id: 'f10c4e', source: 'ADS-B', lat: 36.5, lon: -115.1, alt_m: 90, speed_mps: 15, heading_deg: 10, rssi_dbm: -45, id_authenticated: true, timestamp_skew_s: 0, n_observations: 800 };

/** True when `pid` names a running process (signal 0 only asks). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}

async function postVerdict(base: string): Promise<{ status: number; index?: number }> {
  const res = await fetch(`${base}/api/svc/v1/verdict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(frame) });
  const body = (await res.json()) as { ledger?: { index: number } };
  return { status: res.status, index: body.ledger?.index };
}

describe('hostile: the file ledger lock between processes', function () {
  // starts the entry point under tsx: seconds on a quiet machine, a minute or more on a loaded one
  this.timeout(300_000);
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const dir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-lock-'));
    dirs.push(d);
    return d;
  };
  const start = async (env: Record<string, string>): Promise<ServiceProcess> => {
    const svc = await startService(env);
    children.push(svc.child);
    return svc;
  };
  afterEach(async () => {
    for (const c of children.splice(0)) await stop(c, 'SIGKILL');
    dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
  });

  it('a LOCK naming a live process that holds no lock (PID 1, as in a restarted container; or this very process) is taken over at start', async () => {
    for (const pid of [1, process.pid]) {
      expect(running(pid), `pid ${pid} runs`).to.equal(true);
      const d = dir();
      writeFileSync(join(d, 'LOCK'), `${JSON.stringify({ pid, host: hostname(), started_at: '2025-01-01T00:00:00.000Z' })}\n`);
      const svc = await start(fileEnv(d));
      // the service took over: the LOCK now names it, and it writes
      const holder = JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')) as { pid: number; host: string };
      expect([holder.pid, holder.host]).to.deep.equal([svc.child.pid, hostname()]);
      expect(await postVerdict(svc.base)).to.deep.equal({ status: 200, index: 0 });
      await stop(svc.child);
    }
  });

  it('a process that really holds the lock keeps it: a second service exits 2 naming it, and so is a taker in this process; once it is killed the lock is free at once', async () => {
    const d = dir();
    const holder = await start(fileEnv(d));
    const named = new RegExp(`data directory .* is locked by pid ${holder.child.pid} on ${hostname()} since \\d{4}-`);
    const second = await runServiceToEnd(fileEnv(d));
    expect(second.code).to.equal(2);
    expect(second.stderr).to.match(named);
    expect(() => acquireLock(d)).to.throw(LockHeldError, named);
    // the holder still writes, the refused starts changed nothing
    expect(await postVerdict(holder.base)).to.deep.equal({ status: 200, index: 0 });
    await stop(holder.child, 'SIGKILL');
    // the LOCK still names the killed process; the kernel dropped its lock with it
    expect((JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')) as { pid: number }).pid).to.equal(holder.child.pid);
    const release = acquireLock(d);
    release();
    const next = await start(fileEnv(d));
    expect(await postVerdict(next.base)).to.deep.equal({ status: 200, index: 1 });
  });

  it('two services started at once on one new directory: exactly one runs, the other exits 2 naming the lock', async () => {
    const d = dir();
    const results = await Promise.allSettled([start(fileEnv(d)), start(fileEnv(d))]);
    const up = results.filter((r): r is PromiseFulfilledResult<ServiceProcess> => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect([up.length, refused.length]).to.deep.equal([1, 1]);
    expect(String(refused[0]!.reason)).to.match(/service exited early with 2: .*data directory .* is locked by (pid \d+ on |another process)/s);
    const winner = up[0]!.value;
    expect((JSON.parse(readFileSync(join(d, 'LOCK'), 'utf8')) as { pid: number }).pid).to.equal(winner.child.pid);
    expect(await postVerdict(winner.base)).to.deep.equal({ status: 200, index: 0 });
  });
});
