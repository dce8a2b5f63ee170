/**
 * Every public key that has signed into this ledger, by keyid, with the current signing key first.
 * Rotation retires a key without unpublishing it, so every receipt ever issued still verifies
 * offline, and verification and exports pick the key a receipt names.
 */
import { createHash, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { SigningKey } from './keys.js';

export interface PublishedKey {
  keyid: string;
  publicKey: KeyObject;
  spkiPem: string;
  jwk: JsonWebKey;
  current: boolean;
}

export function keyidOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

export class Keyring {
  private readonly keys = new Map<string, PublishedKey>();

  constructor(readonly current: SigningKey) {
    this.keys.set(current.keyid, { keyid: current.keyid, publicKey: current.publicKey, spkiPem: current.spkiPem, jwk: current.jwk, current: true });
  }

  /** Adds a retired key from its SPKI PEM; returns its keyid. */
  add(spkiPem: string): string {
    const publicKey = createPublicKey({ key: spkiPem, format: 'pem' });
    const keyid = keyidOf(publicKey);
    if (!this.keys.has(keyid)) {
      const jwk = publicKey.export({ format: 'jwk' });
      this.keys.set(keyid, { keyid, publicKey, spkiPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, current: false });
    }
    return keyid;
  }

  get(keyid: string): PublishedKey | undefined {
    return this.keys.get(keyid.toLowerCase());
  }

  /** The current key first, then retired ones by keyid. */
  list(): PublishedKey[] {
    const all = [...this.keys.values()];
    return [...all.filter((k) => k.current), ...all.filter((k) => !k.current).sort((a, b) => a.keyid.localeCompare(b.keyid))];
  }
}
