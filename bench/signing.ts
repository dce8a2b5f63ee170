/**
 * Signatures per second: the batched pool signer against a plain crypto.sign loop on the main
 * thread and against one signature per pool task (batch size 1), all in this process.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { pino } from 'pino';
import { WorkerPool } from '../src/platform/pool.js';
import { Signer } from '../src/ledger/signer.js';
import { pae, PAYLOAD_TYPE } from '../src/ledger/dsse.js';

const N = Number(process.env.BENCH_SIGNATURES ?? 20000);

export interface SigningRow {
  label: string;
  sigsPerSec: number;
  ratio: number;
}

async function throughput(signer: Signer, message: Buffer): Promise<number> {
  const t0 = performance.now();
  const inFlight = 256;
  let done = 0;
  // a steady stream of concurrent requests, as under verdict load
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (done < N) {
        done++;
        await signer.sign(message);
      }
    }),
  );
  return N / ((performance.now() - t0) / 1000);
}

export async function signingBench(): Promise<SigningRow[]> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const message = pae(PAYLOAD_TYPE, Buffer.alloc(260, 0x61));
  const cfg = { threads: 2, maxQueue: 100000, taskDeadlineMs: 60000, idleTimeoutMs: 60000, maxOldGenerationSizeMb: 256, retryAfterS: 1, signThreads: 2, killGraceMs: 1000, niceIncrement: 0, warmup: false, warmupPasses: 1 };
  const pool = new WorkerPool(cfg, 2, pino({ level: 'silent' }), privateKey);
  try {
    await throughput(new Signer(pool, 64), message); // warm-up
    const t0 = performance.now();
    for (let i = 0; i < N; i++) sign('sha256', message, privateKey);
    const loop = N / ((performance.now() - t0) / 1000);
    const single = await throughput(new Signer(pool, 1), message);
    const batched = await throughput(new Signer(pool, 64), message);
    return [
      { label: 'crypto.sign loop, main thread (blocks the loop)', sigsPerSec: loop, ratio: 1 },
      { label: 'pool, one signature per task', sigsPerSec: single, ratio: single / loop },
      { label: 'pool, batched (<= 64 per task)', sigsPerSec: batched, ratio: batched / loop },
    ];
  } finally {
    await pool.destroy();
  }
}
