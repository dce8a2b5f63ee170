/**
 * Key-index merges in a thread of their own (run-merge-thread.ts), one thread per merge: merges
 * are rare (one per 262,144 nodes at the lowest level) and a large one reads and writes hundreds
 * of MiB, which the main thread must never do. Closing the index stops the thread.
 */
import { Worker } from 'node:worker_threads';
import { entryNextTo, workerSource } from '../../platform/worker-source.js';
import type { Merger } from './key-index.js';

export const mergeInThread: Merger = (job, signal) => {
  const src = workerSource(entryNextTo('./run-merge-thread', import.meta.url));
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(src.filename), { execArgv: src.execArgv, workerData: job, name: 'key-index merge' });
    worker.unref();
    const stop = (): void => void worker.terminate();
    signal.addEventListener('abort', stop, { once: true });
    let answered = false;
    worker.once('message', (m: { ok: boolean; message?: string }) => {
      answered = true;
      if (m.ok) resolve();
      else reject(new Error(m.message));
    });
    worker.once('error', reject);
    worker.once('exit', () => {
      signal.removeEventListener('abort', stop);
      if (!answered) reject(new Error('the merge thread stopped before it finished'));
    });
  });
};
