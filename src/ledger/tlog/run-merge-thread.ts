/**
 * The thread a key index merges its runs in (started by key-index.ts for each merge), at the
 * lowest priority: a merge of the largest runs reads and writes hundreds of MiB, and neither the
 * main thread nor the pools should wait for it. It answers 'done' or the error's message.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { mergeRuns, type MergeJob } from './run-merge.js';
import { stepBack, threadId } from '../../../workers/lib/thread-priority.js';

stepBack(threadId(), 19);
try {
  mergeRuns(workerData as MergeJob);
  parentPort!.postMessage({ ok: true });
} catch (err) {
  parentPort!.postMessage({ ok: false, message: (err as Error)?.message ?? String(err) });
}
