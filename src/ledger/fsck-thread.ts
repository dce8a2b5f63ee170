/**
 * The thread of a serving process's background fsck (its entry, started by background-fsck.ts): it parses, hashes and verifies the whole log
 * here, at the lowest priority, so neither the main thread (HTTP) nor the pools' threads wait for
 * it. Progress and the report go back as messages; the message 'stop' aborts it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { fsckDataDir } from './fsck.js';
import { stepBack, threadId } from '../../workers/lib/thread-priority.js';

export type FsckMessage =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; report: Awaited<ReturnType<typeof fsckDataDir>> }
  | { type: 'error'; message: string }
  /** The check ended because it was asked to stop: not a failure. */
  | { type: 'stopped' };

const { dataDir, recordsEnd } = workerData as { dataDir: string; recordsEnd: number };
const abort = new AbortController();
const port = parentPort!;
port.on('message', (m) => m === 'stop' && abort.abort());
stepBack(threadId(), 19);
const post = (m: FsckMessage): void => port.postMessage(m);
fsckDataDir(dataDir, { recordsEnd, signal: abort.signal, onProgress: (p) => post({ type: 'progress', done: p.done, total: p.total }) }).then(
  (report) => post({ type: 'done', report }),
  (err: unknown) => post(abort.signal.aborted ? { type: 'stopped' } : { type: 'error', message: (err as Error)?.message ?? String(err) }),
);
