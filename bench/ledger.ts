/**
 * `npm run bench -- ledger`: what durability costs. POST /verdict against a memory-mode service,
 * a file-mode service (group commit + fdatasync) and a postgres-mode service (one transaction per
 * group-committed batch; the embedded PostgreSQL the tests use, or SVC_TEST_DATABASE_URL) in the
 * same run, and the start-up replay of a
 * 100,000-node file ledger (chain, digests, root and every signature re-verified before READY).
 */
import { generateKeyPairSync, createHash, sign } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load, printTable, SERVICE_LOAD_ENV, startServer, warm, type Summary, VERDICT_FRAME as FRAME } from './lib.js';
import { pae, PAYLOAD_TYPE } from '../src/ledger/dsse.js';
import { keyidOf } from '../src/ledger/keyring.js';
import { ZERO_DIGEST, nodeDigest } from '../src/ledger/ledger.js';
import { FILE_SCHEMA, LEDGER_FILE, nodeLine } from '../src/ledger/store/file-store.js';
import { usePostgres } from '../test/helpers/postgres.js';


/** A valid, signed 100k-node ledger directory, written the way the file store writes it. */
export function writeSyntheticLedger(dir: string, nodes: number): void {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const keyid = keyidOf(publicKey);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  writeFileSync(join(dir, 'signing-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(join(dir, 'keys', `${keyid}.pem`), publicKey.export({ type: 'spki', format: 'pem' }));
  const out: string[] = [`${JSON.stringify({ schema: FILE_SCHEMA, created_at: new Date(0).toISOString() })}\n`];
  let prev: Buffer = ZERO_DIGEST;
  for (let i = 0; i < nodes; i++) {
    const tsUtc = new Date(Date.UTC(2026, 0, 1) + i).toISOString();
    const payload = Buffer.from(`{"doctrine":"v11","kind":"counter_uas_decision","payload":{"breaches":[],"decision":"ALLOW","geofence_inside":false,"lambda":0.9${i % 10},"lambda_floor":0.8},"schema":"svc.receipt/v1","ts_utc":"${tsUtc}"}`);
    const paeBytes = pae(PAYLOAD_TYPE, payload);
    const paeSha256 = createHash('sha256').update(paeBytes).digest();
    const digest = nodeDigest(i, prev, paeSha256);
    out.push(nodeLine({ index: i, kind: 'counter_uas_decision', tsUtc, payload, paeSha256, sig: sign('sha256', paeBytes, privateKey), keyid, prev, nodeDigest: digest, simulated: false }));
    prev = digest;
  }
  writeFileSync(join(dir, LEDGER_FILE), out.join(''));
}

export async function ledgerBench(): Promise<Record<string, unknown>> {
  const dirs: string[] = [];
  const tmp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'svc-bench-ledger-'));
    dirs.push(d);
    return d;
  };
  try {
    const post = { method: 'POST' as const, body: FRAME, headers: { 'content-type': 'application/json' } };
    const rows: (Summary & { ratio?: number; vs?: string })[] = [];
    // one service per mode, the same load on each; every ratio is against memory mode
    const measure = async (label: string, env: Record<string, string>): Promise<void> => {
      const svc = await startServer(`service (${env.SVC_LEDGER_MODE})`, ['dist/src/main.js'], '/api/svc/v1/health', { ...env, ...SERVICE_LOAD_ENV });
      try {
        await warm(`${svc.base}/api/svc/v1/verdict`, post);
        const r = await load(label, { url: `${svc.base}/api/svc/v1/verdict`, ...post });
        rows.push(rows.length ? { ...r, ratio: r.reqPerSec / rows[0]!.reqPerSec, vs: 'vs memory' } : r);
      } finally {
        await svc.stop();
      }
    };
    await measure('POST /verdict, memory mode', { SVC_LEDGER_MODE: 'memory' });
    await measure('POST /verdict, file mode (fdatasync)', { SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: tmp() });
    const db = await usePostgres();
    try {
      const keyFile = join(tmp(), 'signing-key.pem');
      writeFileSync(keyFile, generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      await measure('POST /verdict, postgres mode (one transaction per batch)', { SVC_LEDGER_MODE: 'postgres', SVC_DATABASE_URL: db.url, SVC_SIGNING_KEY_FILE: keyFile });
    } finally {
      await db.release();
    }
    printTable('ledger: POST /verdict by ledger mode (same run)', rows);

    const nodes = Number(process.env.BENCH_LEDGER_NODES ?? 100_000);
    const dir = tmp();
    writeSyntheticLedger(dir, nodes);
    const t0 = performance.now();
    const replayed = await startServer('service (replay)', ['dist/src/main.js'], '/api/svc/v1/health', { SVC_LEDGER_MODE: 'file', SVC_DATA_DIR: dir, ...SERVICE_LOAD_ENV }, 300);
    const startMs = performance.now() - t0;
    const readiness = (await (await fetch(`${replayed.base}/api/svc/v1/ledger/readiness`)).json()) as { ready: boolean; replay: { nodes: number; ms: number } };
    await replayed.stop();
    console.log(`\n## ledger replay: ${nodes} nodes, start to first answer ${(startMs / 1000).toFixed(2)} s (replay incl. signature sweep ${(readiness.replay.ms / 1000).toFixed(2)} s), ready=${readiness.ready}, nodes=${readiness.replay.nodes}`);
    return { rows, replay: { nodes, startMs, replayMs: readiness.replay.ms, ready: readiness.ready } };
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
