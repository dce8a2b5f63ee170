/**
 * The ledger signing key: a P-256 PKCS#8 PEM from `ledger.signingKeyFile`, or generated at start
 * (then the limit EPHEMERAL_SIGNING_KEY is reported). keyid = hex SHA-256 of the DER SPKI, which
 * anyone can recompute with `openssl pkey -pubin -outform DER | sha256sum`.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ServiceError } from '../lib/service-error.js';

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyid: string;
  spkiPem: string;
  jwk: JsonWebKey;
  ephemeral: boolean;
  /**
   * When the key was generated, or, for a key read from a file, when this process read it; the
   * ledger then replaces it with the time its store first recorded the key (recordKey), the same on every start.
   */
  createdAt: string;
  /** A key generated on a failing disk: its file is still to be written (saveSigningKey) before it signs into a ledger. */
  unsaved?: { file: string; pem: string; error: Error };
}

export class KeyError extends ServiceError {
  readonly code = 'SVC_KEY_INVALID';
}

function describe(privateKey: KeyObject, ephemeral: boolean): SigningKey {
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new KeyError(`signing key must be EC P-256 (prime256v1), got ${privateKey.asymmetricKeyType}/${privateKey.asymmetricKeyDetails?.namedCurve ?? '-'}`);
  }
  const publicKey = createPublicKey(privateKey);
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const jwk = publicKey.export({ format: 'jwk' });
  return {
    privateKey,
    publicKey,
    keyid: createHash('sha256').update(der).digest('hex'),
    spkiPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    ephemeral,
    createdAt: new Date().toISOString(),
  };
}

export function loadSigningKey(file: string | null): SigningKey {
  if (file === null) return describe(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey, true);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KeyError(`cannot read signing key file ${file}: ${(err as Error).message}`);
  }
  try {
    return describe(createPrivateKey({ key: pem, format: 'pem' }), false);
  } catch (err) {
    if (err instanceof KeyError) throw err;
    throw new KeyError(`signing key file ${file} is not a PKCS#8 PEM private key: ${(err as Error).message}`);
  }
}

/** Errors of the disk itself (full, over quota, failing): start-up degrades on them, as a running store does. */
export function isDiskFault(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'EIO';
}

/**
 * Writes a new file all or nothing: a temporary file beside it, synced, renamed into place and the
 * directory synced, so a crash or a full disk leaves either no file or the whole of it, never an
 * empty key. The caller holds the data directory's lock, so no one else writes there meanwhile.
 */
export function writeFileDurably(file: string, text: string, mode: number): void {
  const tmp = `${file}.tmp`;
  try {
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, mode);
    try {
      const buf = Buffer.from(text, 'utf8');
      for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    const dir = openSync(dirname(file), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Writes a key that resolveSigningKey could not save; throws what the disk said. */
export function saveSigningKey(key: SigningKey): void {
  if (!key.unsaved) return;
  writeFileDurably(key.unsaved.file, key.unsaved.pem, 0o600);
  delete key.unsaved;
}

/**
 * Where the key lives by mode: file mode keeps one in the data directory, created on first start
 * (the data directory's lock is already held). On a full or failing disk the new key is returned
 * unsaved instead of failing the start: the file store saves it before it takes any append.
 */
export function resolveSigningKey(cfg: { mode: string; dataDir: string; signingKeyFile: string | null }): SigningKey {
  if (cfg.mode !== 'file' || cfg.signingKeyFile !== null) return loadSigningKey(cfg.signingKeyFile);
  const file = join(cfg.dataDir, 'signing-key.pem');
  // an empty file is what an interrupted first start of older versions left: it never held a key
  if ((statSync(file, { throwIfNoEntry: false })?.size ?? 0) > 0) return loadSigningKey(file);
  const privateKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  mkdirSync(cfg.dataDir, { recursive: true });
  const key = describe(privateKey, false);
  try {
    writeFileDurably(file, pem, 0o600); // 0600: only the service's user reads it
  } catch (err) {
    if (!isDiskFault(err)) throw new KeyError(`cannot create signing key file ${file}: ${(err as Error).message}`);
    key.unsaved = { file, pem, error: err as Error };
  }
  return key;
}
