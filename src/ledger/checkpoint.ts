/**
 * Signed checkpoints of the ledger (C2SP tlog-checkpoint as a signed note): origin, size and RFC
 * 6962 root, signed with the ledger's ECDSA P-256 key (type 0x02, in the signing lane) and with an
 * Ed25519 key (type 0x01), which Go's `x/mod/sumdb/note` and other stock verifiers accept.
 *
 * The Ed25519 key is derived from the ledger key (HKDF-SHA256 over its private scalar, with a
 * label of its own), so it is as persistent as that key and the same on every replica that shares
 * the key file, and it changes only when an operator rotates the ledger key (the origin names the
 * key, so a rotation starts a new log identity). A checkpoint is re-signed when the log has grown
 * and `ledger.checkpointIntervalMs` has passed; in file mode each is written durably to
 * `<dataDir>/checkpoint` before it is served, and a ledger found at start not to extend the one
 * written there (a restore from an older backup) gets no checkpoint at all: a log must never sign
 * two inconsistent ones.
 */
import { createPublicKey, hkdfSync, verify, type KeyObject } from 'node:crypto';
import { open, readFile, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { AppError } from '../http/errors.js';
import { API } from '../isomorphic/api.js';
import { checkpointText, ecdsaKeyId, parseNote, ed25519FromSeed, ed25519KeyId, ed25519NoteSignature, ed25519Raw, signedNote, verifierKey, ECDSA_TYPE, ED25519_TYPE } from '../lib/signed-note.js';
import type { SigningKey } from './keys.js';
import type { Ledger } from './ledger.js';
import type { Signer } from './signer.js';
import type { CheckpointStore } from './store/store.js';

const HKDF_SALT = Buffer.from('svc.khipu.checkpoint.ed25519.v1', 'utf8');

/** The checkpoint key, derived from the ledger key: 32 bytes of HKDF-SHA256 as the Ed25519 seed. */
export function checkpointEd25519Key(key: SigningKey): KeyObject {
  const d = Buffer.from(key.privateKey.export({ format: 'jwk' }).d!, 'base64url');
  return ed25519FromSeed(Buffer.from(hkdfSync('sha256', d, HKDF_SALT, Buffer.from(key.keyid, 'hex'), 32)));
}

/** `<host>/khipu/<first 16 hex of the keyid>`: the host of the public base URL, else the service's name. */
export function checkpointOrigin(keyid: string, publicBaseUrl: string | null): string {
  const host = publicBaseUrl ? new URL(publicBaseUrl).host : 'drone-intel-svc';
  return `${host}/khipu/${keyid.slice(0, 16)}`;
}

export interface CheckpointOptions {
  origin: string;
  intervalMs: number;
  /** Where signed checkpoints are persisted before they are served (null: not persisted, memory mode). */
  store: CheckpointStore | null;
  /** Makes everything a checkpoint covers durable (the tiles it names), before it is persisted. */
  beforePersist?: () => Promise<void>;
  log?: { warn(obj: object, msg: string): void };
}

export interface Signed {
  size: number;
  note: string;
}

export class Checkpoints {
  readonly origin: string;
  /** Verifier keys: Ed25519 (sumdb/note) first, then ECDSA (transparency-dev). */
  readonly vkeys: { ed25519: string; ecdsa: string };
  /** Out of reach of reflection: plugins are handed the checkpoints, never this private key. */
  readonly #ed25519: KeyObject;
  private readonly ecdsaKeyId: Buffer;
  private readonly ed25519KeyId: Buffer;
  private timer: NodeJS.Timeout | null = null;
  /** Requests waiting for a checkpoint of at least `size` nodes. */
  private waiters: { size: number; resolve(s: Signed): void }[] = [];
  private latest: Signed | null = null;
  private signedAt = 0;
  /** When `latest` was signed here or read at start (performance.now ms); the start before the first. */
  private heldSince = performance.now();
  private signing: Promise<Signed> | null = null;
  /** Why no checkpoint may be signed (the ledger does not extend the one signed before), or null. */
  private refusal: string | null = null;

  constructor(
    private readonly ledger: Ledger,
    key: SigningKey,
    private readonly signer: Signer,
    private readonly opts: CheckpointOptions,
  ) {
    this.origin = opts.origin;
    this.#ed25519 = checkpointEd25519Key(key);
    const edPub = ed25519Raw(createPublicKey(this.#ed25519));
    const spki = key.publicKey.export({ format: 'der', type: 'spki' });
    this.ecdsaKeyId = ecdsaKeyId(spki);
    this.ed25519KeyId = ed25519KeyId(this.origin, edPub);
    this.vkeys = {
      ed25519: verifierKey(this.origin, this.ed25519KeyId, ED25519_TYPE, edPub),
      ecdsa: verifierKey(this.origin, this.ecdsaKeyId, ECDSA_TYPE, spki),
    };
  }

  /**
   * The size and root of the checkpoint persisted before, when its Ed25519 signature verifies
   * (the start-up anchor: the tiles were durable up to it), of at most `atMost` nodes when given;
   * null when there is none of this origin.
   */
  async anchor(atMost?: number): Promise<{ size: number; root: Buffer } | null> {
    const note = await this.opts.store?.newest(atMost);
    if (!note) return null;
    const parsed = parseNote(note);
    const [origin, sizeText, rootB64] = parsed?.text.split('\n') ?? [];
    if (!parsed || origin !== this.origin) return null;
    const edPub = createPublicKey(this.#ed25519);
    const signed = parsed.signatures.some((sig) => sig.name === this.origin && Buffer.from(sig.keyId).equals(this.ed25519KeyId) && verify(null, Buffer.from(parsed.text, 'utf8'), edPub, sig.signature));
    const size = Number(sizeText);
    if (!signed || !Number.isSafeInteger(size) || size < 0 || !/^[A-Za-z0-9+/]{43}=$/.test(rootB64 ?? '')) return null;
    return { size, root: Buffer.from(rootB64!, 'base64') };
  }

  /** Reads the checkpoint persisted before and checks that the ledger extends it. */
  async load(): Promise<void> {
    // of at most the ledger's size: in postgres mode another replica may have signed past this one's view
    const note = await this.opts.store?.newest(this.ledger.size);
    if (!note) return;
    const [origin, sizeText, rootB64] = note.split('\n');
    // a checkpoint of another origin is another log (the key was rotated): nothing to extend
    if (origin !== this.origin) return;
    const size = Number(sizeText);
    if (!Number.isSafeInteger(size) || size < 0) {
      this.refusal = 'the checkpoint written before cannot be read';
      return;
    }
    if (size > this.ledger.size || this.ledger.root(size).toString('base64') !== rootB64) {
      this.refusal = `the ledger does not extend the checkpoint signed before (size ${size}): it was restored from an older state or altered`;
      return;
    }
    this.latest = { size, note };
    // signed by an earlier process (or another replica) at an unknown time: a newer one is due at once
    this.signedAt = -Infinity;
    this.heldSince = performance.now();
  }

  /**
   * The log grew: a checkpoint covering it is signed within the interval even when nobody asks,
   * so the tail a restart has to check stays bounded by the interval.
   */
  grew(): void {
    if (this.timer || this.refusal) return;
    // the first checkpoint at once; later ones at most once per interval
    const wait = this.latest ? Math.max(0, this.opts.intervalMs - (performance.now() - this.signedAt)) : 0;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.current().then(
        // a timer may fire a hair early, and the log may have grown meanwhile: until it is covered
        () => (this.latest?.size ?? 0) < this.ledger.size && this.grew(),
        (err: unknown) => this.opts.log?.warn({ err: (err as Error).message }, 'checkpoint not signed; retried when the log grows'),
      );
    }, wait);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.refusal ??= 'the service is stopping';
  }

  /** Whether a signed checkpoint covers node `index`, and where its offline proof is fetched. */
  coverage(index: number): { origin: string; newest_size: number | null; covers: boolean; covered_within_ms: number; proof_url: string } {
    const newest = this.latest?.size ?? null;
    const covers = newest !== null && newest > index;
    // the log's growth schedules the covering checkpoint: it is signed within the interval
    return { origin: this.origin, newest_size: newest, covers, covered_within_ms: covers ? 0 : this.opts.intervalMs, proof_url: `${API}/receipt/proof?index=${index}` };
  }

  /** The newest checkpoint signed so far, without signing one (null before the first). */
  get newest(): Signed | null {
    return this.latest;
  }

  /** Ms since the newest checkpoint was signed here, or read at start; before the first, since start. */
  newestAgeMs(now = performance.now()): number {
    return Math.max(0, now - this.heldSince);
  }

  /**
   * The first checkpoint of at least `size` nodes: the newest one when it covers them, else the
   * next one signed (the log's growth schedules it within the interval); 503 past `waitMs`.
   */
  async covering(size: number, waitMs: number): Promise<Signed> {
    await this.current();
    if (this.latest && this.latest.size >= size) return this.latest;
    this.grew();
    return new Promise((resolve, reject) => {
      const waiter = { size, resolve: (s: Signed) => (clearTimeout(timer), resolve(s)) };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new AppError('CAPACITY', 503, `No checkpoint covers ${size} nodes yet; retry shortly`, { 'Retry-After': String(Math.max(1, Math.ceil(this.opts.intervalMs / 1000))) }));
      }, waitMs);
      timer.unref();
      this.waiters.push(waiter);
    });
  }

  /** The newest signed checkpoint, signing one when the log grew and the interval has passed. */
  async current(): Promise<string> {
    if (this.refusal) throw new AppError('CAPACITY', 503, `No checkpoint: ${this.refusal}`, { 'Retry-After': '60' });
    const size = this.ledger.size;
    const fresh = this.latest !== null && (this.latest.size === size || performance.now() - this.signedAt < this.opts.intervalMs);
    if (fresh) return this.latest!.note;
    this.signing ??= this.sign(size).finally(() => (this.signing = null));
    return (await this.signing).note;
  }

  /** `note` when it signs exactly `text`; a stored checkpoint that does not is another history, never served. */
  private same(note: string, text: string): string {
    if (parseNote(note)?.text === text) return note;
    this.refusal = `a checkpoint persisted for size ${text.split('\n')[1]} names another root: the ledger does not extend it`;
    throw new AppError('CAPACITY', 503, `No checkpoint: ${this.refusal}`, { 'Retry-After': '60' });
  }

  private async sign(size: number): Promise<Signed> {
    const text = checkpointText(this.origin, size, this.ledger.root(size));
    const store = this.opts.store;
    let note: string;
    try {
      // another replica may have signed this size already: its checkpoint is served, not a second one
      // (one of another origin was signed under the key before a rotation: another log, not a conflict)
      const stored = await store?.newest(size);
      const [storedOrigin, storedSize] = (stored && parseNote(stored)?.text.split('\n')) || [];
      if (stored && storedOrigin === this.origin && storedSize === String(size)) note = this.same(stored, text);
      else {
        const ecdsa = await this.signer.sign(Buffer.from(text, 'utf8'));
        note = signedNote(text, [ed25519NoteSignature(this.origin, this.#ed25519, text), { name: this.origin, keyId: this.ecdsaKeyId, signature: ecdsa }]);
        // persisted before it is published: a crash never leaves a served checkpoint unrecorded
        if (store) {
          await this.opts.beforePersist?.();
          note = this.same(await store.save(size, note), text);
        }
      }
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('CAPACITY', 503, 'No checkpoint: it could not be written durably, retry later', { 'Retry-After': '5' }, { cause: err });
    }
    const signed = { size, note };
    if (!this.latest || size >= this.latest.size) {
      this.latest = signed;
      this.signedAt = this.heldSince = performance.now();
    }
    const ready = this.waiters.filter((w) => w.size <= size);
    this.waiters = this.waiters.filter((w) => w.size > size);
    for (const w of ready) w.resolve(signed);
    return signed;
  }
}

/** The newest checkpoint in a file of its own (file mode: one writer, the lock holder). */
export class FileCheckpointStore implements CheckpointStore {
  constructor(private readonly file: string) {}

  async newest(): Promise<string | null> {
    try {
      return await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  async save(_size: number, note: string): Promise<string> {
    await writeDurably(this.file, note);
    return note;
  }
}

/** Written to a temporary file, synced, renamed over the old one, and the directory synced. */
async function writeDurably(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, 'w', 0o644);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
  const dir = await open(dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

