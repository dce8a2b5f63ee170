/**
 * Builds a file-mode data directory of N real receipts, fast, with the service's own code:
 *   node --import tsx bench/tools/build-ledger.ts --dir D --entries N [--key K] [--threads T] [--batch B]
 * Receipts are made and signed by the signing lane's entry (workers/sign-host.ts) on T threads;
 * each batch is made durable by FileStore.commit and applied to a Ledger over the store's tiles,
 * and a signed checkpoint is written the way the service writes it (every 262,144 entries and at
 * the end), so the service opens the directory at that checkpoint without replaying it. The key
 * is `<D>/signing-key.pem`, where file mode looks by default (K is copied there; without K one is
 * made). A directory built before is resumed: its log is opened and appended to up to N entries.
 * The checkpoint origin is the service's default one (SVC_CHECKPOINT_ORIGIN or
 * SVC_PUBLIC_BASE_URL, when set, are honoured as the service honours them).
 */
import { sign, verify } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { checkpointOrigin, Checkpoints } from '../../src/ledger/checkpoint.js';
import { pae, PAYLOAD_TYPE } from '../../src/ledger/dsse.js';
import { Keyring } from '../../src/ledger/keyring.js';
import { loadSigningKey, resolveSigningKey, writeFileDurably, type SigningKey } from '../../src/ledger/keys.js';
import { Ledger, type AppendInput } from '../../src/ledger/ledger.js';
import type { Signer } from '../../src/ledger/signer.js';
import { FileStore, LEDGER_FILE } from '../../src/ledger/store/file-store.js';
import { RECEIPT_KIND, type ReceiptBody } from '../../src/lib/receipt-bytes.js';
import { workerSource } from '../../src/platform/worker-source.js';
import type { PackedReceipts, ReceiptTask, TaskResult } from '../../src/lib/tasks.js';

/** A checkpoint this often bounds what a resumed build (or the service) re-reads after a crash. */
const CHECKPOINT_EVERY = 262_144;
const PROGRESS_MS = 5_000;
/** Receipts are dated from here, 100 ms apart, so every payload is distinct and reproducible. */
const EPOCH_MS = Date.UTC(2026, 0, 1);

interface Options {
  dir: string;
  entries: number;
  key: string | null;
  threads: number;
  batch: number;
}

function options(): Options {
  const { values } = parseArgs({
    options: { dir: { type: 'string' }, entries: { type: 'string' }, key: { type: 'string' }, threads: { type: 'string' }, batch: { type: 'string' } },
    strict: true,
  });
  const entries = Number(values.entries?.replace(/_/g, ''));
  if (!values.dir || !Number.isSafeInteger(entries) || entries < 0) {
    process.stderr.write('usage: node --import tsx bench/tools/build-ledger.ts --dir D --entries N [--key K.pem] [--threads T] [--batch B]\n');
    process.exit(2);
  }
  return { dir: values.dir, entries, key: values.key ?? null, threads: Number(values.threads ?? availableParallelism()), batch: Number(values.batch ?? 4096) };
}

/** A cheap, well-mixed 32-bit hash of the index: the varied fields of receipt `i`. */
function mix(i: number, salt: number): number {
  let h = Math.imul(i ^ salt, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Receipt `i`: a verdict body the service could have made, on a frame of its own. */
function receiptItem(i: number): ReceiptTask['items'][number] {
  const lambda = Math.round((0.5 + (mix(i, 1) % 500_000) / 1_000_000) * 1e6) / 1e6;
  const decision = lambda >= 0.9 ? 'ALLOW' : lambda >= 0.7 ? 'REVIEW' : 'DENY';
  const inside = mix(i, 2) % 16 === 0;
  const breaches: ReceiptBody['breaches'] = [];
  if (inside) breaches.push({ rule: 'geofence', zone: 'nfz-bench' });
  if (lambda < 0.7) breaches.push({ rule: 'axis', axis: 'kinematics', value: lambda, limit: 0.7 });
  const body: ReceiptBody = { breaches, decision, geofence_inside: mix(i, 3) % 8 === 0 ? null : inside, lambda, lambda_floor: 0.7 };
  const frame = {
    track_id: `bench-${(mix(i, 4) % 4096).toString(16).padStart(3, '0')}`,
    source: 'ADS-B',
    lat: 36 + (mix(i, 5) % 100_000) / 100_000,
    lon: -115 - (mix(i, 6) % 100_000) / 100_000,
    alt_m: 50 + (mix(i, 7) % 400),
    speed_mps: mix(i, 8) % 40,
    heading_deg: mix(i, 9) % 360,
    rssi_dbm: -40 - (mix(i, 10) % 50),
    id_authenticated: mix(i, 11) % 2 === 0,
    timestamp_skew_s: 0,
    n_observations: i + 1,
  };
  return { body, tsUtc: new Date(EPOCH_MS + i * 100).toISOString(), frame };
}

/** The key the service will find: K copied to <dir>/signing-key.pem, else the one there, else a new one. */
function signingKey(dir: string, keyFile: string | null): SigningKey {
  const inDir = join(dir, 'signing-key.pem');
  const present = (statSync(inDir, { throwIfNoEntry: false })?.size ?? 0) > 0;
  if (keyFile === null) {
    const key = resolveSigningKey({ mode: 'file', dataDir: dir, signingKeyFile: null });
    if (key.unsaved) throw key.unsaved.error;
    return key;
  }
  const key = loadSigningKey(keyFile);
  if (!present) writeFileDurably(inDir, readFileSync(keyFile, 'utf8'), 0o600);
  else if (loadSigningKey(inDir).keyid !== key.keyid) throw new Error(`${inDir} holds another key than ${keyFile}; the log is signed with the key in the directory`);
  return key;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');
const clock = (s: number): string => (s >= 60 ? `${Math.floor(s / 60)}m ${String(Math.round(s % 60)).padStart(2, '0')}s` : `${Math.round(s)}s`);

async function main(): Promise<void> {
  const opts = options();
  const store = FileStore.open({ dataDir: opts.dir, retryAfterS: 1, log: { warn: (o, m) => console.warn(`build-ledger: ${m} ${JSON.stringify(o)}`), info: () => {} } });
  const key = signingKey(opts.dir, opts.key);
  const storage = store.storage();
  const ledger = new Ledger(Infinity, storage);
  const keyring = new Keyring(key);
  for (const pem of await store.loadKeys()) keyring.add(pem);
  await store.recordKey(key.keyid, key.spkiPem);
  // what the service's Signer does for a checkpoint: an ECDSA signature over the note text
  const signer = { sign: (bytes: Buffer) => Promise.resolve(sign('sha256', bytes, key.privateKey)) } as unknown as Signer;
  const origin = process.env.SVC_CHECKPOINT_ORIGIN ?? checkpointOrigin(key.keyid, process.env.SVC_PUBLIC_BASE_URL ?? null);
  const checkpoints = new Checkpoints(ledger, key, signer, {
    origin,
    // signed when asked (size changed): the builder decides when
    intervalMs: 0,
    store: store.checkpointStore(),
    beforePersist: async () => {
      await Promise.all([ledger.sync(), store.syncDerived()]);
    },
  });

  const opened = performance.now();
  const replay = await store.replay({
    apply: (n) => ledger.applyNode(n, false, true),
    // only what was appended after the last checkpoint is handed here (a build cut short)
    verifySignatures: (nodes) => {
      for (const n of nodes) {
        const k = keyring.get(n.keyid);
        if (!k || !verify('sha256', pae(PAYLOAD_TYPE, n.payload), k.publicKey, n.sig)) return Promise.resolve({ index: n.index, reason: `node ${n.index}: signature does not verify` });
      }
      return Promise.resolve(null);
    },
    anchor: await checkpoints.anchor(),
    resume: (size) => ledger.resume(size),
    head: () => ledger.head,
  });
  if (replay.corruptAt) throw new Error(`the log in ${opts.dir} is damaged: ${replay.corruptAt.reason}`);
  await checkpoints.load();
  const startSize = ledger.size;
  console.log(`build-ledger: ${opts.dir}: ${fmt(startSize)} entries there (opened in ${Math.round(performance.now() - opened)} ms at the checkpoint of ${fmt(replay.fromCheckpoint ?? 0)}, ${fmt(replay.nodes - (replay.fromCheckpoint ?? 0))} read after it), building to ${fmt(opts.entries)} on ${opts.threads} signing threads, batches of ${opts.batch}`);

  const pool = new Piscina({ ...workerSource(new URL('../../workers/sign-host.ts', import.meta.url)), minThreads: opts.threads, maxThreads: opts.threads, workerData: { signingKey: key.privateKey } });
  /** One batch: its receipts made and signed, split over the threads. */
  const signBatch = async (from: number, n: number): Promise<AppendInput[]> => {
    const per = Math.ceil(n / opts.threads);
    const parts: { items: ReceiptTask['items']; signed: Promise<TaskResult<PackedReceipts>> }[] = [];
    for (let at = from; at < from + n; at += per) {
      const items = Array.from({ length: Math.min(per, from + n - at) }, (_, k) => receiptItem(at + k));
      parts.push({ items, signed: pool.run({ kind: 'receipts', items } satisfies ReceiptTask) as Promise<TaskResult<PackedReceipts>> });
    }
    const out: AppendInput[] = [];
    for (const { items, signed } of parts) {
      const r = await signed;
      if (!r.ok) throw new Error(`signing lane: ${r.error.msg}`);
      const p = r.value;
      const bytes = Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength);
      p.at.forEach((at, k) => {
        const len = p.payloadLen[k]!;
        if (len < 0) throw new Error(`receipt ${from + out.length}: ${p.errors[k]}`);
        out.push({ kind: RECEIPT_KIND, tsUtc: items[k]!.tsUtc, payload: bytes.subarray(at, at + len), paeSha256: bytes.subarray(at + len, at + len + 32), sig: bytes.subarray(at + len + 32, at + len + 32 + p.sigLen[k]!), keyid: key.keyid });
      });
    }
    return out;
  };

  let stopping = false;
  const stop = (): void => {
    if (!stopping) console.log('build-ledger: stopping after this batch (the directory stays resumable)');
    stopping = true;
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  const started = performance.now();
  let lastAt = started;
  let lastSize = startSize;
  let nextCheckpoint = (Math.floor(startSize / CHECKPOINT_EVERY) + 1) * CHECKPOINT_EVERY;
  const progress = (force = false): void => {
    const now = performance.now();
    if (!force && now - lastAt < PROGRESS_MS) return;
    const size = ledger.size;
    const rate = ((size - lastSize) * 1000) / (now - lastAt);
    const overall = ((size - startSize) * 1000) / (now - started);
    const eta = overall > 0 ? (opts.entries - size) / overall : Infinity;
    console.log(`build-ledger: ${fmt(size)} / ${fmt(opts.entries)} entries (${((100 * size) / Math.max(1, opts.entries)).toFixed(1)}%), ${fmt(rate)}/s now, ${fmt(overall)}/s overall, ETA ${Number.isFinite(eta) ? clock(eta) : '?'}`);
    lastAt = now;
    lastSize = size;
  };

  // a few batches signed ahead keep both threads busy while one is made durable and applied
  const ahead: Promise<AppendInput[]>[] = [];
  let planned = startSize;
  const plan = (): void => {
    while (ahead.length < 3 && planned < opts.entries) {
      const n = Math.min(opts.batch, opts.entries - planned);
      const batch = signBatch(planned, n);
      batch.catch(() => {}); // awaited in order below; a failure surfaces there
      ahead.push(batch);
      planned += n;
    }
  };
  try {
    plan();
    while (ahead.length && !stopping) {
      const inputs = await ahead.shift()!;
      plan();
      const nodes = await store.commit(inputs, { size: ledger.size, head: ledger.head });
      // sequence() has just computed each digest: applied as replayed, not hashed a second time
      ledger.applyNodes(nodes, 0, true);
      if (ledger.size >= nextCheckpoint) {
        await checkpoints.current();
        nextCheckpoint += CHECKPOINT_EVERY;
      }
      progress();
    }
    await Promise.allSettled(ahead);
    if (ledger.size) await checkpoints.current();
    progress(true);
  } finally {
    await pool.destroy();
    await store.close();
    ledger.close();
  }
  const seconds = (performance.now() - started) / 1000;
  const added = ledger.size - startSize;
  const bytes = statSync(join(opts.dir, LEDGER_FILE)).size;
  console.log(`build-ledger: ${fmt(added)} entries added in ${seconds.toFixed(1)} s (${fmt(added / seconds)} entries/s); ${fmt(ledger.size)} in the log, ${LEDGER_FILE} ${(bytes / 2 ** 30).toFixed(2)} GiB, checkpoint at ${fmt(ledger.size)}`);
  // one machine-readable line for bench/ledger-scale.ts
  console.log(`build-ledger result ${JSON.stringify({ dir: opts.dir, entries: ledger.size, added, seconds, perSecond: added / seconds, threads: opts.threads, logBytes: bytes })}`);
}

await main();
