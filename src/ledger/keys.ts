/**
 * The ledger signing key: a P-256 PKCS#8 PEM from `ledger.signingKeyFile`, or generated at start
 * (then the limit EPHEMERAL_SIGNING_KEY is reported). keyid = hex SHA-256 of the DER SPKI, which
 * anyone can recompute with `openssl pkey -pubin -outform DER | sha256sum`.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type JsonWebKey, type KeyObject } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync, constants } from 'node:fs';
import { join } from 'node:path';

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyid: string;
  spkiPem: string;
  jwk: JsonWebKey;
  ephemeral: boolean;
  createdAt: string;
}

export class KeyError extends Error {}

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

/** Where the key lives by mode: file mode keeps one in the data directory, created on first start. */
export function resolveSigningKey(cfg: { mode: string; dataDir: string; signingKeyFile: string | null }): SigningKey {
  if (cfg.mode !== 'file' || cfg.signingKeyFile !== null) return loadSigningKey(cfg.signingKeyFile);
  const file = join(cfg.dataDir, 'signing-key.pem');
  const pem = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  mkdirSync(cfg.dataDir, { recursive: true });
  try {
    // O_EXCL: an existing key is never overwritten; 0600: only the service's user reads it
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    writeSync(fd, pem);
    fsyncSync(fd);
    closeSync(fd);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new KeyError(`cannot create signing key file ${file}: ${(err as Error).message}`);
  }
  return loadSigningKey(file);
}
