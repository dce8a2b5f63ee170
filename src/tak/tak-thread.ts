/**
 * The TAK thread: hosts the enabled outputs off the main thread, so no socket, TLS handshake or
 * slow peer ever runs on the request path. It hands each batch of events to every output, answers
 * each batch with an ack (the main thread's queue posts the next one only then), and reports its
 * outputs' state every `statusIntervalMs` and when asked.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { TakOutput } from './output.js';
import { constructOutputs } from './outputs.js';
import type { FromTakThread, TakThreadData, ToTakThread } from './thread-messages.js';

const port = parentPort!;
const data = workerData as TakThreadData;
const outputs: TakOutput[] = constructOutputs(data.plan);

function post(m: FromTakThread): void {
  port.postMessage(m);
}

function reportStatus(): void {
  post({ type: 'status', outputs: Object.fromEntries(outputs.map((o) => [o.name, o.status()])) });
}

async function start(): Promise<void> {
  const errors: Record<string, string> = {};
  // an output that cannot start reports its error in its state; the others run
  await Promise.all(
    outputs.map(async (o) => {
      try {
        await o.start();
      } catch (err) {
        errors[o.name] = (err as Error).message;
      }
    }),
  );
  post({ type: 'started', errors });
  reportStatus();
}

async function close(timer: NodeJS.Timeout): Promise<void> {
  clearInterval(timer);
  await Promise.allSettled(outputs.map((o) => o.close()));
  reportStatus();
  post({ type: 'closed' });
  port.close();
}

function onMessage(m: ToTakThread): void {
  if (m.type === 'events') {
    for (const ev of m.events) for (const o of outputs) o.send(ev);
    post({ type: 'ack' });
  } else if (m.type === 'status') {
    reportStatus();
  } else {
    void close(timer);
  }
}

const timer = setInterval(reportStatus, data.statusIntervalMs);
port.on('message', onMessage);
void start();
