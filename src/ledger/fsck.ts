/**
 * fsck: checks a whole ledger offline, with memory that does not grow with it. File mode: the
 * records (khipu.jsonl) are read in chunks and each node is parsed and chained; its digest, PAE
 * digest and line end are compared with the derived files under tlog/; the Merkle tree is rebuilt
 * leaf by leaf along its right edge (O(log n) hashes held), every stored tile hash and tile interior compared with
 * it; the signed checkpoint's root is recomputed and its ECDSA signature checked with the key
 * under keys/. Signatures are checked in chunks by a pluggable function (a worker pool's, in the
 * CLI) while parsing goes on. Postgres mode: the rows of ledger_node, paged by index.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { EMPTY_ROOT, leafHash, nodeHash } from '../lib/merkle.js';
import { parseNote } from '../lib/signed-note.js';
import { HASH_SIZE, TILE_HEIGHT, TILE_WIDTH } from '../lib/tlog-tiles.js';
import type { VerifyTask } from '../lib/tasks.js';
import { verifyItems } from '../../workers/verify-host.js';
import { pae, PAYLOAD_TYPE } from './dsse.js';
import { ZERO_DIGEST, type LedgerNode } from './ledger.js';
import { FILE_SCHEMA, LEDGER_FILE, parseNodeLine } from './store/node-line.js';
import { rowToNode } from './store/postgres-store.js';
import { ENTRY_RECORD, INTERIOR_HASHES, tileInterior } from './tlog/tile-log.js';
import { LineReader } from './store/line-reader.js';
import { ServiceError } from '../lib/service-error.js';

export interface BadNode {
  index: number;
  reason: string;
}

/** The public keys a log holds (keys/ or ledger_key): DER SPKI by keyid (hex SHA-256 of the DER). */
export type LogKeys = Record<string, Uint8Array>;

/** replay.ts's signatureVerifier contract, the log's keys offered as well: the first bad node of `nodes`, or null. */
export type SignatureCheck = (nodes: readonly LedgerNode[], keys: LogKeys) => Promise<BadNode | null>;

export interface FsckProgress {
  /** records: reading (signatures checked behind it); signatures: the last chunks; checkpoint: the end. */
  phase: 'records' | 'signatures' | 'checkpoint';
  /** Nodes whose record and signature are checked. */
  done: number;
  /** Nodes in the log: exact once known, estimated from the bytes read until then. */
  total: number;
  /** Bytes of the records read. */
  bytes: number;
}

export interface FsckOptions {
  /** Default: verified on this thread (signatureCheck over verifyItems). */
  verifySignatures?: SignatureCheck;
  /** Signature chunks in flight at once (default 4): a pool of N threads wants at least N. */
  inFlight?: number;
  onProgress?: (p: FsckProgress) => void;
  signal?: AbortSignal;
  /**
   * Reads the records only up to this byte offset (file mode): a serving process passes where its
   * durable log ends when the check starts, and a checkpoint signed past that is left unchecked.
   */
  recordsEnd?: number;
}

export interface FsckReport {
  ok: boolean;
  nodes: number;
  /** The smallest damaged node: its record, digest, signature, a derived item, or the first node a damaged tile hash covers. */
  firstBad: BadNode | null;
  /** Stored tile levels compared and the hashes compared in them. */
  tiles: { levels: number; hashes: number; interiors: number };
  checkpoint: { size: number | null; verified: boolean; reason: string | null } | null;
  signatures: number;
  ms: number;
  entriesPerSecond: number;
}

/** The path holds no ledger (no khipu.jsonl): a usage error, not damage. */
export class NotALedgerError extends ServiceError {
  readonly code = 'SVC_NOT_A_LEDGER';
}

const READ_CHUNK = 4 * 1024 * 1024;
/** Nodes compared with the derived files at a time. */
const FLUSH_NODES = 4096;
const SIG_CHUNK = 2048;
const PG_PAGE = 5000;
const PROGRESS_MS = 100;

/** A SignatureCheck that hands each chunk to `run` as one verify task (a pool's, or in-process). */
export function signatureCheck(run: (task: VerifyTask) => Promise<boolean[]>): SignatureCheck {
  return async (nodes, keys) => {
    // own copies: a small Buffer is a view of a shared slab that a structured clone would copy whole
    const items = nodes.map((n) => ({ pae: new Uint8Array(pae(PAYLOAD_TYPE, n.payload)), sig: new Uint8Array(n.sig), keyid: n.keyid }));
    const ok = await run({ kind: 'verify', keys, items });
    const bad = ok.indexOf(false);
    if (bad < 0) return null;
    const n = nodes[bad]!;
    const reason = keys[n.keyid] ? `signature does not verify over its PAE with key ${n.keyid.slice(0, 16)}` : `signed by key ${n.keyid}, which is not among the log's public keys`;
    return { index: n.index, reason };
  };
}

const inProcess = signatureCheck((task) => Promise.resolve(verifyItems(task)));

/** The smallest bad node seen; at one index the record or signature is named before a derived file. */
class Findings {
  first: (BadNode & { primary: boolean }) | null = null;

  note(index: number, reason: string, primary = false): void {
    const f = this.first;
    if (!f || index < f.index || (index === f.index && primary && !f.primary)) this.first = { index, reason, primary };
  }

  get firstBad(): BadNode | null {
    return this.first && { index: this.first.index, reason: this.first.reason };
  }
}

/** Signature chunks checked in order, a bounded number in flight while the caller reads on. */
class SignatureSweep {
  private chunk: LedgerNode[] = [];
  private readonly flying: { n: number; result: Promise<BadNode | Error | null> }[] = [];
  settled = 0;

  constructor(
    private readonly check: SignatureCheck,
    private readonly keys: LogKeys,
    private readonly max: number,
    private readonly findings: Findings,
  ) {}

  async add(node: LedgerNode): Promise<void> {
    this.chunk.push(node);
    if (this.chunk.length >= SIG_CHUNK) await this.ship();
  }

  async ship(): Promise<void> {
    if (this.chunk.length) {
      // settled into a value at once, so a chunk failing while it waits its turn is never an unhandled rejection
      const result = this.check(this.chunk, this.keys).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
      this.flying.push({ n: this.chunk.length, result });
      this.chunk = [];
    }
    while (this.flying.length > this.max) await this.settleOne();
  }

  async drain(onSettled: () => void): Promise<void> {
    await this.ship();
    while (this.flying.length) {
      await this.settleOne();
      onSettled();
    }
  }

  private async settleOne(): Promise<void> {
    const c = this.flying.shift()!;
    const bad = await c.result;
    if (bad instanceof Error) throw bad;
    if (bad) this.findings.note(bad.index, bad.reason, true);
    this.settled += c.n;
  }
}

/** Progress, at most every PROGRESS_MS (and always at a phase's end). */
function progressReporter(onProgress: FsckOptions['onProgress']): (p: FsckProgress, force?: boolean) => void {
  let last = -Infinity;
  return (p, force = false) => {
    const now = performance.now();
    if (!onProgress || (!force && now - last < PROGRESS_MS)) return;
    last = now;
    onProgress(p);
  };
}

/** A derived column file, read only (FileColumn would create it and cut a torn item). */
class ColumnReader {
  private constructor(
    readonly name: string,
    private readonly fh: FileHandle,
    readonly width: number,
    readonly length: number,
  ) {}

  static async open(dataDir: string, name: string, width: number): Promise<ColumnReader | null> {
    let fh: FileHandle;
    try {
      fh = await open(join(dataDir, name), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return new ColumnReader(name, fh, width, Math.floor((await fh.stat()).size / width));
  }

  /** Items [from, from + n) clipped to the column: fewer (or none) where it ends. */
  async read(from: number, n: number): Promise<Buffer> {
    const take = Math.max(0, Math.min(n, this.length - from));
    const buf = Buffer.allocUnsafe(take * this.width);
    for (let got = 0; got < buf.length; ) {
      const { bytesRead } = await this.fh.read(buf, got, buf.length - got, from * this.width + got);
      if (bytesRead === 0) throw new Error(`${this.name}: short read at item ${from}`);
      got += bytesRead;
    }
    return buf;
  }

  close(): Promise<void> {
    return this.fh.close();
  }
}

/**
 * The Merkle tree rebuilt leaf by leaf: the right edge (one hash per set bit of the size), every
 * completed subtree of height 8·L handed to tile level L, and the root at the checkpoint's size.
 */
class TreeRebuild {
  private readonly edge: [number, Buffer][] = [];
  private size = 0;
  /** Recomputed hashes of each level not yet compared with the stored ones, from `next[level]`. */
  private readonly pending: Buffer[][] = [];
  private readonly next: number[] = [];
  /** The recomputed hashes of each level's current tile, whose interior is compared once it is full. */
  private readonly tileHashes: Buffer[][] = [];
  rootAtCheckpoint: Buffer | null;
  levelsCompared = new Set<number>();
  hashesCompared = 0;
  interiorsCompared = 0;

  constructor(private readonly checkpointSize: number | null) {
    this.rootAtCheckpoint = checkpointSize === 0 ? EMPTY_ROOT : null;
  }

  add(digest: Buffer): void {
    let h = leafHash(digest);
    this.emit(0, h);
    let height = 0;
    while (this.edge.length && this.edge.at(-1)![0] === height) {
      h = nodeHash(this.edge.pop()![1], h);
      height++;
      if (height % TILE_HEIGHT === 0) this.emit(height / TILE_HEIGHT, h);
    }
    this.edge.push([height, h]);
    if (++this.size === this.checkpointSize) {
      let root: Buffer | null = null;
      for (let i = this.edge.length - 1; i >= 0; i--) root = root ? nodeHash(this.edge[i]![1], root) : this.edge[i]![1];
      this.rootAtCheckpoint = root;
    }
  }

  private emit(level: number, hash: Buffer): void {
    (this.pending[level] ??= []).push(hash);
    this.next[level] ??= 0;
  }

  /** Compares what was recomputed since the last call with the stored levels and tile interiors, as far as they go. */
  async compare(levels: (ColumnReader | null)[], interiors: (ColumnReader | null)[], findings: Findings): Promise<void> {
    for (let level = 0; level < this.pending.length; level++) {
      const hashes = this.pending[level] ?? [];
      const from = this.next[level] ?? 0;
      await this.compareInteriors(level, from, hashes, interiors[level] ?? null, findings);
      const stored = levels[level];
      if (stored && hashes.length) {
        const bytes = await stored.read(from, hashes.length);
        if (bytes.length) this.levelsCompared.add(level);
        for (let k = 0; k * HASH_SIZE < bytes.length; k++) {
          this.hashesCompared++;
          if (bytes.subarray(k * HASH_SIZE, (k + 1) * HASH_SIZE).equals(hashes[k]!)) continue;
          const i = from + k;
          const span = TILE_WIDTH ** level;
          const what = level === 0 ? `the leaf hash of node ${i}` : `the hash of nodes ${i * span}..${(i + 1) * span - 1}`;
          findings.note(i * span, `tlog/tile/${level} hash ${i} (tile ${Math.floor(i / TILE_WIDTH)}) is not ${what}`);
        }
      }
      this.next[level] = from + hashes.length;
      this.pending[level] = [];
    }
  }

  /** The stored interior of every tile of `level` the recomputed hashes from `from` complete. */
  private async compareInteriors(level: number, from: number, hashes: Buffer[], stored: ColumnReader | null, findings: Findings): Promise<void> {
    const current = (this.tileHashes[level] ??= []);
    for (let k = 0; k < hashes.length; k++) {
      current.push(hashes[k]!);
      if (current.length < TILE_WIDTH) continue;
      const tile = (from + k + 1) / TILE_WIDTH - 1;
      const want = tileInterior(Buffer.concat(current));
      current.length = 0;
      const got = stored ? await stored.read(tile * INTERIOR_HASHES, INTERIOR_HASHES) : Buffer.alloc(0);
      // an interior not written yet is derived at the next start; only a stored one can be wrong
      if (got.length < want.length) continue;
      this.interiorsCompared++;
      if (!got.equals(want)) findings.note(tile * TILE_WIDTH ** (level + 1), `tlog/interior/${level} of tile ${tile} is not the interior of tlog/tile/${level} tile ${tile}`);
    }
  }
}

/** keys/<keyid>.pem: every public key that has signed, by the keyid its DER hashes to. */
async function readKeys(dataDir: string): Promise<LogKeys> {
  let names: string[];
  try {
    names = (await readdir(join(dataDir, 'keys'))).filter((f) => f.endsWith('.pem'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  return keysOf(await Promise.all(names.map((f) => readFile(join(dataDir, 'keys', f), 'utf8'))));
}

/** A PEM that is not a public key is left out: the nodes it signed are then reported. */
function keysOf(pems: readonly string[]): LogKeys {
  const keys: LogKeys = {};
  for (const pem of pems) {
    try {
      const der = createPublicKey({ key: pem, format: 'pem' }).export({ type: 'spki', format: 'der' });
      keys[createHash('sha256').update(der).digest('hex')] = new Uint8Array(der);
    } catch {
      // damaged key file
    }
  }
  return keys;
}

interface Checkpoint {
  size: number;
  root: Buffer;
  text: string;
  signatures: { keyId: Uint8Array; signature: Uint8Array }[];
}

/** `<dataDir>/checkpoint`: null when there is none, a string when it cannot be read as one. */
async function readCheckpoint(dataDir: string): Promise<Checkpoint | string | null> {
  let note: string;
  try {
    note = await readFile(join(dataDir, 'checkpoint'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const parsed = parseNote(note);
  const [, sizeText, rootB64, end] = parsed?.text.split('\n') ?? [];
  const size = Number(sizeText);
  if (!parsed || end !== '' || !/^\d+$/.test(sizeText ?? '') || !Number.isSafeInteger(size) || !/^[A-Za-z0-9+/]{43}=$/.test(rootB64 ?? '')) return 'the checkpoint file is not a signed checkpoint note';
  return { size, root: Buffer.from(rootB64!, 'base64'), text: parsed.text, signatures: parsed.signatures };
}

/** The checkpoint's ECDSA line (key id: SHA-256 of the DER SPKI, first 4 bytes) verified with a key under keys/. */
function ecdsaSigned(cp: Checkpoint, keys: LogKeys): boolean {
  return Object.values(keys).some((der) => {
    const id = createHash('sha256').update(der).digest().subarray(0, 4);
    const key = createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
    return cp.signatures.some((s) => {
      try {
        return id.equals(s.keyId) && verify('sha256', Buffer.from(cp.text, 'utf8'), key, s.signature);
      } catch {
        return false; // not a DER signature
      }
    });
  });
}

function checkpointVerdict(cp: Checkpoint | string | null, root: Buffer | null, nodes: number, keys: LogKeys, findings: Findings): FsckReport['checkpoint'] {
  if (cp === null) return null;
  if (typeof cp === 'string') return { size: null, verified: false, reason: cp };
  let reason: string | null = null;
  if (cp.size > nodes) {
    reason = `it signs ${cp.size} nodes, ${nodes} verify in the records`;
    findings.note(nodes, `node ${nodes} is missing: the checkpoint signed ${cp.size} nodes`, true);
  } else if (!root || !root.equals(cp.root)) reason = `its root is not the root of the first ${cp.size} nodes`;
  else if (!ecdsaSigned(cp, keys)) reason = 'its ECDSA signature does not verify with any key under keys/';
  return { size: cp.size, verified: reason === null, reason };
}

function finish(started: number, findings: Findings, nodes: number, signatures: number, tiles: FsckReport['tiles'], checkpoint: FsckReport['checkpoint']): FsckReport {
  const ms = performance.now() - started;
  const firstBad = findings.firstBad;
  return { ok: firstBad === null && (checkpoint === null || checkpoint.verified), nodes, firstBad, tiles, checkpoint, signatures, ms, entriesPerSecond: ms > 0 ? Math.round((nodes * 1000) / ms) : 0 };
}

/** The derived items of nodes [from, from + n) compared with what the records say. */
async function compareDerived(cols: { entries: ColumnReader | null; paes: ColumnReader | null; ends: ColumnReader | null }, nodes: readonly LedgerNode[], ends: readonly number[], findings: Findings): Promise<void> {
  if (!nodes.length) return;
  const from = nodes[0]!.index;
  const entries = (await cols.entries?.read(from, nodes.length)) ?? Buffer.alloc(0);
  for (let k = 0; k * ENTRY_RECORD < entries.length; k++) {
    const rec = entries.subarray(k * ENTRY_RECORD, (k + 1) * ENTRY_RECORD);
    if (rec.readUInt16BE(0) !== HASH_SIZE || !rec.subarray(2).equals(nodes[k]!.nodeDigest)) findings.note(from + k, `tlog/tile/entries record ${from + k} is not the node's digest`);
  }
  const paes = (await cols.paes?.read(from, nodes.length)) ?? Buffer.alloc(0);
  for (let k = 0; k * HASH_SIZE < paes.length; k++) {
    if (!paes.subarray(k * HASH_SIZE, (k + 1) * HASH_SIZE).equals(nodes[k]!.paeSha256)) findings.note(from + k, `tlog/pae item ${from + k} is not the node's pae_sha256`);
  }
  const stored = (await cols.ends?.read(from, nodes.length)) ?? Buffer.alloc(0);
  for (let k = 0; k * 8 < stored.length; k++) {
    if (Number(stored.readBigUInt64BE(k * 8)) !== ends[k]) findings.note(from + k, `tlog/record-ends item ${from + k} is not where the node's line ends (${ends[k]})`);
  }
}

/**
 * Checks a file-mode data directory (khipu.jsonl, keys/, tlog/, checkpoint) without writing to it.
 * Throws NotALedgerError when it holds no khipu.jsonl, and an AbortError when `opts.signal` aborts.
 */
export async function fsckDataDir(dataDir: string, opts: FsckOptions = {}): Promise<FsckReport> {
  const started = performance.now();
  let fh: FileHandle;
  try {
    fh = await open(join(dataDir, LEDGER_FILE), 'r');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new NotALedgerError(`${dataDir} holds no ${LEDGER_FILE}: not a file-mode ledger directory`);
    throw err;
  }
  const readers: ColumnReader[] = [];
  const reader = async (name: string, width: number): Promise<ColumnReader | null> => {
    const r = await ColumnReader.open(dataDir, name, width);
    if (r) readers.push(r);
    return r;
  };
  try {
    const keys = await readKeys(dataDir);
    const cp = await readCheckpoint(dataDir);
    const cols = { entries: await reader('tlog/tile/entries', ENTRY_RECORD), paes: await reader('tlog/pae', HASH_SIZE), ends: await reader('tlog/record-ends', 8) };
    const levels: (ColumnReader | null)[] = [];
    const interiors: (ColumnReader | null)[] = [];
    for (let l = 0; ; l++) {
      const col = await reader(`tlog/tile/${l}`, HASH_SIZE);
      if (!col) break;
      levels.push(col);
      interiors.push(await reader(`tlog/interior/${l}`, HASH_SIZE));
    }
    const findings = new Findings();
    const tree = new TreeRebuild(typeof cp === 'object' && cp ? cp.size : null);
    const sweep = new SignatureSweep(opts.verifySignatures ?? inProcess, keys, opts.inFlight ?? 4, findings);
    const progress = progressReporter(opts.onProgress);
    const fileSize = Math.min((await fh.stat()).size, opts.recordsEnd ?? Infinity);
    // exact when the stored line ends reach the end of the records; else estimated as they are read
    const lastEnd = cols.ends?.length ? Number((await cols.ends.read(cols.ends.length - 1, 1)).readBigUInt64BE(0)) : -1;
    const knownTotal = lastEnd === fileSize || lastEnd === fileSize + 1 ? cols.ends!.length : null;
    let nodes = 0;
    let pos = 0;
    let headerEnd = -1;
    const total = (): number => knownTotal ?? (pos > headerEnd && headerEnd >= 0 ? Math.max(nodes, Math.round((nodes * (fileSize - headerEnd)) / (pos - headerEnd))) : nodes);
    const report = (phase: FsckProgress['phase'], force = false): void => progress({ phase, done: sweep.settled, total: total(), bytes: pos }, force);

    let head: Buffer = ZERO_DIGEST;
    let broken = false;
    let batch: LedgerNode[] = [];
    let batchEnds: number[] = [];
    /** One line of the records (its end offset past its newline); false once the chain is broken. */
    const line = async (text: string, end: number): Promise<boolean> => {
      if (headerEnd < 0) {
        headerEnd = end;
        if (safeSchema(text) !== FILE_SCHEMA) findings.note(0, `line 1 of ${LEDGER_FILE} is not a ${FILE_SCHEMA} header`, true);
        return true;
      }
      const n = parseNodeLine(text, nodes, head);
      if (typeof n === 'string') {
        findings.note(nodes, `line ${nodes + 2} of ${LEDGER_FILE}: ${n}`, true);
        return false;
      }
      head = n.nodeDigest;
      nodes++;
      tree.add(n.nodeDigest);
      batch.push(n);
      batchEnds.push(end);
      await sweep.add(n);
      return true;
    };
    const flush = async (): Promise<void> => {
      await compareDerived(cols, batch, batchEnds, findings);
      await tree.compare(levels, interiors, findings);
      batch = [];
      batchEnds = [];
    };

    const records = new LineReader(fh, 0, fileSize, READ_CHUNK);
    for await (const { text, end } of records.lines()) {
      opts.signal?.throwIfAborted();
      if (!(await line(text, end))) {
        broken = true;
        break;
      }
      pos = records.position;
      if (batch.length >= FLUSH_NODES) {
        await flush();
        report('records');
      }
    }
    await flush();
    pos = records.position;
    const carry = records.rest;
    // a last line without its newline counts when it is a whole node (the store keeps it, its end
    // one past the file); anything less is a torn write that was never acknowledged
    if (!broken && carry.length && safeSchema(carry.toString('utf8')) !== undefined) {
      await line(carry.toString('utf8'), fileSize + 1);
      await flush();
    }
    if (headerEnd < 0) findings.note(0, `${LEDGER_FILE} is empty: it has no header line`, true);
    report('signatures', true);
    await sweep.drain(() => {
      opts.signal?.throwIfAborted();
      report('signatures');
    });
    // a bounded check does not judge a checkpoint signed past its range (the log grew meanwhile)
    const inRange = !(opts.recordsEnd !== undefined && typeof cp === 'object' && cp && cp.size > nodes);
    const checkpoint = inRange ? checkpointVerdict(cp, tree.rootAtCheckpoint, nodes, keys, findings) : null;
    pos = fileSize;
    report('checkpoint', true);
    return finish(started, findings, nodes, sweep.settled, { levels: tree.levelsCompared.size, hashes: tree.hashesCompared, interiors: tree.interiorsCompared }, checkpoint);
  } finally {
    await Promise.all([fh.close(), ...readers.map((r) => r.close())]);
  }
}

/** The `schema` of a JSON object line, null for another JSON object, undefined when it is not one. */
function safeSchema(text: string): unknown {
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' ? ((v as { schema?: unknown }).schema ?? null) : undefined;
  } catch {
    return undefined;
  }
}

/** Checks a postgres-mode ledger (ledger_node rows paged by index, keys from ledger_key) without writing to it. */
export async function fsckPostgres(url: string, opts: FsckOptions = {}): Promise<FsckReport> {
  const started = performance.now();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const keys = keysOf((await client.query<{ spki_pem: string }>('SELECT spki_pem FROM ledger_key')).rows.map((r) => r.spki_pem));
    const stored = Number((await client.query<{ size: string }>('SELECT size FROM ledger_head WHERE id = 0')).rows[0]?.size ?? 0);
    const findings = new Findings();
    const sweep = new SignatureSweep(opts.verifySignatures ?? inProcess, keys, opts.inFlight ?? 4, findings);
    const progress = progressReporter(opts.onProgress);
    let nodes = 0;
    let head: Buffer = ZERO_DIGEST;
    for (let broken = false; !broken; ) {
      opts.signal?.throwIfAborted();
      const { rows } = await client.query<Parameters<typeof rowToNode>[0]>('SELECT idx, prev, digest, pae_sha256, payload, sig, keyid, kind, ts_utc, simulated FROM ledger_node WHERE idx >= $1 ORDER BY idx LIMIT $2', [nodes, PG_PAGE]);
      for (const r of rows) {
        const n = rowToNode(r, nodes, head);
        if (typeof n === 'string') {
          findings.note(nodes, `row ${nodes} of ledger_node: ${n}`, true);
          broken = true;
          break;
        }
        head = n.nodeDigest;
        nodes++;
        await sweep.add(n);
      }
      progress({ phase: 'records', done: sweep.settled, total: Math.max(stored, nodes), bytes: 0 });
      if (rows.length < PG_PAGE) break;
    }
    if (nodes < stored) findings.note(nodes, `ledger_head counts ${stored} nodes, ledger_node holds ${nodes} in a chain`, true);
    await sweep.drain(() => progress({ phase: 'signatures', done: sweep.settled, total: Math.max(stored, nodes), bytes: 0 }));
    progress({ phase: 'checkpoint', done: sweep.settled, total: nodes, bytes: 0 }, true);
    return finish(started, findings, nodes, sweep.settled, { levels: 0, hashes: 0, interiors: 0 }, null);
  } finally {
    await client.end().catch(() => {});
  }
}
